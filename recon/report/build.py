"""Building a :class:`ReportInput`: a night's from its decision in memory, or any stored run's from
the store.

A night reports from its decision (:func:`from_night`; a stored night adds what the decision does
not hold from the store, read after its write); ``recon report``, and a run resumed after its
decision was stored, rebuild the same report from the store alone (:func:`from_store`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import Connection, Engine

from recon.conform import conform
from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.counts import RunCounts
from recon.decision import Decision
from recon.errors import InputError
from recon.frames import (
    Compared,
    Finding,
    ItemKind,
    PayoutsDecided,
    PayoutsIn,
    PayoutsOut,
    ReturnsOut,
    empty,
)
from recon.reconcile.cases import as_they_stand
from recon.reconcile.finding import facts_text
from recon.reconcile.statement import statement
from recon.report.balance import balance_frame
from recon.report.details import details
from recon.report.journal import journal_frame, no_journal
from recon.report.model import (
    DEFAULT_REPORT_DAYS,
    EXCEPTION_COLUMNS,
    EXCEPTION_TIME_COLUMNS,
    REPORT_COLUMNS,
    ReportInput,
    RunInfo,
)
from recon.rollforward_lines import Mark, ordered
from recon.run_frames import Totals
from recon.store.balance import balance_statements
from recon.store.cases import cases_now, people_actions_after
from recon.store.findings import run_exceptions_frame, typed_exceptions
from recon.store.journal_reads import run_journal_batches
from recon.store.report_reads import (
    changes_frame,
    outcome_changes,
    outcome_totals,
    payouts_frame,
    payouts_of_run,
    report_payout_ids,
    run_returns_frame,
)
from recon.store.rollforward_reads import payout_pairs, stored_lines, stored_mark
from recon.store.runs import latest_runs, previous_finished_run, run_record


def assemble(
    info: RunInfo,
    payouts: pd.DataFrame,
    compared: pd.DataFrame,
    returns: pd.DataFrame,
    changes: pd.DataFrame,
    *,
    timezone: str,
    totals: pd.DataFrame | None = None,
    window_days: float = DEFAULT_REPORT_DAYS,
) -> ReportInput:
    """Join what a person needs to act on each exception (amount, reference, error code), and
    put each finding's facts in words."""
    pay = payouts.reindex(columns=list(REPORT_COLUMNS)).reset_index(drop=True)
    exc = compared.astype(
        {
            Finding.ITEM_KIND: "string",
            Finding.FLAG: "string",
            Compared.STATUS: "string",
        }
    ).assign(**{Compared.DETAIL: details(compared, zone=timezone), **_money_and_members(compared)})
    on_payouts = exc[exc[Finding.ITEM_KIND] == ItemKind.PAYOUT].merge(
        pay[["transaction_id", "amount_minor", "currency", "merchant_reference", "error_code"]],
        how="left",
        left_on=Finding.ITEM_ID,
        right_on="transaction_id",
    )
    on_returns = exc[exc[Finding.ITEM_KIND] == ItemKind.RETURN].merge(
        returns[["return_id", "amount_minor", "currency"]],
        how="left",
        left_on=Finding.ITEM_ID,
        right_on="return_id",
    )
    columns = [*EXCEPTION_COLUMNS, "_currency"]
    # Other items (an id the record lacks, a create without an id) have their amount and reference
    # in their facts.
    others = exc[~exc[Finding.ITEM_KIND].isin([ItemKind.PAYOUT, ItemKind.RETURN])]
    others = others.assign(
        amount_minor=others["_amount_minor"],
        currency=others["_currency"],
        merchant_reference=others["_reference"],
    )
    exceptions = pd.concat(
        [
            on_payouts.reindex(columns=columns),
            on_returns.reindex(columns=columns),
            others.reindex(columns=columns),
        ],
        ignore_index=True,
    ).astype(
        {
            c: "Int64" if c in ("amount_minor", "at_stake_minor") else "string"
            for c in columns
            if c not in EXCEPTION_TIME_COLUMNS
        }
    )
    # The money at stake is in the item's currency, or its facts' where the item has none.
    exceptions["currency"] = exceptions["currency"].fillna(exceptions.pop("_currency"))
    for c in EXCEPTION_TIME_COLUMNS:
        exceptions[c] = pd.to_datetime(exceptions[c], utc=True)
    return ReportInput(
        run=info,
        payouts=pay,
        exceptions=exceptions.sort_values(["status", "flag", "item_id"]).reset_index(drop=True),
        returns=returns.reset_index(drop=True),
        changes=changes.reset_index(drop=True),
        timezone=timezone,
        totals=empty(Totals) if totals is None else totals,
        window_days=window_days,
    )


