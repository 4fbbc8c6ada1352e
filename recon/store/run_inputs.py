"""What a run decides from, read from the store: payouts, what is known of returns, the last run.

Reads only: which answers count as evidence, what changed and what is a duplicate are decided in
:mod:`recon.reconcile` (the pure core), never here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import pandas as pd
from sqlalchemy import ColumnElement, Connection, and_, func, or_, select

from recon import frames as fr
from recon.constants import NotificationKind, ObsStatus, TxType
from recon.decision import (
    EARLIER_ANSWER_COLUMNS,
    KnownReturns,
    PayoutScope,
    RelatedReads,
    RunInputs,
    empty_record_changes,
    empty_watched,
)
from recon.frames import ItemKind, PayoutCol
from recon.store._batch import ROWS_PER_STATEMENT, chunks, one_of
from recon.store.cases import live_cases
from recon.store.notifications import unparsed_notifications
from recon.store.runs import previous_finished_run, run_record
from recon.store.tables import (
    notifications,
    observations,
    payouts,
    record_changes,
    run_returns,
    runs,
)
from recon.store.typed_read import column_parts, frame_of, typed_frame

_P = PayoutCol

# Every payout is read a part at a time, each column typed as its part arrives (typed_read), not
# as one frame of Python objects first: at 732,000 stored payouts that frame was the largest
# cost of a night and most of its peak memory (bench/findings.md, "Steady state").
_PAIRS_PER_QUERY = 100
_PAYOUT_READ_DTYPES: dict[str, str] = {
    _P.TRANSACTION_ID: "string",
    _P.MERCHANT_REFERENCE: "string",
    _P.AMOUNT_MINOR: "Int64",
    _P.CURRENCY: "string",
    _P.BANK_ACCOUNT_ID: "string",
    _P.CUSTOMER_ID: "string",
    _P.CREATED: "utc",
    _P.ETA: "utc",
    _P.PREV_OUTCOME: "category",
    _P.PREV_STATE: "Int64",
    _P.PREV_ERROR_CODE: "string",
    _P.PREV_OUTCOME_SINCE: "utc",
    _P.PREV_EXCEPTIONS: "string",
    _P.PREV_RETURNED_MINOR: "Int64",
    _P.PREV_CANDIDATE_DUPLICATES: "string",
    _P.PREV_NEXT_CHECK_AT: "utc",
    _P.EVER_FAILED: "boolean",
    _P.SETTLED_SINCE: "utc",
}


def _payout_columns() -> list[Any]:
    p = payouts.c
    return [
        p.transaction_id,
        p.merchant_reference,
        p.amount_minor,
        p.currency,
        p.bank_account_id,
        p.customer_id,
        p.created,
        p.eta,
        p.outcome.label(_P.PREV_OUTCOME),
        p.state.label(_P.PREV_STATE),
        p.error_code.label(_P.PREV_ERROR_CODE),
        p.outcome_since.label(_P.PREV_OUTCOME_SINCE),
        p.exceptions.label(_P.PREV_EXCEPTIONS),
        p.returned_minor.label(_P.PREV_RETURNED_MINOR),
        p.candidate_duplicates.label(_P.PREV_CANDIDATE_DUPLICATES),
        p.next_check_at.label(_P.PREV_NEXT_CHECK_AT),
        p.ever_failed,
        p.settled_since,
    ]


def _read(conn: Connection, conditions: Iterable[ColumnElement[bool]]) -> Iterator[pd.DataFrame]:
    """The payouts meeting each condition in turn, each as a typed frame."""
    columns = _payout_columns()
    for condition in conditions:
        query = select(*columns).where(condition)
        yield typed_frame(column_parts(conn, query), _PAYOUT_READ_DTYPES)


def _in_scope(conn: Connection, scope: PayoutScope) -> Iterator[ColumnElement[bool]]:
    p = payouts.c
    ids = sorted(scope.ids)
    for part in chunks(ids, ROWS_PER_STATEMENT):
        yield one_of(conn, p.transaction_id, part)
    # Flagged payouts (an index on each column; '' is "none").
    yield p.exceptions > ""
    yield p.candidate_duplicates > ""
    # Watched outcomes never scheduled (an upgraded store), each group inside its own window, by
    # the (outcome, next_check_at, outcome_since) index: two ranges each, no OR to defeat it.
    for outcomes, since in scope.unscheduled:
        for seen in (p.outcome_since.is_(None), p.outcome_since >= since):
            yield and_(p.outcome.in_(sorted(outcomes)), p.next_check_at.is_(None), seen)


def _ranges(reads: RelatedReads) -> Iterator[ColumnElement[bool]]:
    """Payouts of each party range, by the (party, amount_minor, created) index: ORs of ranges,
    then those without a ``created`` where a range asks for them, as two reads so that no OR
    inside a term defeats the index."""
    p = payouts.c
    columns = {_P.BANK_ACCOUNT_ID: p.bank_account_id, _P.CUSTOMER_ID: p.customer_id}
    for part in chunks(list(reads.ranges), _PAIRS_PER_QUERY):
        terms = []
        for r in part:
            column = columns[_P(r.party)]
            term = and_(column == r.who, p.amount_minor == r.amount_minor)
            if r.since is not None:
                term = and_(term, p.created >= r.since)
            if r.until is not None:
                term = and_(term, p.created <= r.until)
            terms.append(term)
        yield or_(*terms)
        undated = [
            and_(columns[_P(r.party)] == r.who, p.amount_minor == r.amount_minor,
                 p.created.is_(None))
            for r in part
            if r.undated and (r.since is not None or r.until is not None)
        ]  # fmt: skip
        if undated:
            yield or_(*undated)


def _references(conn: Connection, reads: RelatedReads) -> Iterator[ColumnElement[bool]]:
    """Payouts of each merchant_reference, by its index."""
    for part in chunks(sorted(reads.references), ROWS_PER_STATEMENT):
        yield one_of(conn, payouts.c.merchant_reference, part)


def load_payouts(conn: Connection, scope: PayoutScope) -> pd.DataFrame:
    """The payouts a run decides (``scope``) with their previous reconciled state (``payouts``
    without ``polled``), by id; :func:`load_related` adds those the core names for them.

    Which payouts those are is the core's rule (:mod:`recon.reconcile.scope`); every read here is
    by index, so a night reads what it decides, not every payout ever stored.
    """
    return _conformed(_combined(list(_read(conn, _in_scope(conn, scope)))))


def load_related(conn: Connection, have: pd.DataFrame, reads: RelatedReads) -> pd.DataFrame:
    """``have`` with the payouts ``reads`` names (by merchant_reference, by party ranges)."""
    more = _read(conn, itertools.chain(_references(conn, reads), _ranges(reads)))
    return _conformed(_combined([have, *more]))


def _conformed(frame: pd.DataFrame) -> pd.DataFrame:
    # ``polled`` and ``callback_failed`` are the run's to add (decide.py), not the store's.
    schema = {k: v for k, v in fr.PAYOUTS_IN.items() if k not in (_P.POLLED, _P.CALLBACK_FAILED)}
    return fr.conform(frame, schema, name="payouts")


def with_related(conn: Connection, inputs: RunInputs, reads: RelatedReads) -> RunInputs:
    """``inputs`` with the payouts ``reads`` names added (and no longer counted as others)."""
    frame = load_related(conn, inputs.payouts, reads)
    added = frame[~frame[_P.TRANSACTION_ID].isin(inputs.payouts[_P.TRANSACTION_ID])]
    others = Counter(inputs.other_outcomes)
    counted = added[_P.PREV_OUTCOME].astype("string").dropna().value_counts()
    others.subtract({str(k): int(v) for k, v in counted.items()})
    return replace(inputs, payouts=frame, other_outcomes={k: v for k, v in others.items() if v > 0})


def _combined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)] or frames[:1]
    if not frames:
        return typed_frame([], _PAYOUT_READ_DTYPES)
    whole = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    whole = whole.astype({_P.PREV_OUTCOME: "string"}).astype({_P.PREV_OUTCOME: "category"})
    return (
        whole.drop_duplicates(_P.TRANSACTION_ID)
        .sort_values(_P.TRANSACTION_ID, kind="stable")
        .reset_index(drop=True)
    )


def stored_outcomes(conn: Connection) -> dict[str, int]:
    """How many stored payouts have each outcome (by the (outcome, outcome_since) index)."""
    p = payouts.c
    query = select(p.outcome, func.count()).where(p.outcome.is_not(None)).group_by(p.outcome)
    return {str(outcome): int(n) for outcome, n in conn.execute(query)}


def load_known_returns(conn: Connection, run_id: int | None) -> KnownReturns:
    """Notifications of returned funds, earlier answers about them, earlier confirmations.

    "Earlier" is any run but ``run_id`` (a resumed run's own answers come from the run itself).
    The answers are the ``ok`` ones about ids announced or answered as type 13, and the
    ``not_found`` ones about ids a run confirmed (the latest of them speaks, in the core).
    """
    n, o, r = notifications.c, observations.c, run_returns.c
    notices = frame_of(
        conn,
        select(
            n.transaction_id.label("return_id"),
            n.original_transaction_id.label("claimed_original_id"),
            n.amount.label("claimed_amount"),
        )
        .where(n.kind == NotificationKind.RETURNED_FUNDS.value)
        .order_by(n.id),
    ).astype("string")
    announced = select(n.transaction_id).where(n.kind == NotificationKind.RETURNED_FUNDS.value)
    ever_confirmed = select(r.return_id).where(r.confirmed.is_(True))
    answers = select(o.id, *(o[c] for c in EARLIER_ANSWER_COLUMNS)).where(
        or_(
            and_(
                o.status == ObsStatus.OK.value,
                or_(o.type == int(TxType.RETURNED_FUNDS), o.transaction_id.in_(announced)),
            ),
            and_(o.status == ObsStatus.NOT_FOUND.value, o.transaction_id.in_(ever_confirmed)),
        )
    )
    if run_id is not None:
        answers = answers.where(o.run_id != run_id)
    earlier = frame_of(conn, answers.order_by(o.id)).astype(
        {"status": "string", "type": "Int64", "amount_minor": "Int64"}
    )
    seen13 = frozenset(earlier.loc[earlier["type"] == int(TxType.RETURNED_FUNDS), "transaction_id"])
    latest = earlier.drop_duplicates("transaction_id", keep="last").drop(columns="id")

    confirmed = select(r.return_id, func.max(r.run_id).label("rid")).where(r.confirmed.is_(True))
    if run_id is not None:
        confirmed = confirmed.where(r.run_id < run_id)
    sub = confirmed.group_by(r.return_id).subquery()
    confirmations = frame_of(
        conn,
        select(r.return_id, r.original_id.label("confirmed_original_id")).join_from(
            run_returns, sub, (sub.c.return_id == r.return_id) & (sub.c.rid == r.run_id)
        ),
    )
    notified = (
        select(n.transaction_id.label("return_id"), func.max(n.received_at).label("notified"))
        .where(n.kind == NotificationKind.RETURNED_FUNDS.value)
        .group_by(n.transaction_id)
        .subquery()
    )
    # Runs that asked since the latest notification (started after it, by the wall clock the
    # receiver stamps with), and when they asked on their own clock (as_of, as every time rule).
    asked = (
        select(
            o.transaction_id,
            func.min(runs.c.as_of).label("first"),
            func.max(runs.c.as_of).label("last"),
        )
        .join_from(observations, runs, runs.c.id == o.run_id)
        .join(notified, notified.c.return_id == o.transaction_id)
        .where(runs.c.started_at >= notified.c.notified)
    )
    if run_id is not None:
        asked = asked.where(o.run_id != run_id)
    asked_sub = asked.group_by(o.transaction_id).subquery()
    claims = frame_of(
        conn,
        select(
            notified.c.return_id,
            notified.c.notified.label("last_notified_at"),
            asked_sub.c.first.label("first_asked_at"),
            asked_sub.c.last.label("last_asked_at"),
        ).join_from(
            notified,
            asked_sub,
            asked_sub.c.transaction_id == notified.c.return_id,
            isouter=True,
        ),
    )
    previous = previous_finished_run(conn, run_id)
    record = run_record(conn, previous) if previous is not None else None
    return KnownReturns(
        watched=_watched_returns(conn, run_id),
        notices=notices,
        earlier=latest.reset_index(drop=True),
        confirmations=confirmations,
        seen13=seen13,
        claims=claims.astype({"return_id": "string"}).assign(
            last_notified_at=_utc(claims["last_notified_at"]),
            first_asked_at=_utc(claims["first_asked_at"]),
            last_asked_at=_utc(claims["last_asked_at"]),
        ),
        previous_started_at=record.started_at if record is not None else None,
    )


def _watched_returns(conn: Connection, run_id: int | None) -> pd.DataFrame:
    """Per return an earlier run confirmed: the first such run's ``as_of`` and the amount and
    currency it stored, and the latest ``as_of`` of a run that asked about it (any answer)."""
    r, o = run_returns.c, observations.c
    first = select(r.return_id, func.min(r.run_id).label("rid")).where(r.confirmed.is_(True))
    asked = select(o.transaction_id, func.max(runs.c.as_of).label("last")).join_from(
        observations, runs, runs.c.id == o.run_id
    )
    if run_id is not None:
        first = first.where(r.run_id < run_id)
        asked = asked.where(o.run_id != run_id)
    first_sub = first.group_by(r.return_id).subquery()
    asked_sub = (
        asked.where(o.transaction_id.in_(select(first_sub.c.return_id)))
        .group_by(o.transaction_id)
        .subquery()
    )
    frame = frame_of(
        conn,
        select(
            r.return_id,
            runs.c.as_of.label("confirmed_at"),
            r.amount_minor.label("confirmed_amount_minor"),
            r.currency.label("confirmed_currency"),
            asked_sub.c.last.label("last_asked_at"),
        )
        .join_from(
            run_returns,
            first_sub,
            (first_sub.c.rid == r.run_id) & (first_sub.c.return_id == r.return_id),
        )
        .join(runs, runs.c.id == r.run_id)
        .join(asked_sub, asked_sub.c.transaction_id == r.return_id, isouter=True)
        .order_by(r.return_id),
    )
    if frame.empty:
        return empty_watched()
    return frame.astype(
        {"return_id": "string", "confirmed_amount_minor": "Int64", "confirmed_currency": "string"}
    ).assign(confirmed_at=_utc(frame["confirmed_at"]), last_asked_at=_utc(frame["last_asked_at"]))


def _utc(column: pd.Series) -> pd.Series:
    return pd.to_datetime(column, utc=True).astype("datetime64[us, UTC]")


def load_failure_callbacks(conn: Connection, states: Iterable[int]) -> pd.DataFrame:
    """Per payout, the first transaction notification in one of ``states`` (the core's)."""
    n = notifications.c
    first = (
        select(n.transaction_id, n.state, func.min(n.received_at).label("received_at"))
        .join_from(notifications, payouts, payouts.c.transaction_id == n.transaction_id)
        .where(n.kind == NotificationKind.TRANSACTION.value, n.state.in_(sorted(states)))
        .group_by(n.transaction_id, n.state)
        .order_by(n.transaction_id, "received_at")
    )
    frame = frame_of(conn, first).drop_duplicates("transaction_id")
    return frame.astype({"transaction_id": "string", "state": "Int64"}).assign(
        received_at=_utc(frame["received_at"])
    )


def live_record_changes(conn: Connection) -> pd.DataFrame:
    """Every change imports made to reconciled records that no run has closed (by the
    ``closed_run_id`` index: few rows, as records rarely change after the fact)."""
    c = record_changes.c
    query = select(
        c.id,
        c.transaction_id,
        c.field,
        c.before,
        c.after,
        c.imported_at,
        c.answered_run_id.is_not(None).label("answered"),
    ).where(c.closed_run_id.is_(None))
    frame = frame_of(conn, query.order_by(c.id))
    if frame.empty:
        return empty_record_changes()
    typed = empty_record_changes()
    return frame.astype({k: v for k, v in typed.dtypes.items() if k != "imported_at"}).assign(
        imported_at=_utc(frame["imported_at"])
    )


def load_run_inputs(
    conn: Connection,
    *,
    run_id: int | None,
    poll_ids: Iterable[str],
    answers: pd.DataFrame,
    returns: KnownReturns,
    failed_states: Iterable[int],
    scope: PayoutScope,
) -> RunInputs:
    """Everything :func:`recon.reconcile.decide.decide` needs besides what the run holds.

    ``scope``: which payouts to read (:func:`recon.reconcile.scope.payout_scope`), with those
    a live case names; the outcomes of all others are counted, not read. The payouts related to
    these (duplicates) are added by :func:`with_related`, with what the core names for them.
    """
    previous = previous_finished_run(conn, run_id)
    record = run_record(conn, previous) if previous is not None else None
    unreadable = unparsed_notifications(conn, since=record.started_at if record else None)
    callbacks = load_failure_callbacks(conn, failed_states)
    cases = live_cases(conn)
    named = cases.loc[cases["item_kind"] == ItemKind.PAYOUT, "item_id"]
    scope = replace(scope, ids=scope.ids | frozenset(named.dropna().astype(str)))
    frame = load_payouts(conn, scope)
    decided = frame[_P.PREV_OUTCOME].astype("string").dropna().value_counts()
    others = Counter(stored_outcomes(conn))
    others.subtract({str(k): int(v) for k, v in decided.items()})
    return RunInputs(
        payouts=frame,
        other_outcomes={k: v for k, v in others.items() if v},
        poll_ids=frozenset(poll_ids),
        answers=answers,
        returns=returns,
        previous_run_id=previous,
        run_id=run_id,
        cases=cases,
        failure_callbacks=callbacks,
        record_changes=live_record_changes(conn),
        unreadable_notifications=pd.DataFrame(
            {
                "id": pd.array([n.id for n in unreadable], dtype="Int64"),
                "status": pd.array([n.status.value for n in unreadable], dtype="string"),
                "reason": pd.array([n.reason for n in unreadable], dtype="string"),
                "excerpt": pd.array([n.excerpt for n in unreadable], dtype="string"),
            }
        ),
    )
