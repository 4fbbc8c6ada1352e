"""The decision of a run: plain data in, a :class:`~recon.decision.Decision` out. Pure.

No database, network, clock or files: "now" is ``as_of``. Every rule of the run lives in this
package: outcomes and flags (:mod:`.outcomes`), which returns are known and which answer speaks
for them (:mod:`.returns`), what changed and who ever failed (:mod:`.record`), and
each finding's case: opened, kept, cleared by the facts, where people left it (:mod:`.cases`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.constants import ANSWERED, FlagStatus
from recon.decision import CaseDecision, Decision, RollForward, RollForwardInputs, RunInputs
from recon.frames import (
    Compared,
    Finding,
    Findings,
    ItemKind,
    Observations,
    PayoutsDecided,
    PayoutsIn,
    PayoutsOut,
    ReturnsIn,
)
from recon.reconcile import night_lines as rf
from recon.reconcile.balance import night_balance
from recon.reconcile.cases import follow_cases
from recon.reconcile.changes import follow_changes
from recon.reconcile.classify import ClassifyParams, classify
from recon.reconcile.double_payments import paid_by_the_provider_too
from recon.reconcile.finding import fact_value, one_per_item
from recon.reconcile.kinds import kind_of
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.problems import absorb, with_members_and_stake
from recon.reconcile.record import with_record
from recon.reconcile.return_polls import known_returns, quiet_claims
from recon.reconcile.rollforward import ROLLFORWARD_BREAK
from recon.reconcile.unreadable import unreadable
from recon.reconcile.unrecorded import provider_side
from recon.reconcile.watch import WatchParams
from recon.run_frames import CaseReport, Cases, FailureCallbacks


def latest_answers(answers: pd.DataFrame) -> pd.DataFrame:
    """The classifier's ``observations``: the latest of this run's answers per id."""
    latest = answers.drop_duplicates(Observations.TRANSACTION_ID, keep="last").sort_values(
        Observations.TRANSACTION_ID, kind="stable"
    )
    frame = latest.rename(columns={"amount": Observations.AMOUNT_TEXT})
    return conform(frame, fr.Observations, name="observations").reset_index(drop=True)


def _this_runs_payouts(inputs: RunInputs) -> pd.DataFrame:
    """Every stored payout with ``polled`` and the failure callback (its state and time) set, less
    those imported while the run polled.

    Every payout never reconciled is polled, so one that is neither reconciled nor among the ids
    the run set out to poll arrived after they were chosen: it waits for the next run (otherwise
    it would be "polled" with no answer, and flagged as a fetch failure).
    """
    pay = inputs.payouts
    polled = pay[PayoutsIn.TRANSACTION_ID].isin(list(inputs.poll_ids))
    arrived = pay[PayoutsIn.PREV_OUTCOME].isna() & ~polled
    callbacks = inputs.failure_callbacks.set_index(FailureCallbacks.TRANSACTION_ID)
    ids = pay[PayoutsIn.TRANSACTION_ID].to_numpy()

    def said(column: str, dtype: Any) -> pd.Series:
        return pd.Series(callbacks[column].reindex(ids).array, index=pay.index).astype(dtype)

    return pay.assign(
        **fr.columns(
            {
                PayoutsIn.POLLED: polled,
                PayoutsIn.CALLBACK_FAILED_STATE: said(FailureCallbacks.STATE, fr.INT),
                PayoutsIn.CALLBACK_FAILED_AT: said(FailureCallbacks.RECEIVED_AT, fr.TIME),
            }
        )
    )[~arrived.to_numpy()]


def with_payout_facts(
    found: pd.DataFrame, payouts: pd.DataFrame, answered: pd.Series
) -> pd.DataFrame:
    """Findings on payouts made beside the classifier (a record changed): the payout's own facts
    its kind compares on (state, returned amount), and its amount, join theirs, and they count
    only when the payout was answered tonight."""
    on_payout = (found[Finding.ITEM_KIND].astype(str) == ItemKind.PAYOUT).to_numpy()
    if not on_payout.any():
        return found
    own = payouts.set_index(PayoutsIn.TRANSACTION_ID)
    was_answered = pd.Series(answered.to_numpy(dtype=bool), index=own.index)
    facts: list[Any] = found[Finding.FACTS].tolist()
    known = found[Findings.KNOWN].to_numpy(dtype=bool).copy()
    items, flags = found[Finding.ITEM_ID].tolist(), found[Finding.FLAG].tolist()
    for i in np.flatnonzero(on_payout).tolist():
        kind = kind_of(flags[i])
        wanted = [c for c in PAYOUT_FACTS if kind is not None and c in kind.same_when]
        wanted += ["amount_minor", "currency"]
        extra = {c: fact_value(own[str(c)].get(str(items[i]))) for c in wanted}
        facts[i] = {**(facts[i] or {}), **extra}
        known[i] = bool(was_answered.get(str(items[i]), False))
    facts_column = pd.Series(facts, index=found.index, dtype=object)
    return found.assign(**fr.columns({Finding.FACTS: facts_column, Findings.KNOWN: known}))


def _answered(payouts: pd.DataFrame, latest: pd.DataFrame) -> pd.Series:
    """Per payout: this run has an answer about it (ok, not found, or a session's id)."""
    got = latest.loc[latest[Observations.STATUS].isin(list(ANSWERED)), Observations.TRANSACTION_ID]
    return payouts[PayoutsIn.TRANSACTION_ID].isin(got)


def decide(
    inputs: RunInputs, *, as_of: datetime, params: ClassifyParams, watch: WatchParams
) -> Decision:
    """Classify every payout, link every return, follow every finding's case."""
    latest = latest_answers(inputs.answers)
    payouts = _this_runs_payouts(inputs)
    # Claims no answer confirms whose notification an earlier run already saw are not judged
    # again (recon asks about them on the schedule): their cases stand until a person closes them.
    quiet = quiet_claims(inputs.returns, inputs.answers)
    returns = known_returns(inputs.returns, inputs.answers, latest, quiet)
    now = pd.Timestamp(as_of)
    classified = classify(payouts, latest, returns, as_of=now, params=params)
    got = latest.loc[latest[Observations.STATUS].isin(list(ANSWERED)), Observations.TRANSACTION_ID]
    got_ids = frozenset(got.astype(str).tolist())  # the ids and sets of ids below, made once
    payout_ids = classified.payouts[PayoutsIn.TRANSACTION_ID].astype(str).tolist()
    changes = follow_changes(inputs.record_changes, frozenset(payout_ids), got_ids, inputs.cases)
    answered = _answered(classified.payouts, latest)
    found = pd.concat(
        [
            classified.exceptions,
            unreadable(inputs.unreadable_notifications),
            with_payout_facts(changes.exceptions, classified.payouts, answered),
            *([] if inputs.export_findings is None else [inputs.export_findings]),
        ],
        ignore_index=True,
    ).astype(fr.Findings.dtypes())
    payout, ret = ItemKind.PAYOUT.value, ItemKind.RETURN.value  # an enum's value read once
    judged = frozenset(
        [(payout, i) for i in payout_ids]
        + [(ret, str(i)) for i in classified.returns[ReturnsIn.RETURN_ID].tolist()]
    )
    side = None
    if inputs.provider is not None:  # ids the provider named that the record lacks
        side, on_side, judged_side = provider_side(
            inputs.provider, latest, run_id=inputs.run_id, as_of=as_of
        )
        again = paid_by_the_provider_too(side.items, inputs.provider.recorded, classified.payouts)
        found = pd.concat([found, on_side, again], ignore_index=True).astype(fr.Findings.dtypes())
        judged |= judged_side
    kinds = inputs.cases[Cases.ITEM_KIND].astype(str)
    balance = ItemKind.BALANCE.value
    breaks, stated = night_balance(
        inputs.balance, inputs.cases.loc[(kinds == balance).to_numpy(), Cases.ITEM_ID].astype(str)
    )
    if not breaks.empty:
        found = pd.concat([found, breaks], ignore_index=True).astype(fr.Findings.dtypes())
    judged |= {(balance, i) for i in stated}
    rolled = (kinds == ItemKind.ROLLFORWARD.value).to_numpy()
    cases = follow_cases(
        absorb(with_members_and_stake(one_per_item(found))),
        inputs.cases[~rolled],
        judged=judged,
        exported=inputs.export_seen,
        answered=got_ids,
        unanswered=frozenset(latest[Observations.TRANSACTION_ID].astype(str).tolist()) - got_ids,
        run_id=inputs.run_id,
        as_of=as_of,
    )
    decided = with_standing_flags(classified.payouts, cases.exceptions)
    outcomes = Counter(inputs.other_outcomes)
    counted = decided[PayoutsOut.OUTCOME].astype(str).value_counts()
    outcomes.update({str(k): int(v) for k, v in counted.items()})
    flags = {str(k): int(v) for k, v in found[Finding.FLAG].astype(str).value_counts().items()}
    recorded = with_record(decided, payouts, answered, as_of=now, watch=watch)
    # The record each run saw is kept with its history row while a change stands unanswered.
    snapshot = recorded[PayoutsIn.TRANSACTION_ID].astype(str).isin(changes.snapshot).to_numpy()
    recorded = recorded.assign(
        **fr.columns(
            {
                PayoutsDecided.RECORD_CHANGED: recorded[PayoutsDecided.RECORD_CHANGED].to_numpy()
                | snapshot,
                PayoutsDecided.WRITE: recorded[PayoutsDecided.WRITE].to_numpy() | snapshot,
            }
        )
    )
    cases, rollforward = _roll_forward(
        inputs, recorded, classified.returns, cases, inputs.cases[rolled], as_of=as_of
    )
    if rollforward is not None and rollforward.breaks:
        flags[ROLLFORWARD_BREAK.name] = len(rollforward.breaks)
    return Decision(
        payouts=recorded,
        exceptions=cases.exceptions,
        cases=cases,
        returns=classified.returns,
        previous_run_id=inputs.previous_run_id,
        outcomes={str(k): int(v) for k, v in outcomes.items()},
        flags=flags,
        changes_answered=changes.answered,
        changes_closed=changes.closed,
        provider=side,
        rollforward=rollforward,
    )


def _roll_forward(
    inputs: RunInputs,
    payouts: pd.DataFrame,
    returns: pd.DataFrame,
    cases: CaseDecision,
    standing: pd.DataFrame,
    *,
    as_of: datetime,
) -> tuple[CaseDecision, RollForward | None]:
    """Tonight's roll-forward (the store's rows as read and the rows this decision writes), and
    the cases of its items: every break found opens one, numbered after the night's, unless
    one stands (``standing``: the live cases of its items, followed here).

    The night's cases come first: the roll-forward counts the payouts' history rows, and whether
    a payout gets one depends on its findings' cases."""
    read, found, measured, pairs = inputs.rollforward, [], pd.DataFrame(), pd.DataFrame()
    lines = pd.DataFrame()
    if read is not None:
        pairs = rf.tonight_pairs(read, payouts, inputs.record_changes)
        measured = rf.measure(read, payouts, returns, pairs)
        lines = _lines(read, inputs.cases, cases, measured)
        found = rf.found(read, lines)
    if read is None and standing.empty:
        return cases, None
    fresh = rf.break_findings(found, standing)
    opened = 0
    if not (fresh.empty and standing.empty):  # a break, or a case of one, to follow
        more = follow_cases(
            fresh,
            standing,
            judged=frozenset(),
            answered=frozenset(),
            run_id=inputs.run_id,
            as_of=as_of,
        )
        cases = _joined(cases, _numbered(more, fresh, inputs.run_id, after=len(cases.opened)))
        opened = len(more.opened)
        if read is not None:  # the breaks moved cases: the findings' lines count them
            lines = _lines(read, inputs.cases, cases, measured)
    if read is None:
        return cases, None
    return cases, RollForward(lines, read.mark, pairs, tuple(found), opened=opened)


def _lines(
    read: RollForwardInputs, live: pd.DataFrame, cases: CaseDecision, measured: pd.DataFrame
) -> pd.DataFrame:
    """Tonight's roll-forward lines, the findings' as ``cases`` leave the ``live`` cases read."""
    findings = rf.finding_lines(read.tonight.findings, live, cases, started=read.mark.started)
    return rf.tonight(read, measured, findings)


def _numbered(
    cases: CaseDecision, found: pd.DataFrame, run_id: int | None, *, after: int
) -> CaseDecision:
    """``cases`` with the cases they open named after the night's ``after``, in the order of
    ``found`` (``follow_cases`` names a run's cases from 1, by item)."""
    if run_id is None or not cases.opened:
        return cases
    opening = {str(c[Finding.ITEM_ID]) for c in cases.opened}
    order = [i for i in found[Finding.ITEM_ID].astype(str) if i in opening]
    names = {item: f"E{run_id}-{after + n}" for n, item in enumerate(order, start=1)}
    renamed = {str(c["exception_id"]): names[str(c[Finding.ITEM_ID])] for c in cases.opened}
    ids = cases.exceptions[CaseReport.EXCEPTION_ID]
    named = pd.Series([renamed.get(str(e), e) for e in ids], index=ids.index).astype(ids.dtype)
    return replace(
        cases,
        exceptions=cases.exceptions.assign(exception_id=named),
        opened=[{**c, "exception_id": renamed[str(c["exception_id"])]} for c in cases.opened],
    )


def _joined(night: CaseDecision, more: CaseDecision) -> CaseDecision:
    """Two case decisions of one run as one (their items apart; ``more``'s sort after)."""
    if more.exceptions.empty and not (more.opened or more.changed or more.actions):
        return night
    exceptions = (
        pd.concat([night.exceptions, more.exceptions], ignore_index=True)
        if not night.exceptions.empty
        else more.exceptions
    )
    return CaseDecision(
        exceptions=exceptions,
        opened=[*night.opened, *more.opened],
        changed=[*night.changed, *more.changed],
        actions=[*night.actions, *more.actions],
    )


# Report statuses of a finding that still stands after the run.
_STANDING = frozenset(
    {FlagStatus.NEW, FlagStatus.PERSISTING, FlagStatus.ACKNOWLEDGED, FlagStatus.SNOOZED}
)


def with_standing_flags(payouts: pd.DataFrame, exceptions: pd.DataFrame) -> pd.DataFrame:
    """The payouts' ``exceptions`` cell from their cases: every finding on a payout that still
    stands, sorted: found tonight (whatever a person made of it: a resolved finding stays in the
    cell, so it is carried while the payout is not fetched and stays resolved), and open ones the
    run did not judge (such as a fetch that failed again)."""
    on_payout = exceptions[
        (exceptions[Finding.ITEM_KIND].astype(str) == ItemKind.PAYOUT.value)
        & exceptions[Compared.STATUS].astype(str).isin([str(s) for s in _STANDING])
    ]
    if on_payout.empty:
        return payouts
    standing: dict[str, set[str]] = {}
    for item, flag in zip(on_payout[Finding.ITEM_ID], on_payout[Finding.FLAG], strict=True):
        standing.setdefault(str(item), set()).add(str(flag))
    ids = payouts[PayoutsIn.TRANSACTION_ID].astype(str)
    rows = ids.isin(list(standing)).to_numpy()
    cells = payouts[PayoutsOut.EXCEPTIONS].astype(fr.TEXT).fillna("").copy()
    cells[rows] = pd.array(
        [
            ";".join(sorted({*filter(None, str(cell).split(";")), *standing[i]}))
            for i, cell in zip(ids[rows], cells[rows], strict=True)
        ],
        dtype=fr.TEXT,
    )
    return payouts.assign(**fr.columns({PayoutsOut.EXCEPTIONS: cells}))