def _money_and_members(compared: pd.DataFrame) -> dict[str, pd.Series]:
    """From each finding's facts: its members (";"-joined), the money at stake, and the item's
    own amount, currency and reference (used where the item is not a payout or a return)."""
    facts = [f if isinstance(f, dict) else {} for f in compared[Finding.FACTS]]
    index = compared.index

    def column(name: str) -> pd.Series:
        return pd.Series([f.get(name) for f in facts], index=index, dtype=object)

    members = [";".join(f.get("members") or []) or None for f in facts]
    return {
        "members": pd.Series(members, index=index, dtype="string"),
        "at_stake_minor": column("at_stake_minor").astype("Int64"),
        "_amount_minor": column("amount_minor").astype("Int64"),
        "_currency": column("currency").astype("string"),
        "_reference": column("merchant_reference").astype("string"),
    }


@dataclass(frozen=True)
class Tonight:
    """What a night's report takes from its decision, kept in memory once the rest is dropped.

    ``payouts``: every payout decided (report columns, typed as the store reads them), ``written``
    per row: the night wrote its history row. ``exceptions``, ``returns``, ``changes``: as the
    store reads them back. ``rollforward``: the night's lines, where they started, and its
    history rows paired.
    """

    payouts: pd.DataFrame
    written: npt.NDArray[np.bool_]
    exceptions: pd.DataFrame
    returns: pd.DataFrame
    changes: pd.DataFrame
    rollforward: tuple[pd.DataFrame, Mark, pd.DataFrame] | None


def tonight(decision: Decision) -> Tonight:
    """The report's part of ``decision``."""
    pay = decision.payouts
    written = pay[PayoutsDecided.RECORD_CHANGED].to_numpy(dtype=bool)
    was = pay[PayoutsIn.PREV_OUTCOME].astype("string")
    now = pay[PayoutsOut.OUTCOME].astype("string")
    moved = written & (was.isna() | (was != now).fillna(False)).to_numpy()
    columns = {c: pay[c] for c in REPORT_COLUMNS if c != "prev_outcome"}
    for flags in ("exceptions", "candidate_duplicates"):  # "" when none, as stored
        columns[flags] = pay[flags].astype("string").fillna("")
    changes = {
        "transaction_id": pay[PayoutsIn.TRANSACTION_ID][moved],
        "previous_outcome": was[moved],
        "outcome": now[moved],
        "amount_minor": pay[PayoutsIn.AMOUNT_MINOR][moved],
        "currency": pay[PayoutsIn.CURRENCY][moved],
    }
    rolled = decision.rollforward
    exc = decision.exceptions
    stored = [facts_text(f) for f in exc[Finding.FACTS]]  # as written, and read back
    exc = exc.assign(**{Finding.FACTS: pd.Series(stored, index=exc.index, dtype=object)})
    # The columns themselves, typed as the store reads them back (not turned into values first).
    return Tonight(
        payouts=payouts_frame([{**columns, "prev_outcome": was}]),
        written=written,
        exceptions=typed_exceptions(exc),
        returns=conform(decision.returns[ReturnsOut.names()], ReturnsOut, name="returns"),
        changes=_sorted(changes_frame([changes])),
        rollforward=(
            (ordered(rolled.lines), rolled.mark, rolled.pairs) if rolled is not None else None
        ),
    )


