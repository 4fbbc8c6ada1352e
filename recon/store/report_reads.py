"""A stored run as its reports show it: payouts as the run left them, its returns, its changes.

Every figure is the run's own: the record columns come from the history row (which keeps the
record its run saw, since 0012), and from the payout only for rows written before that (their
``amount_minor`` is NULL), so a record imported later does not rewrite an earlier run's report.

Reads in parts into typed frames (:mod:`recon.store.typed_read`), so a report over a million
payouts stays well under a gigabyte.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import ColumnElement, Connection, Select, and_, case, func, or_, select

from recon import frames as fr
from recon.conform import conform, typed
from recon.constants import DEFAULT_ACCOUNT, OPEN_OUTCOMES
from recon.run_frames import OutcomeChanges, ReportPayouts, ReportPayoutsWithFees, Totals
from recon.store._batch import ROWS_PER_STATEMENT, any_of, chunks, one_of
from recon.store.tables import outcome_history, payouts, run_returns, runs
from recon.store.typed_read import Values, column_parts, frame_of, typed_frame

_PG_IDS_PER_READ = 50_000  # ids per read of payouts_of_run on PostgreSQL


def payouts_frame(parts: Iterable[Mapping[str, Values]]) -> pd.DataFrame:
    """Report payouts given as parts of column values (or of columns typed so already), typed as
    :func:`payouts_of_run` types them."""
    return typed_frame(parts, ReportPayoutsWithFees)


def changes_frame(parts: Iterable[Mapping[str, Values]]) -> pd.DataFrame:
    """Outcome changes given as parts of column values (or of columns), typed as
    :func:`outcome_changes` types them."""
    return typed_frame(parts, OutcomeChanges)


def _seen(name: str, h: Any = outcome_history.c) -> ColumnElement[Any]:
    """The record column ``name`` as the history row's run saw it (``h``: the history columns,
    or a subquery's carrying them with ``amount_minor``), labelled ``name``."""
    kept = h.amount_minor.is_not(None)
    return case((kept, h[name]), else_=payouts.c[name]).label(name)


def _at_run_query(run_id: int, among: ColumnElement[bool] | None, account: str) -> Select[Any]:
    h, p = outcome_history.c, payouts.c
    latest = select(h.transaction_id, func.max(h.id).label("hid")).where(
        h.provider_account == account, h.run_id <= run_id
    )
    if among is not None:
        latest = latest.where(among)
    sub = latest.group_by(h.transaction_id).subquery()
    return (
        select(
            p.transaction_id,
            _seen("merchant_reference"),
            _seen("amount_minor"),
            _seen("currency"),
            h.outcome,
            h.state,
            h.error_code,
            h.returned_minor,
            h.exceptions,
            h.candidate_duplicates,
            _seen("created"),
            _seen("eta"),
            _seen("bank_account_id"),
            _seen("customer_id"),
            h.fee_minor,
            h.fee_id,
            h.fee_expected_minor,
            h.fee_entry,
            h.run_id.label("_hist_run"),
            h.previous_outcome.label("_hist_prev"),
        )
        .join_from(
            payouts,
            sub,
            and_(p.provider_account == account, sub.c.transaction_id == p.transaction_id),
        )
        .join(outcome_history, h.id == sub.c.hid)
        .order_by(p.transaction_id)
    )


def _with_prev(
    parts: Iterable[dict[str, Sequence[Any]]], run_id: int
) -> Iterator[dict[str, Sequence[Any]]]:
    for part in parts:
        outcomes = part[ReportPayouts.OUTCOME]
        hist = zip(outcomes, part["_hist_prev"], part["_hist_run"], strict=True)
        part[ReportPayouts.PREV_OUTCOME] = [
            prev if hrun == run_id else now for now, prev, hrun in hist
        ]
        yield part


