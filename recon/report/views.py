"""The report's tables, prepared with pandas from a ``ReportInput``: pure frames in, frames out.

Amounts stay integer minor units here; renderers turn them into text. "Now" is ``run.as_of``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from recon.constants import FAILED_OUTCOMES, SETTLED_OUTCOMES, FlagStatus, Outcome, RunStatus
from recon.money import from_minor
from recon.reconcile.finding import Money
from recon.reconcile.kinds import kind_of, names
from recon.report.actions import exception_actions, payout_actions
from recon.report.fmt import local_times_text, money
from recon.report.model import ACCOUNT, OPEN_STATUSES, ReportInput, once_per_report
from recon.report.morning import failed_tonight

OUTCOME_ORDER: list[str] = [o.value for o in Outcome]
FLAG_ORDER: list[str] = names()  # most urgent first
STATUS_ORDER: list[str] = [s.value for s in FlagStatus]  # the order a person reads them in
# The report's groups of findings, in order: need action, owned, resolved, cleared.
_STATUS_GROUP: dict[str, int] = {
    FlagStatus.NEW: 0,
    FlagStatus.PERSISTING: 0,
    FlagStatus.ACKNOWLEDGED: 1,
    FlagStatus.SNOOZED: 1,
    FlagStatus.RESOLVED: 2,
    FlagStatus.CLEARED: 3,
}
OPEN_OUTCOMES: list[str] = [Outcome.PENDING, Outcome.DELAYED, Outcome.UNCHECKED]
AGE_LABELS: list[str] = ["< 1 d", "1–3 d", "3–7 d", "> 7 d"]
NOT_DUE = "not yet due"
NO_DATE = "no date"
_AGE_EDGES_DAYS = [-np.inf, 1, 3, 7, np.inf]

# Headline metrics: name, label, outcomes counted (amount is the payout amount). Each payout is in
# exactly one of the last four; ``paid_out`` is their total, every payout instructed whatever
# became of it, so it is labelled as such ("Paid out" would count payouts that never left).
HEADLINE: list[tuple[str, str, list[str]]] = [
    ("paid_out", "Instructed (any outcome)", OUTCOME_ORDER),
    ("settled", "Settled", [Outcome.SETTLED, Outcome.RETURNED]),
    ("in_flight", "In flight", [Outcome.PENDING, Outcome.DELAYED]),
    ("failed", "Failed or aborted (never left)", list(FAILED_OUTCOMES)),
    ("unconfirmed", "Unknown or unchecked", [Outcome.UNKNOWN, Outcome.UNCHECKED]),
]

# Kinds of outcome change, in the order a person reads them: the ones that may need a
# look first, each listed; routine ones last, counted. The first matching kind wins.
CHANGE_KINDS: list[tuple[str, str]] = [
    ("into_failed", "Into failed or aborted"),
    ("failed_settled", "Failed → settled"),
    ("delayed", "Delayed"),
    ("returned", "Returned"),
    ("unconfirmed", "Unknown or unchecked"),
    ("other", "Other changes"),
]
ROUTINE = "routine"  # new or pending -> pending or settled: counted per currency, rows in the CSV
_UNCONFIRMED = [Outcome.UNKNOWN, Outcome.UNCHECKED]


@dataclass(frozen=True)
class Counts:
    """The numbers in the email subject and the top line of every report."""

    need_action: int
    new: int
    settled: int
    failed: int
    to_repay: int = 0  # failed or aborted tonight: re-pay or contact the customer


def counts(data: ReportInput) -> Counts:
    """Open exceptions (rows, ``new`` among them), settled payouts, failed or aborted payouts,
    and those failed tonight (:func:`recon.report.morning.failed_tonight`)."""
    status = data.exceptions["status"].astype(object)
    outcome = data.payouts["outcome"].astype(object)
    return Counts(
        need_action=int(status.isin(OPEN_STATUSES).sum()),
        new=int((status == FlagStatus.NEW).sum()),
        settled=int((outcome == Outcome.SETTLED).sum()),
        failed=int(outcome.isin(FAILED_OUTCOMES).sum()),
        to_repay=len(failed_tonight(data)),
    )


# The morning's first line: per currency, the money at stake of what needs action, by how it reads
# (recon.reconcile.finding.Money), with tonight's failed payouts to re-pay beside them.
FAILED_TONIGHT = "failed tonight to re-pay"
STAKE_ORDER: list[str] = [
    Money.PAID_TWICE,
    Money.POSSIBLY_TWICE,
    FAILED_TONIGHT,
    Money.RETURNED,
    Money.OTHER,
]


def money_at_stake(data: ReportInput) -> pd.DataFrame:
    """Per currency (sorted), one column per sum of :data:`STAKE_ORDER` (minor units) and
    ``problems``: the findings that need action in that currency. Findings without an amount
    are counted under an empty currency. The same money on the same payouts counts once in a
    sum, however many findings name it (an amount that differs and a record that changed)."""
    exc = data.exceptions[data.exceptions["status"].astype(object).isin(OPEN_STATUSES)]
    kind = (
        exc["flag"]
        .astype(object)
        .map(lambda f: k.money.value if (k := kind_of(f)) is not None else Money.OTHER.value)
    )
    found = pd.DataFrame(
        {
            "currency": exc["currency"].astype(object).fillna(""),
            "sum": kind.astype(object),
            "amount": _int64(exc["at_stake_minor"]),
            "on": exc["members"].astype(object).fillna(exc["item_id"].astype(object)),
        }
    )
    money = found.drop_duplicates(["currency", "sum", "on", "amount"])
    failed = failed_tonight(data)
    tonight = pd.DataFrame(
        {
            "currency": failed["currency"].astype(object),
            "sum": FAILED_TONIGHT,
            "amount": _int64(failed["amount_minor"]),
        }
    )
    both = pd.concat([money.drop(columns="on"), tonight], ignore_index=True)
    table = both.pivot_table(
        index="currency", columns="sum", values="amount", aggfunc="sum", fill_value=0
    ).reindex(columns=[str(s) for s in STAKE_ORDER], fill_value=0)
    problems = found.groupby("currency").size()
    table["problems"] = problems.reindex(table.index).fillna(0)
    return table.astype(np.int64).reset_index().sort_values("currency", ignore_index=True)


def standing_text(data: ReportInput) -> str:
    """For a report of the findings as they stand now: ``Findings as they stand now: as of run 2;
    3 actions since.`` (empty for a run's own report)."""
    n = data.actions_since
    if n is None:
        return ""
    run = f"as of run {data.run.run_id}" if data.run.run_id is not None else "as of the run"
    since = "no action since" if n == 0 else f"{n:,} action{'' if n == 1 else 's'} since"
    return f"Findings as they stand now: {run}; {since}."


def nights_text(data: ReportInput) -> str:
    """Which accounts' nights the report holds, by label: ``Brand A (run 12, complete); Brand B
    (run 13, incomplete)``."""
    return "; ".join(
        f"{data.label(n.provider_account)} ("
        + (f"run {n.run_id}, " if n.run_id is not None else "")
        + f"{n.status})"
        for n in data.nights
    )


def incomplete_nights(data: ReportInput) -> list[str]:
    """The labels of the accounts whose night did not complete."""
    return [data.label(n.provider_account) for n in data.nights if n.status != RunStatus.COMPLETE]


def problems_text(c: Counts) -> str:
    """``6 problems need action (5 new) · 2 failed to re-pay or contact``: the morning's count,
    the same words in the report, the mail, the workbook and ``recon exceptions list``."""
    noun = "problem needs" if c.need_action == 1 else "problems need"
    return (
        f"{c.need_action:,} {noun} action ({c.new:,} new)"
        f" · {c.to_repay:,} failed to re-pay or contact"
    )


def stake_lines(data: ReportInput) -> list[tuple[str, list[str], int]]:
    """The money at stake as people read it: per currency, the sums that are not zero
    (``2,114.77 paid twice``) and the number of problems; an empty currency for problems without
    an amount."""
    out = []
    for r in money_at_stake(data).to_dict("records"):
        code = str(r["currency"])
        parts = [
            f"{money(int(r[str(name)]), code) if code else r[str(name)]} {name}"
            for name in STAKE_ORDER
            if int(r[str(name)])
        ]
        out.append((code, parts, int(r["problems"])))
    return out


def paid_twice_text(data: ReportInput) -> str:
    """``2,114.77 DKK paid twice`` for the currency paid twice the most ("" when none), and how
    many other currencies were paid twice too."""
    stake = money_at_stake(data)
    twice = stake[stake[str(Money.PAID_TWICE)] > 0]
    if twice.empty:
        return ""
    pairs = zip(twice[str(Money.PAID_TWICE)], twice["currency"], strict=True)
    values = [from_minor(int(m), str(c)) for m, c in pairs]
    at = max(range(len(values)), key=lambda i: values[i])
    code = str(twice["currency"].iloc[at])
    more = len(twice) - 1
    also = f" (and in {more} more currenc{'y' if more == 1 else 'ies'})" if more else ""
    return f"{values[at]:,} {code} paid twice{also}"


def _int64(series: pd.Series) -> pd.Series:
    return series.astype("Int64").fillna(0).astype(np.int64)


def night_payouts(data: ReportInput) -> pd.DataFrame:
    """The payouts the night needs read: those this run changed other than routinely (a new or
    pending payout now pending or settled, which the report counts instead of listing), and every
    open or flagged one; report.xlsx's Payouts sheet by default. payouts.csv holds every payout of
    the reporting window: at 20,000 payouts a day 140,000 rows, whose cells were most of a night's
    report (BENCHMARKS.md, "Fifth round")."""
    p = data.payouts
    changes = data.changes
    routine = change_kind(changes["previous_outcome"], changes["outcome"]) == ROUTINE
    moved = data.keyed(changes, "transaction_id")[~routine.to_numpy(dtype=bool)]
    changed = data.keyed(p, "transaction_id").isin(moved)
    open_ = p["outcome"].astype(object).isin(OPEN_OUTCOMES)
    flagged = (p["exceptions"].astype("string").fillna("") != "") | (
        p["candidate_duplicates"].astype("string").fillna("") != ""
    )
    return p[(changed | open_ | flagged).to_numpy(dtype=bool)]


def returned_on_settled(payouts: pd.DataFrame) -> pd.Series:
    """Each payout's confirmed returns (in its currency) when it is settled or returned, else 0."""
    settled = payouts["outcome"].astype(object).isin(SETTLED_OUTCOMES).to_numpy()
    return _int64(payouts["returned_minor"]).where(settled, 0)


def headline(payouts: pd.DataFrame) -> pd.DataFrame:
    """Per currency: count and amount of each headline metric, returned amount and net.

    ``returned_minor`` counts confirmed returns on settled payouts only (a return on a failed or
    pending payout is an exception, not money back); ``net_minor`` is settled minus those
    returns: the money that stayed with the recipients.
    """
    frame = pd.DataFrame(
        {
            "currency": payouts["currency"].astype(object),
            "outcome": payouts["outcome"].astype(object),
            "amount": _int64(payouts["amount_minor"]),
            "returned": returned_on_settled(payouts),
        }
    )
    columns: dict[str, pd.Series] = {}
    grouped = frame.groupby("currency", sort=True)
    for name, _label, outcomes in HEADLINE:
        hit = frame["outcome"].isin(outcomes)
        columns[f"{name}_count"] = hit.groupby(frame["currency"]).sum()
        columns[f"{name}_minor"] = frame["amount"].where(hit, 0).groupby(frame["currency"]).sum()
    is_returned = frame["outcome"] == Outcome.RETURNED
    columns["returned_count"] = is_returned.groupby(frame["currency"]).sum()
    columns["returned_minor"] = grouped["returned"].sum()
    out = pd.DataFrame(columns).astype(np.int64)
    out["net_minor"] = out["settled_minor"] - out["returned_minor"]
    return out.reset_index(names="currency")


@once_per_report
def payout_summary(data: ReportInput) -> pd.DataFrame:
    """:func:`outcome_summary` of the report's payouts, once per report (summary.csv, the
    workbook's Summary and the HTML show it): not to be changed."""
    return outcome_summary(data.payouts)


def outcome_summary(payouts: pd.DataFrame) -> pd.DataFrame:
    """currency, outcome, count, amount_minor, returned_minor, net_minor: one row per currency
    and outcome present. ``returned_minor`` and ``net_minor`` (amount less returns) are for
    settled and returned payouts; <NA> for outcomes whose money has not reached anyone."""
    frame = pd.DataFrame(
        {
            "currency": payouts["currency"].astype(object),
            "outcome": pd.Categorical(payouts["outcome"].astype(object), categories=OUTCOME_ORDER),
            "amount_minor": _int64(payouts["amount_minor"]),
            "returned_minor": returned_on_settled(payouts),
        }
    )
    out = (
        frame.groupby(["currency", "outcome"], observed=True, sort=True)
        .agg(
            count=("amount_minor", "size"),
            amount_minor=("amount_minor", "sum"),
            returned_minor=("returned_minor", "sum"),
        )
        .reset_index()
    )
    out["outcome"] = out["outcome"].astype(object)
    out = out.astype({"count": np.int64, "amount_minor": np.int64})
    settled = out["outcome"].isin(SETTLED_OUTCOMES)
    out["returned_minor"] = out["returned_minor"].astype("Int64").where(settled)
    out["net_minor"] = (out["amount_minor"] - out["returned_minor"]).astype("Int64")
    return out


@once_per_report
def exceptions_table(data: ReportInput) -> pd.DataFrame:
    """Exceptions in the order to act: those that need action first, then the owned, the resolved
    and the cleared; in each, by urgency (a double payment first: money to recover), then the
    most money at stake, then new before persisting.

    Adds ``action``, ``open`` and the payout's local ``created`` time. Once per report (every
    file shows it): not to be changed.
    """
    exc = data.exceptions.copy()
    item = data.keyed(exc, "item_id")
    created = data.payouts["created"].set_axis(data.keyed(data.payouts, "transaction_id"))
    # Only the payouts an exception names: formatting every payout's time to look up a few
    # thousand cost memory and time (BENCHMARKS.md).
    created = created[created.index.isin(item)]
    created_text = pd.Series(local_times_text(created, data.timezone).tolist(), index=created.index)
    # As object before filling: when no exception names a payout the lookup is all-NaN float.
    exc["created"] = item.map(created_text).astype(object).fillna("")
    exc["until_text"] = local_times_text(exc["until"], data.timezone).tolist()
    exc["age"] = _age_text(exc["opened_at"], data.run.as_of)
    exc["action"] = exception_actions(exc)
    exc["open"] = exc["status"].astype(object).isin(OPEN_STATUSES)
    exc["_status"] = pd.Categorical(exc["status"].astype(object), categories=STATUS_ORDER)
    exc["_flag"] = pd.Categorical(exc["flag"].astype(object), categories=FLAG_ORDER)
    exc["_amount"] = _int64(exc["at_stake_minor"].fillna(exc["amount_minor"]))
    exc["alarm"] = exc["flag"].astype(object).map(alarm).astype(bool)
    exc["_later"] = ~exc["alarm"]
    exc["_group"] = exc["status"].astype(object).map(_STATUS_GROUP).fillna(len(_STATUS_GROUP))
    exc = exc.sort_values(
        ["_group", "_later", "_flag", "_amount", "_status", "item_id"],
        ascending=[True, True, True, False, True, True],
        na_position="last",
        kind="stable",
    )
    dropped = ["_group", "_later", "_status", "_flag", "_amount"]
    return exc.drop(columns=dropped).reset_index(drop=True)


def alarm(flag: object) -> bool:
    """A kind shown first and marked, before every other finding (money paid twice)."""
    kind = kind_of(flag)
    return kind is not None and kind.alarm


def _age_text(opened_at: pd.Series, as_of: datetime) -> list[str]:
    """How long ago recon first saw each exception ("today", "1 day", "12 days"); "" if unknown."""
    days = (pd.Timestamp(as_of) - pd.to_datetime(opened_at, utc=True)).dt.days
    return [
        "" if d != d else "today" if d < 1 else "1 day" if d == 1 else f"{int(d):,} days"
        for d in days.tolist()
    ]


def failed_table(data: ReportInput) -> pd.DataFrame:
    """Failed and aborted payouts with their error code and the provider's recommended action."""
    payouts = data.payouts
    failed = payouts[payouts["outcome"].astype(object).isin(FAILED_OUTCOMES)]
    out = failed.assign(
        action=payout_actions(failed),
        created_text=local_times_text(failed["created"], data.timezone).tolist(),
        _amount=_int64(failed["amount_minor"]),
    )
    out = out.sort_values(["_amount", "transaction_id"], ascending=[False, True], kind="stable")
    return out.drop(columns=["_amount"]).reset_index(drop=True)


def _bucket(days: pd.Series) -> pd.Series:
    cut = pd.cut(days, bins=_AGE_EDGES_DAYS, labels=AGE_LABELS, right=False)
    return cut.astype(object).where(days.notna(), NO_DATE)


def aging(data: ReportInput) -> pd.DataFrame:
    """Open payouts per currency and age bucket: since created, and past their eta.

    Columns: currency, bucket, created_count, created_minor, eta_count, eta_minor.
    """
    payouts = data.payouts
    open_ = payouts[payouts["outcome"].astype(object).isin(OPEN_OUTCOMES)]
    now = pd.Timestamp(data.run.as_of).tz_convert("UTC")
    day = pd.Timedelta(days=1)
    since_created = (now - pd.to_datetime(open_["created"], utc=True)) / day
    past_eta = (now - pd.to_datetime(open_["eta"], utc=True)) / day
    eta_bucket = _bucket(past_eta).where(~(past_eta <= 0), NOT_DUE)
    frame = pd.DataFrame(
        {
            "currency": open_["currency"].astype(object),
            "amount": _int64(open_["amount_minor"]),
            "created_bucket": _bucket(since_created),
            "eta_bucket": eta_bucket,
        }
    )
    order = [NOT_DUE, *AGE_LABELS, NO_DATE]
    parts = []
    for kind in ("created", "eta"):
        grouped = frame.groupby(["currency", f"{kind}_bucket"]).agg(
            **{f"{kind}_count": ("amount", "size"), f"{kind}_minor": ("amount", "sum")}
        )
        parts.append(grouped.rename_axis(["currency", "bucket"]))
    out = pd.concat(parts, axis=1).fillna(0).astype(np.int64).reset_index()
    out["_order"] = out["bucket"].map({b: i for i, b in enumerate(order)})
    out = out.sort_values(["currency", "_order"], kind="stable").drop(columns="_order")
    return out.reset_index(drop=True)


def returns_table(data: ReportInput) -> pd.DataFrame:
    """Returns joined to their original payouts (merchant reference, payout amount and outcome)."""
    originals = data.payouts[
        [ACCOUNT, "transaction_id", "merchant_reference", "amount_minor", "outcome"]
    ]
    originals = originals.rename(
        columns={
            "transaction_id": "original_id",
            "amount_minor": "payout_minor",
            "outcome": "payout_outcome",
        }
    )
    keys = {"original_id": object, ACCOUNT: object}
    rets = data.returns.astype(keys)
    merged = rets.merge(originals.astype(keys), on=[ACCOUNT, "original_id"], how="left")
    return merged.sort_values(["confirmed", "return_id"], ascending=[True, True], kind="stable")


def change_kind(previous: pd.Series, outcome: pd.Series) -> pd.Series:
    """Each change's kind (:data:`CHANGE_KINDS`, or :data:`ROUTINE`); ``previous`` NA is new."""
    before, now = previous.astype(object), outcome.astype(object)
    conditions = [
        now.isin(FAILED_OUTCOMES),
        before.isin(FAILED_OUTCOMES) & (now == Outcome.SETTLED),
        (now == Outcome.DELAYED) | (before == Outcome.DELAYED),
        now == Outcome.RETURNED,
        now.isin(_UNCONFIRMED) | before.isin(_UNCONFIRMED),
        (before.isna() | (before == Outcome.PENDING))
        & now.isin([Outcome.PENDING, Outcome.SETTLED]),
    ]
    choices = [kind for kind, _ in CHANGE_KINDS[:-1]] + [ROUTINE]
    kinds = np.select([c.to_numpy(dtype=bool) for c in conditions], choices, default="other")
    return pd.Series(kinds, index=previous.index, dtype=object)


def routine_changes(changes: pd.DataFrame) -> pd.DataFrame:
    """The routine changes of :func:`changes_table` as previous, outcome, currency, count and
    amount_minor: what the report counts instead of listing."""
    routine = changes[changes["kind"] == ROUTINE]
    frame = pd.DataFrame(
        {
            "previous": routine["previous"],
            "outcome": routine["outcome"].astype(object),
            "currency": routine["currency"].astype(object),
            "amount": _int64(routine["amount_minor"]),
        }
    )
    out = frame.groupby(["previous", "outcome", "currency"], sort=True).agg(
        count=("amount", "size"), amount_minor=("amount", "sum")
    )
    return out.reset_index().astype({"count": np.int64, "amount_minor": np.int64})


def changes_table(data: ReportInput) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The outcome changes since the previous run (with their ``kind``), and how many moved
    between each pair."""
    changes = data.changes.copy()
    changes["kind"] = change_kind(changes["previous_outcome"], changes["outcome"])
    changes["previous"] = changes["previous_outcome"].astype(object).fillna("(new)")
    changes["_amount"] = _int64(changes["amount_minor"])
    changes = changes.sort_values(["_amount", "transaction_id"], ascending=[False, True])
    changes = changes.drop(columns="_amount").reset_index(drop=True)
    # As text: grouping by a categorical would sort in its categories' order, not the names'.
    outcome = changes["outcome"].astype(object)
    moves = (
        changes.groupby([changes["previous"], outcome], sort=True)
        .size()
        .rename("count")
        .reset_index()
        .sort_values("count", ascending=False, kind="stable")
    )
    return changes, moves.reset_index(drop=True)


def totals_over_accounts(totals: pd.DataFrame) -> pd.DataFrame:
    """The totals (per account, period, currency and outcome) added up over the accounts."""
    if totals[ACCOUNT].nunique() <= 1:
        return totals
    keys = ["period", "currency", "outcome"]
    out = totals.astype(dict.fromkeys(keys, object)).groupby(keys, sort=False)
    return out[["payouts", "amount_minor"]].sum().reset_index()


def totals_table(data: ReportInput) -> pd.DataFrame:
    """currency, outcome, window_count, window_minor, month_count, month_minor: the store's totals
    over the reporting window and month to date, one row per currency and outcome in either,
    over every account of the report."""
    totals = totals_over_accounts(data.totals)
    parts = []
    for period in ("window", "month"):
        rows = totals[totals["period"] == period]
        parts.append(
            pd.DataFrame(
                {
                    f"{period}_count": _int64(rows["payouts"]).to_numpy(),
                    f"{period}_minor": _int64(rows["amount_minor"]).to_numpy(),
                },
                index=pd.MultiIndex.from_arrays(
                    [rows["currency"].astype(object), rows["outcome"].astype(object)],
                    names=["currency", "outcome"],
                ),
            )
        )
    joined = parts[0].join(parts[1], how="outer").fillna(0).astype(np.int64).reset_index()
    rank = (
        joined["outcome"]
        .map({o: i for i, o in enumerate(OUTCOME_ORDER)})
        .fillna(len(OUTCOME_ORDER))
    )
    return joined.assign(_rank=rank).sort_values(["currency", "_rank"]).drop(columns="_rank")