def from_night(
    info: RunInfo,
    night: Tonight,
    *,
    timezone: str,
    store: Engine | None = None,
    window_days: float = DEFAULT_REPORT_DAYS,
    account: str = DEFAULT_ACCOUNT,
    journal: bool = False,
) -> ReportInput:
    """A night's report of ``account`` from its decision (:func:`tonight`). With ``store`` (a
    night whose decision is written), what the decision does not hold comes from it: the window's
    other payouts, and those the night decided without writing a history row, as the store left
    them; the totals over the window and the month; with ``journal`` (a journal is configured),
    the journal lines the night made. ``recon report`` rebuilds the same from the store alone
    (:func:`from_store`)."""
    payouts, totals = night.payouts, None
    lines = no_journal() if journal else None
    balance = None
    if store is not None and info.run_id is not None:
        with store.connect() as conn:
            if journal:
                lines = _journal(conn, info.run_id, account, standing=False)
            balance = _balance(conn, account, timezone)
            ids, totals = _window(
                conn,
                info.run_id,
                info.as_of,
                night.exceptions,
                night.returns,
                timezone=timezone,
                window_days=window_days,
                account=account,
            )
            mine = night.payouts[night.written]
            others = payouts_of_run(
                conn, info.run_id, ids - set(mine["transaction_id"]), account=account
            )
        # Both are typed as the store reads payouts already: joined as they are.
        payouts = _sorted(payouts_frame([{c: f[c] for c in REPORT_COLUMNS}
                                         for f in (mine, others)]))  # fmt: skip
    data = assemble(
        info,
        payouts,
        night.exceptions,
        night.returns,
        night.changes,
        timezone=timezone,
        totals=totals,
        window_days=window_days,
    )
    data = replace(data, journal=lines, balance=balance)
    if night.rollforward is None:
        return data
    rolled, mark, pairs = night.rollforward
    return replace(
        data,
        rollforward=rolled,
        rollforward_note=_started(mark),
        statement=tuple(statement(rolled, pairs)),
    )


def _journal(conn: Connection, run_id: int, account: str, *, standing: bool) -> pd.DataFrame:
    """The journal lines run ``run_id`` made. A run's own report shows them as the run left
    them, before any export (no batch); ``standing``: as they stand now, each with the batch an
    export sent it in since."""
    lines, batches = run_journal_batches(conn, run_id, account)
    return journal_frame(lines, batches if standing else None)


def _balance(conn: Connection, account: str, timezone: str) -> pd.DataFrame | None:
    """``account``'s balance statements as they stand; None when it has no closing recorded."""
    found, records = balance_statements(conn, ZoneInfo(timezone), account)
    return balance_frame(found) if records else None


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("transaction_id", kind="stable").reset_index(drop=True)


def _window(
    conn: Connection,
    run_id: int,
    as_of: datetime,
    exceptions: pd.DataFrame,
    returns: pd.DataFrame,
    *,
    timezone: str,
    window_days: float,
    account: str,
) -> tuple[set[str], pd.DataFrame]:
    """The payouts run ``run_id``'s report covers (changed by a run of the window, open or
    flagged, named by its exceptions and returns), and its totals over the window and month."""
    window_start = as_of - timedelta(days=window_days)
    ids = report_payout_ids(conn, run_id, window_start, account=account)
    on_payouts = exceptions[Finding.ITEM_KIND] == ItemKind.PAYOUT
    ids.update(exceptions.loc[on_payouts, Finding.ITEM_ID].dropna().astype(str))
    ids.update(returns["original_id"].dropna().astype(str))
    month = month_start(as_of, timezone) - timedelta(microseconds=1)
    totals = pd.concat(
        [
            outcome_totals(conn, run_id, window_start, account=account).assign(period="window"),
            outcome_totals(conn, run_id, month, account=account).assign(period="month"),
        ],
        ignore_index=True,
    )[Totals.names()].astype({"period": "string"})
    return ids, totals


def run_info(
    conn: Connection,
    *,
    run_id: int | None,
    started_at: datetime,
    finished_at: datetime | None,
    as_of: datetime,
    status: RunStatus,
    counts: RunCounts,
    account: str,
) -> RunInfo:
    """The report's account of a run: its times, status and counts, and the account's finished
    night before it."""
    previous = previous_finished_run(conn, run_id, account=account)
    before = run_record(conn, previous) if previous is not None else None
    return RunInfo(
        run_id=run_id,
        started_at=started_at,
        finished_at=finished_at,
        as_of=as_of,
        status=status,
        duration_seconds=(
            (finished_at - started_at).total_seconds() if finished_at is not None else None
        ),
        requests=counts.requests,
        requests_per_second=float(counts.requests_per_second) if counts.requests else None,
        previous_run_id=previous,
        polls=counts.polls,
        polls_saved=counts.polls_saved,
        provider=counts.provider,
        previous_as_of=before.as_of if before is not None else None,
        provider_account=account,
    )


