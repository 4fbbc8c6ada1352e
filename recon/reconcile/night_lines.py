"""Tonight's roll-forward lines: the window's rows as read before the decision, and the rows the
decision writes. Pure.

The store reads the rows (:class:`~recon.decision.RollForwardInputs`); the decision writes its
payouts' history rows (each paired with the row before it, as the store pairs stored ones), its
confirmed returns, its cases, each written payout moved out of its old outcome into its new. The
identities, and what a break is, are :mod:`recon.reconcile.rollforward`'s.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon import frames as fr
from recon.constants import LIVE_CASE_STATES, CaseState
from recon.decision import CaseDecision, RollForwardInputs, Window
from recon.frames import Finding, Findings, ItemKind, PayoutsDecided, ReturnsIn, ReturnsJudged
from recon.reconcile.finding import fact_value
from recon.reconcile.rollforward import (
    FEE_SUMS,
    ROLLFORWARD_BREAK,
    Amounts,
    add,
    amounts,
    breaks,
    complete,
    frame_of,
    opening,
    payout_movements,
    remeasured,
    return_movements,
    to_open,
)
from recon.rollforward_lines import FEES, FINDINGS, PAIR_KEYS, RETURNS, Break, Line, Mark, frame
from recon.run_frames import Cases, RecordChanges

_P = PayoutsDecided
_LIVE = frozenset(s.value for s in LIVE_CASE_STATES)


def mark_of(previous: int | None, was: Mark | None, through: int) -> Mark:
    """Where tonight's roll-forward starts: after the previous finished run's mark (``was``), or
    here when that run stored none (``started``; no case action of the past is counted), and
    which case actions it counts: through ``through``, the newest before the decision."""
    started = previous is not None and was is None
    after = was.actions_through if was is not None else through if started else 0
    return Mark(previous, started, after, through)


def movements(window: Window) -> pd.DataFrame:
    """Every line of a window but ``previous`` and ``now``."""
    return pd.concat(
        [
            payout_movements(window.pairs),
            return_movements(window.returns_before, window.returns_after),
            window.findings,
        ],
        ignore_index=True,
    )


def history_pairs(
    payouts: pd.DataFrame, records: pd.DataFrame, record_changes: pd.DataFrame
) -> pd.DataFrame:
    """The history rows the decision writes (``record_changed``), each paired with the payout's
    row before it, as :func:`recon.store.rollforward_reads.payout_pairs` pairs stored ones: that
    row kept the payout's record unless ``records`` names another; ``imported``: a live record
    change of its amount or currency."""
    rows = payouts[payouts[_P.RECORD_CHANGED].to_numpy(dtype=bool)]
    ids = rows[_P.TRANSACTION_ID].astype(str)
    after_currency = rows[_P.CURRENCY].astype("string")
    after_amount = rows[_P.AMOUNT_MINOR].astype("Int64")
    kept = records.drop_duplicates(_P.TRANSACTION_ID).set_index(_P.TRANSACTION_ID)
    # Looked up by reindexing (a hash join): Series.map cost as much with no record to look up.
    before_currency = _by_id(kept[_P.CURRENCY], ids).astype("string")
    before_amount = _by_id(kept[_P.AMOUNT_MINOR], ids).astype("Int64")
    before_currency = before_currency.fillna(after_currency)
    before_amount = before_amount.fillna(after_amount)
    same = (before_currency == after_currency).fillna(False) & (
        before_amount == after_amount
    ).fillna(False)
    changed = record_changes[record_changes[RecordChanges.FIELD].isin(["amount", "currency"])]
    imported = ids.isin(set(changed[RecordChanges.TRANSACTION_ID].astype(str)))
    fee_before = rows[_P.PREV_FEE_MINOR].astype("Int64")
    fee_after = rows[_P.FEE_MINOR].astype("Int64")
    had, has = fee_before.notna(), fee_after.notna()
    pairs = pd.DataFrame(
        {
            "before_currency": before_currency.to_numpy(),
            "before_outcome": rows[_P.PREV_OUTCOME].astype("string").to_numpy(),
            "after_currency": after_currency.to_numpy(),
            "after_outcome": rows[_P.OUTCOME].astype("string").to_numpy(),
            "same": same.astype(int).to_numpy(),
            "imported": imported.astype(int).to_numpy(),
            "before_amount": before_amount.to_numpy(),
            "after_amount": after_amount.to_numpy(),
            "fee_before_count": had.astype(int).to_numpy(),
            "fee_before": fee_before.fillna(0).to_numpy(),
            "fee_new_count": (~had & has).astype(int).to_numpy(),
            "fee_new": fee_after.where(~had, 0).fillna(0).to_numpy(),
            "fee_kept_count": (had & has).astype(int).to_numpy(),
            "fee_kept": fee_after.where(had, 0).fillna(0).to_numpy(),
        }
    )
    # One sum over the columns, not a named aggregation per column (that was most of the cost).
    grouped = pairs.groupby(list(PAIR_KEYS), dropna=False, sort=False)
    sums = grouped[["before_amount", "after_amount", *FEE_SUMS]].sum()
    sums.insert(0, "count", grouped.size())
    return sums.reset_index()


def _by_id(values: pd.Series, ids: pd.Series) -> pd.Series:
    """``values`` (on unique ids) at each of ``ids``, on ``ids``' index (missing where absent)."""
    if values.empty:  # no record kept (most nights): every id is absent, without hashing them
        return pd.Series(pd.NA, index=ids.index, dtype=object)
    return pd.Series(values.reindex(ids.to_numpy()).to_numpy(), index=ids.index)