def payouts_at_run(
    conn: Connection, run_id: int, *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """Every payout of ``account`` reconciled by run ``run_id`` or earlier, as that run left it.

    The reconciled columns come from the latest history row at or before the run; ``prev_outcome``
    is what the run changed the outcome from (the outcome itself when it did not change).
    """
    parts = column_parts(conn, _at_run_query(run_id, None, account))
    return typed_frame(_with_prev(parts, run_id), ReportPayoutsWithFees)


def payouts_of_run(
    conn: Connection, run_id: int, ids: Iterable[str], *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """The payouts ``ids`` of ``account`` as run ``run_id`` left them (as
    :func:`payouts_at_run`), read by id."""
    h = outcome_history.c

    # PostgreSQL takes the ids as one array parameter, of any length, and plans a part with a
    # 1,000-element array as a scan of outcome_history: a part per 1,000 ids made a report over
    # many payouts far too slow (BENCHMARKS.md, "Fifth round"). Elsewhere the ids are bound one
    # by one, and 1,000 stays far below every driver's limit.
    size = _PG_IDS_PER_READ if conn.dialect.name == "postgresql" else ROWS_PER_STATEMENT

    def parts() -> Iterator[dict[str, Sequence[Any]]]:
        for chunk in chunks(sorted(set(ids)), size):
            yield from column_parts(
                conn, _at_run_query(run_id, one_of(conn, h.transaction_id, chunk), account)
            )

    return typed_frame(_with_prev(parts(), run_id), ReportPayoutsWithFees)


def report_payout_ids(
    conn: Connection, run_id: int, since: datetime, *, account: str = DEFAULT_ACCOUNT
) -> set[str]:
    """Payouts of ``account`` a run's report covers besides those its exceptions and returns
    name: changed by a run of the window (``as_of`` after ``since``, up to ``run_id``), or open or
    flagged as of that run.

    Each read is by index (``outcome_history.run_id``; ``payouts`` by outcome, exceptions,
    candidate duplicates), so a report reads its window, not the history. For a run some later
    run has changed payouts since, "open or flagged" is read from each payout's latest history
    row up to it instead (what the run saw: a rebuilt report lists what it listed then); that read
    covers the history, and only a rebuild of an older run makes it.
    """
    h, p, r = outcome_history.c, payouts.c, runs.c
    window = select(r.id).where(r.id <= run_id, r.as_of > since, r.provider_account == account)
    open_outcomes = sorted(o.value for o in OPEN_OUTCOMES)
    queries: list[Select[Any]] = [select(h.transaction_id).where(h.run_id.in_(window))]
    later = conn.scalar(
        select(h.run_id).where(h.run_id > run_id, h.provider_account == account).limit(1)
    )
    mine = p.provider_account == account
    if later is None:  # nothing changed since: the payouts are as the run left them
        queries += [
            select(p.transaction_id).where(
                any_of(mine, (p.outcome.in_(open_outcomes), p.exceptions > ""))
            ),
            select(p.transaction_id).where(mine, p.candidate_duplicates > ""),
        ]
    else:
        latest = (
            select(h.transaction_id, func.max(h.run_id).label("rid"))
            .where(h.run_id <= run_id, h.provider_account == account)
            .group_by(h.transaction_id)
            .subquery()
        )
        queries.append(
            select(h.transaction_id)
            .join_from(
                outcome_history,
                latest,
                and_(
                    h.provider_account == account,
                    h.transaction_id == latest.c.transaction_id,
                    h.run_id == latest.c.rid,
                ),
            )
            .where(
                or_(h.outcome.in_(open_outcomes), h.exceptions > "", h.candidate_duplicates > "")
            )
        )
    return {str(i) for query in queries for i in conn.scalars(query)}


def outcome_totals(
    conn: Connection, run_id: int, since: datetime, *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """Per currency and outcome, the payouts of ``account`` whose outcome as of run ``run_id`` was
    reached by a run of the window (``as_of`` after ``since``): how many and their amount (exact
    integer minor units, summed by the database). Columns: currency, outcome, payouts, amount_minor.
    """
    h, r = outcome_history.c, runs.c
    window = select(r.id).where(r.id <= run_id, r.as_of > since, r.provider_account == account)
    changed = [
        h.run_id.in_(window),
        or_(h.previous_outcome.is_(None), h.previous_outcome != h.outcome),
    ]
    # The latest change of the window is the outcome at the run: rows after it change no outcome.
    query = (
        _ranked_totals(changed) if conn.dialect.name == "postgresql" else _joined_totals(changed)
    )
    rows = [(str(c), str(o), int(n), int(a)) for c, o, n, a in conn.execute(query)]
    read = (Totals.CURRENCY, Totals.OUTCOME, Totals.PAYOUTS, Totals.AMOUNT_MINOR)
    return typed(pd.DataFrame(rows, columns=[str(c) for c in read]), read)


def _joined_totals(changed: list[ColumnElement[bool]]) -> Select[Any]:
    """The totals by each payout's latest change of the window, joined back by its id: SQLite and
    MariaDB. On SQLite it was measured at 365 days of history (BENCHMARKS.md, "Steady state,
    second round"); the window function of :func:`_ranked_totals` was measured on PostgreSQL
    only, and the fifth round's SQLite nights were slower with it in place (cause not isolated:
    both plans search ``run_id``), so SQLite keeps what was measured."""
    h, p = outcome_history.c, payouts.c
    reached = (
        select(func.max(h.id).label("hid")).where(*changed).group_by(h.transaction_id).subquery()
    )
    currency, amount = _seen("currency"), _seen("amount_minor")
    inner = (
        select(currency, h.outcome, amount)
        .join_from(outcome_history, reached, reached.c.hid == h.id)
        .join(
            payouts,
            and_(p.provider_account == h.provider_account, p.transaction_id == h.transaction_id),
        )
        .subquery()
    )
    t = inner.c
    return (
        select(t.currency, t.outcome, func.count(), func.sum(t.amount_minor))
        .group_by(t.currency, t.outcome)
        .order_by(t.currency, t.outcome)
    )


def _ranked_totals(changed: list[ColumnElement[bool]]) -> Select[Any]:
    """The same totals, each payout's latest change ranked by a window function: PostgreSQL ran
    the join back by id as a merge join over the whole history's primary key (BENCHMARKS.md,
    "Steady state, second round" and "Fifth round")."""
    h, p = outcome_history.c, payouts.c
    latest = (
        select(
            h.provider_account,
            h.transaction_id,
            h.outcome,
            h.currency,
            h.amount_minor,
            func.row_number()
            .over(partition_by=h.transaction_id, order_by=h.id.desc())
            .label("newest_first"),
        )
        .where(*changed)
        .subquery()
    )
    currency, amount = _seen("currency", latest.c), _seen("amount_minor", latest.c)
    inner = (
        select(currency, latest.c.outcome, amount)
        .join_from(
            latest,
            payouts,
            and_(
                p.provider_account == latest.c.provider_account,
                p.transaction_id == latest.c.transaction_id,
            ),
        )
        .where(latest.c.newest_first == 1)
        .subquery()
    )
    t = inner.c
    return (
        select(t.currency, t.outcome, func.count(), func.sum(t.amount_minor))
        .group_by(t.currency, t.outcome)
        .order_by(t.currency, t.outcome)
    )


def run_returns_frame(conn: Connection, run_id: int) -> pd.DataFrame:
    """The returned-funds transactions as run ``run_id`` judged them."""
    r = run_returns.c
    query = select(*(r[str(c)] for c in fr.ReturnsOut.names())).where(r.run_id == run_id)
    return conform(frame_of(conn, query), fr.ReturnsOut, name="stored returns")


def outcome_changes(conn: Connection, run_id: int) -> pd.DataFrame:
    """Outcome changes a run recorded (transaction_id, previous_outcome, outcome, amount...)."""
    h, p = outcome_history.c, payouts.c
    query = (
        select(
            h.transaction_id,
            h.previous_outcome,
            h.outcome,
            _seen("amount_minor"),
            _seen("currency"),
        )
        .join_from(
            outcome_history,
            payouts,
            and_(h.provider_account == p.provider_account, h.transaction_id == p.transaction_id),
        )
        .where(
            h.run_id == run_id,
            or_(h.previous_outcome.is_(None), h.previous_outcome != h.outcome),
        )
        .order_by(h.transaction_id)
    )
    return typed_frame(column_parts(conn, query), OutcomeChanges)