def from_store(
    engine: Engine,
    *,
    timezone: str,
    run_id: int | None = None,
    as_of: datetime | None = None,
    window_days: float = DEFAULT_REPORT_DAYS,
    standing: bool = False,
    account: str = DEFAULT_ACCOUNT,
    journal: bool = False,
) -> ReportInput:
    """The report of a stored run (default: the latest of ``account`` that applied its outcomes;
    a run named is read as its own account's); ``standing``:
    its findings as they stand now, with what people did since (the run's own report, archived,
    shows them as the run left them).

    It covers what the night needs, read by index: the payouts changed by a run of the last
    ``window_days``, open or flagged ones, those its exceptions and returns name; totals over the
    window and month to date (in ``timezone``) from aggregate queries. The whole history is
    ``recon export payouts``. ``journal`` (a journal is configured): the journal lines the run
    made, each with its export batch when ``standing``.
    """
    with engine.connect() as conn:
        if run_id is None:
            run_id = previous_finished_run(conn, None, include_applied=True, account=account)
            if run_id is None:
                raise InputError(
                    "there is no completed run to report on yet: run `recon run`"
                    + ("" if account == DEFAULT_ACCOUNT else f" (account {account})")
                )
        record = run_record(conn, run_id)
        if record is None:
            known = ", ".join(str(r.id) for r in latest_runs(conn, 5, account=None)) or "none"
            raise InputError(f"--run {run_id}: no such run (latest runs: {known})")
        account = record.account
        compared = run_exceptions_frame(conn, run_id)
        since = None
        if standing and record.finished_at is not None:
            compared = as_they_stand(compared, cases_now(conn, compared["exception_id"].dropna()))
            since = people_actions_after(conn, record.finished_at, account=account)
        returns = run_returns_frame(conn, run_id)
        ids, totals = _window(
            conn,
            run_id,
            record.as_of,
            compared,
            returns,
            timezone=timezone,
            window_days=window_days,
            account=account,
        )
        payouts = payouts_of_run(conn, run_id, ids, account=account)
        changes = outcome_changes(conn, run_id)
        lines, mark = stored_lines(conn, run_id), stored_mark(conn, run_id)
        pairs = (
            payout_pairs(conn, mark.previous_run_id or 0, run_id, account=account)
            if mark is not None
            else None
        )
        info = run_info(
            conn,
            run_id=run_id,
            started_at=record.started_at,
            finished_at=record.finished_at,
            as_of=as_of or record.as_of,
            status=record.status,
            counts=record.counts,
            account=account,
        )
        made = _journal(conn, run_id, account, standing=standing) if journal else None
        balance = _balance(conn, account, timezone)
    data = assemble(
        info,
        payouts,
        compared,
        returns,
        changes,
        timezone=timezone,
        totals=totals,
        window_days=window_days,
    )
    return replace(
        data,
        rollforward=lines,
        rollforward_note=_started(mark),
        statement=tuple(statement(lines, pairs)) if pairs is not None else (),
        actions_since=since,
        journal=made,
        balance=balance,
    )


def _started(mark: Mark | None) -> str:
    """What the roll-forward says when it starts tonight (nothing on an ordinary night)."""
    if mark is None or not (mark.started or mark.previous_run_id is None):
        return ""
    if mark.previous_run_id is None:
        return "The roll-forward starts with this run, the store's first: every payout is recorded."
    return (
        f"The roll-forward starts here, from run {mark.previous_run_id}: this store kept no "
        "roll-forward before it, so the previous position is taken from that run's rows "
        "(tonight's position less tonight's movements)."
    )


def month_start(moment: datetime, timezone: str) -> datetime:
    """Midnight of the first day of ``moment``'s month in ``timezone`` (aware)."""
    local = moment.astimezone(ZoneInfo(timezone))
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