def confirmed(returns: pd.DataFrame) -> pd.DataFrame:
    """The returns the decision judged confirmed (return_id, currency, amount_minor)."""
    got = returns[returns[ReturnsJudged.CONFIRMED].astype(bool).to_numpy()]
    return got[[ReturnsIn.RETURN_ID, ReturnsJudged.CURRENCY, ReturnsJudged.AMOUNT_MINOR]].rename(
        columns=str
    )


def position(
    payouts_now: pd.DataFrame, payouts: pd.DataFrame, returns: pd.DataFrame
) -> pd.DataFrame:
    """``now`` of the payouts and the confirmed returns once the decision is written: every
    stored payout as read (``payouts_now``), each payout the decision writes moved from the
    outcome it had to its new one."""
    table = amounts(payouts_now)
    written = payouts[payouts[_P.WRITE].to_numpy(dtype=bool)]
    currency = written[_P.CURRENCY].astype("string").str.strip()
    was = written[_P.PREV_OUTCOME].astype("string")
    outcome = written[_P.OUTCOME].astype("string")
    moved = ~((was == outcome).fillna(False) | (was.isna() & outcome.isna())).to_numpy()
    for sign, side in ((-1, was), (1, outcome)):
        keep = moved & side.notna().to_numpy()
        if not keep.any():  # a first night moves nothing out: no groups to add
            continue
        rows = pd.DataFrame(
            {
                "currency": currency[keep],
                "outcome": side[keep],
                "amount": written.loc[keep, _P.AMOUNT_MINOR].astype("Int64"),
            }
        )
        by = rows.groupby(["currency", "outcome"])["amount"]  # size and sum: no named agg's cost
        grouped = pd.DataFrame({"count": by.size(), "amount": by.sum()})
        for (cur, out), count, amount in grouped.itertuples(name=None):
            add(table, (str(cur), str(out), Line.NOW.value), sign * count, sign * int(amount))
    # The fees: each written payout's fee out as it was, in as it is now.
    for sign, column in ((-1, _P.PREV_FEE_MINOR), (1, _P.FEE_MINOR)):
        fees = written[column].astype("Int64")
        held = fees.notna().to_numpy()
        if not held.any():  # most nights charge no fee: no groups to add
            continue
        grouped = (
            pd.DataFrame({"currency": currency[held], "fee": fees[held]})
            .groupby("currency")
            .agg(count=("fee", "size"), fee=("fee", "sum"))
        )
        for cur, count, fee in grouped.itertuples(name=None):
            add(table, (str(cur), FEES, Line.NOW.value), sign * count, sign * int(fee))
    ret: Amounts = {}
    for _rid, cur, amount in confirmed(returns).itertuples(index=False):
        add(ret, (str(cur), RETURNS, Line.NOW.value), 1, 0 if pd.isna(amount) else int(amount))
    return pd.concat([frame_of(table), frame_of(ret)], ignore_index=True)


