"""What a run decides from, read from the store: payouts, callbacks, record changes, the last run.

Reads only (what is known of returns: :mod:`recon.store.return_reads`): which payouts to read,
what changed and what is a duplicate are decided in :mod:`recon.reconcile` (the pure core) and
passed in as values (:class:`~recon.decision.PayoutScope`, :class:`~recon.decision.RelatedReads`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import ColumnElement, Connection, Select, and_, bindparam, func, select

from recon.conform import conform, typed
from recon.constants import DEFAULT_ACCOUNT, NotificationKind
from recon.decision import PartyRange, PayoutScope, RelatedReads
from recon.frames import CODES, TEXT, PayoutsIn
from recon.run_frames import FailureCallbacks, RecordChanges, UnreadableNotifications
from recon.store._batch import ROWS_PER_STATEMENT, any_of, chunks, one_of
from recon.store.cases import live_cases
from recon.store.notifications import unparsed_notifications
from recon.store.runs import previous_finished_run, run_record
from recon.store.tables import (
    notifications,
    payouts,
    record_changes,
)
from recon.store.typed_read import frame_of, reads_parts, typed_frame

_P = PayoutsIn

# Every payout is read a part at a time, each column typed as its part arrives (typed_read), not
# as one frame of Python objects first: at 732,000 stored payouts that frame was the largest
# cost of a night and most of its peak memory (BENCHMARKS.md, "Steady state").
_PAIRS_PER_QUERY = 100
# An OR of party ranges, term by term: the party column, and whether it has a since and an until.
_Shape = tuple[tuple[str, bool, bool], ...]
# A read of payouts: its condition and the values of the parameters it names.
_Read = tuple[ColumnElement[bool], Mapping[str, Any]]
_NONE: Mapping[str, Any] = {}
# ``polled`` and the failure callback are the run's to add (decide.py), not the store's.
_RUNS_OWN = (_P.POLLED, _P.CALLBACK_FAILED_STATE, _P.CALLBACK_FAILED_AT)
_STORED = tuple(c for c in _P if c not in _RUNS_OWN)


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
        p.fee_minor.label(_P.PREV_FEE_MINOR),
        p.fee_id.label(_P.PREV_FEE_ID),
        p.fee_expected_minor.label(_P.PREV_FEE_EXPECTED_MINOR),
        p.fee_entry.label(_P.PREV_FEE_ENTRY),
        p.settled_at.label(_P.PREV_SETTLED_AT),
    ]


def _read(conn: Connection, reads: Iterable[_Read]) -> pd.DataFrame:
    """The payouts meeting each condition in turn (each names its account), with its parameters,
    as one typed frame (a frame for each query converted every column again for its 1,000 rows);
    a condition met again is the same statement (compiled once)."""
    columns = _payout_columns()
    built: dict[int, Select[Any]] = {}

    def queries() -> Iterator[tuple[Select[Any], Mapping[str, Any]]]:
        for condition, params in reads:
            query = built.get(id(condition))
            if query is None:
                query = built[id(condition)] = select(*columns).where(condition)
            yield query, params

    return typed_frame(reads_parts(conn, queries()), _STORED)


def _in_scope(conn: Connection, scope: PayoutScope, account: str) -> Iterator[_Read]:
    p = payouts.c
    mine = p.provider_account == account
    ids = sorted(scope.ids)
    for part in chunks(ids, ROWS_PER_STATEMENT):
        yield and_(mine, one_of(conn, p.transaction_id, part)), _NONE
    # Flagged payouts (an index on each column; '' is "none").
    yield and_(mine, p.exceptions > ""), _NONE
    yield and_(mine, p.candidate_duplicates > ""), _NONE
    # Watched outcomes never scheduled (an upgraded store), each group inside its own window, by
    # the (outcome, next_check_at, outcome_since) index: two ranges each, no OR to defeat it.
    for outcomes, since in scope.unscheduled:
        for seen in (p.outcome_since.is_(None), p.outcome_since >= since):
            yield (
                and_(mine, p.outcome.in_(sorted(outcomes)), p.next_check_at.is_(None), seen),
                _NONE,
            )


def _ranges(reads: RelatedReads, account: str) -> Iterator[_Read]:
    """Payouts of each party range, by the (provider_account, party, amount_minor, created)
    index: ORs of ranges, then those without a ``created`` where a range asks for them, as two
    reads so that no OR inside a term defeats the index. The account is in every term: an OR of
    whole index ranges, not one walk of the account testing each row against every term.

    Each OR is built once per shape (party and bounds, term by term) and given each part's
    values as parameters, not built again for every customer of the night."""
    shapes: dict[tuple[_Shape, bool], ColumnElement[bool]] = {}
    for part in chunks(list(reads.ranges), _PAIRS_PER_QUERY):
        undated = [r for r in part if r.undated and (r.since is not None or r.until is not None)]
        for ranges, without_created in ((part, False), (undated, True)):
            if not ranges:
                continue
            shape = tuple(
                (r.party, False, False)
                if without_created
                else (r.party, r.since is not None, r.until is not None)
                for r in ranges
            )
            if (shape, without_created) not in shapes:
                shapes[(shape, without_created)] = _shape(shape, undated=without_created)
            yield shapes[(shape, without_created)], _values(ranges, account)


def _values(ranges: Sequence[PartyRange], account: str) -> dict[str, Any]:
    """The parameters of an OR of ``ranges`` (:func:`_shape`)."""
    values: dict[str, Any] = {"account": account}
    for i, r in enumerate(ranges):
        values |= {f"who{i}": r.who, f"amount{i}": r.amount_minor}
        values |= {f"since{i}": r.since, f"until{i}": r.until}
    return values


def _shape(terms: tuple[tuple[str, bool, bool], ...], *, undated: bool) -> ColumnElement[bool]:
    """An OR of party ranges with parameters for its values: ``who{i}``, ``amount{i}``,
    ``since{i}`` and ``until{i}`` (where the term has that bound) and ``account``; ``undated``:
    each term asks for the payouts without a ``created`` instead of a span of them."""
    p = payouts.c
    columns: dict[str, Any] = {_P.BANK_ACCOUNT_ID: p.bank_account_id, _P.CUSTOMER_ID: p.customer_id}
    parts = []
    for i, (party, since, until) in enumerate(terms):
        term = and_(
            columns[party] == bindparam(f"who{i}"), p.amount_minor == bindparam(f"amount{i}")
        )
        if undated:
            term = and_(term, p.created.is_(None))
        if since:
            term = and_(term, p.created >= bindparam(f"since{i}"))
        if until:
            term = and_(term, p.created <= bindparam(f"until{i}"))
        parts.append(term)
    return any_of(p.provider_account == bindparam("account"), parts)


def _references(conn: Connection, reads: RelatedReads, account: str) -> Iterator[_Read]:
    """Payouts of each merchant_reference another stored payout shares, by its index. The
    references are those of the payouts already read: one no other payout has names only its own,
    so it is counted (from the index alone) instead of read again."""
    p = payouts.c
    shared: list[str] = []
    for part in chunks(sorted(reads.references), ROWS_PER_STATEMENT):
        query = (
            select(p.merchant_reference)
            .where(p.provider_account == account, one_of(conn, p.merchant_reference, part))
            .group_by(p.merchant_reference)
            .having(func.count() > 1)
        )
        shared += [str(reference) for (reference,) in conn.execute(query)]
    for part in chunks(shared, ROWS_PER_STATEMENT):
        yield and_(p.provider_account == account, one_of(conn, p.merchant_reference, part)), _NONE


def load_payouts(
    conn: Connection, scope: PayoutScope, *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """The payouts of ``account`` a run decides (``scope``) with their previous reconciled state
    (``payouts`` without ``polled``), by id; :func:`load_related` adds those the core names for
    them.

    Which payouts those are is the core's rule (:mod:`recon.reconcile.scope`); every read here is
    by index, so a night reads what it decides, not every payout ever stored.
    """
    return _conformed(_combined([_read(conn, _in_scope(conn, scope, account))]))


def load_related(
    conn: Connection,
    have: pd.DataFrame,
    reads: RelatedReads,
    *,
    account: str = DEFAULT_ACCOUNT,
) -> pd.DataFrame:
    """``have`` with the payouts of ``account`` ``reads`` names (by merchant_reference, by party
    ranges)."""
    more = _read(conn, itertools.chain(_references(conn, reads, account), _ranges(reads, account)))
    return _conformed(_combined([have, more]))


def _conformed(frame: pd.DataFrame) -> pd.DataFrame:
    return conform(frame, _STORED, name="payouts")


def _combined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)] or frames[:1]
    if not frames:
        return typed_frame([], _STORED)
    whole = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    whole = whole.astype({_P.PREV_OUTCOME: TEXT}).astype({_P.PREV_OUTCOME: CODES})
    return (
        whole.drop_duplicates(_P.TRANSACTION_ID)
        .sort_values(_P.TRANSACTION_ID, kind="stable")
        .reset_index(drop=True)
    )


def stored_outcomes(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> dict[str, int]:
    """How many stored payouts of ``account`` have each outcome (by the (outcome,
    outcome_since) index)."""
    p = payouts.c
    query = (
        select(p.outcome, func.count())
        .where(p.outcome.is_not(None), p.provider_account == account)
        .group_by(p.outcome)
    )
    return {str(outcome): int(n) for outcome, n in conn.execute(query)}


def load_failure_callbacks(
    conn: Connection, states: Iterable[int], *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """Per payout of ``account``, the first transaction notification in one of ``states`` (the
    core's)."""
    n = notifications.c
    p = payouts.c
    first = (
        select(
            n.transaction_id, n.state, func.min(n.received_at).label(FailureCallbacks.RECEIVED_AT)
        )
        .join_from(
            notifications,
            payouts,
            and_(p.provider_account == n.provider_account, p.transaction_id == n.transaction_id),
        )
        .where(
            n.provider_account == account,
            n.kind == NotificationKind.TRANSACTION.value,
            n.state.in_(sorted(states)),
        )
        .group_by(n.transaction_id, n.state)
        .order_by(n.transaction_id, FailureCallbacks.RECEIVED_AT)
    )
    return typed(
        frame_of(conn, first).drop_duplicates(FailureCallbacks.TRANSACTION_ID), FailureCallbacks
    )


def live_record_changes(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """Every change imports made to reconciled records of ``account`` that no run has closed (by
    the
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
    ).where(c.closed_run_id.is_(None), c.provider_account == account)
    return typed(frame_of(conn, query.order_by(c.id)), RecordChanges)


@dataclass(frozen=True)
class RunContext:
    """What a run reads of the store besides payouts and returns (see :class:`RunInputs`)."""

    previous_run_id: int | None
    cases: pd.DataFrame
    failure_callbacks: pd.DataFrame
    record_changes: pd.DataFrame
    unreadable_notifications: pd.DataFrame


def load_context(
    conn: Connection,
    *,
    run_id: int | None,
    failed_states: Iterable[int],
    account: str = DEFAULT_ACCOUNT,
    configured: Collection[str] | None = None,
) -> RunContext:
    """Of ``account``: the previous finished run, the live cases, the failure callbacks (in
    ``failed_states``, the core's), the live record changes, and the notifications since the
    previous finished run started that recon could not read. ``configured``, the configured
    accounts' names, is given to one account's night (the first's): it also reads the
    notifications of accounts not configured, each named by its account."""
    previous = previous_finished_run(conn, run_id, account=account)
    record = run_record(conn, previous) if previous is not None else None
    unreadable = unparsed_notifications(
        conn,
        since=record.started_at if record else None,
        account=account,
        configured=configured,
    )
    return RunContext(
        previous_run_id=previous,
        cases=live_cases(conn, account=account),
        failure_callbacks=load_failure_callbacks(conn, failed_states, account=account),
        record_changes=live_record_changes(conn, account=account),
        unreadable_notifications=typed(
            pd.DataFrame(
                [(n.id, n.status.value, n.reason, n.excerpt, n.account) for n in unreadable],
                columns=UnreadableNotifications.names(),
            ),
            UnreadableNotifications,
        ),
    )