def finding_lines(
    window: pd.DataFrame, live: pd.DataFrame, cases: CaseDecision, *, started: bool
) -> pd.DataFrame:
    """The findings' lines of tonight: the window's as read (``window``) and the decision's own
    (cases opened, cleared, reopened by the run unless the roll-forward starts here), and
    ``now``: the live cases as read (``live``), as the decision leaves them."""
    state = dict(
        zip(live[Cases.EXCEPTION_ID].astype(str), live[Cases.STATE].astype(str), strict=True)
    )
    standing = sum(1 for s in state.values() if s in _LIVE) + len(cases.opened)
    cleared = 0
    for change in cases.changed:
        before = state.get(str(change["exception_id"]), "")
        after = "" if "ended_run_id" in change else str(change.get("state", before))
        standing += (after in _LIVE) - (before in _LIVE)
        cleared += change.get("state") == CaseState.CLEARED.value
    reopened = 0 if started else sum(_reopens(a) for a in cases.actions)
    own = {
        Line.OPENED: len(cases.opened),
        Line.CLOSED_BY_PEOPLE: 0,  # a run never resolves a case
        Line.CLEARED: cleared,
        Line.REOPENED: reopened,
    }
    table = amounts(window)
    for line, n in own.items():
        add(table, ("", FINDINGS, line.value), n, None)
    table[("", FINDINGS, Line.NOW.value)] = [standing, None]
    return frame_of(table)


def _reopens(action: dict[str, Any]) -> bool:
    return str(action["previous_state"]) == CaseState.RESOLVED and str(action["state"]) in _LIVE


def tonight_pairs(
    inputs: RollForwardInputs, payouts: pd.DataFrame, record_changes: pd.DataFrame
) -> pd.DataFrame:
    """Tonight's history rows paired: the window's as read with those the decision writes."""
    return pd.concat(
        [inputs.tonight.pairs, history_pairs(payouts, inputs.records, record_changes)],
        ignore_index=True,
    )


def measure(
    inputs: RollForwardInputs,
    payouts: pd.DataFrame,
    returns: pd.DataFrame,
    pairs: pd.DataFrame,
) -> pd.DataFrame:
    """Tonight's lines of the payouts and the confirmed returns but ``previous``: the window's rows
    as read (``inputs.tonight``) with the history rows (``pairs``, :func:`tonight_pairs`) and
    returns the decision writes, and the position once it is written."""
    window = inputs.tonight
    after = pd.concat([window.returns_after, confirmed(returns)], ignore_index=True)
    return pd.concat(
        [
            payout_movements(pairs),
            return_movements(window.returns_before, after),
            position(inputs.payouts_now, payouts, returns),
        ],
        ignore_index=True,
    )


def tonight(
    inputs: RollForwardInputs, measured: pd.DataFrame, findings: pd.DataFrame
) -> pd.DataFrame:
    """Tonight's lines: ``previous`` (the previous run's ``now``, or :func:`opening`), the
    payouts' and returns' (``measured``), and the findings'."""
    mark, rest = inputs.mark, pd.concat([measured, findings], ignore_index=True)
    if mark.previous_run_id is None:
        previous = frame([])
    elif mark.started:
        previous = opening(rest)
    else:
        was = inputs.previous
        previous = was[was["line"] == Line.NOW.value].assign(line=Line.PREVIOUS.value)
    return complete(pd.concat([previous, rest], ignore_index=True))


def found(inputs: RollForwardInputs, lines: pd.DataFrame) -> list[Break]:
    """Every line of tonight that does not close, then every line of the previous run that its
    rows, measured again, no longer give."""
    got = breaks(lines)
    previous = inputs.mark.previous_run_id
    if previous is not None and inputs.again is not None:
        got += remeasured(inputs.previous, movements(inputs.again), run_id=previous)
    return got


def break_findings(found: list[Break], live: pd.DataFrame) -> pd.DataFrame:
    """The breaks to follow as findings (:class:`recon.frames.Findings`), in the order found: those
    whose item has no case that stands (one that stands is reported as it stands, until a person
    resolves it)."""
    kind = live[Cases.ITEM_KIND].astype(str) == ItemKind.ROLLFORWARD.value
    standing = live[kind & live[Cases.STATE].astype(str).isin(_LIVE).to_numpy()]
    fresh = to_open(found, frozenset(standing[Cases.ITEM_ID].astype(str)))
    if not fresh:
        return fr.empty(fr.Findings)
    return pd.DataFrame(
        {
            Finding.ITEM_ID: [b.item_id for b in fresh],
            Finding.ITEM_KIND: ItemKind.ROLLFORWARD.value,
            Finding.FLAG: ROLLFORWARD_BREAK.name,
            Finding.FACTS: pd.Series([fact_value(b.facts()) for b in fresh], dtype=object),
            Findings.KNOWN: True,
        }
    ).astype(fr.Findings.dtypes())
