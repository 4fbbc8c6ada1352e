"""Retention's reads and writes: the raw bodies past a cutoff, the facts that keep some, the drop.

The store decides nothing here: which bodies are evidence is :mod:`recon.reconcile.retention`'s
rule, applied by the caller to the rows read here; this module sets the chosen ones to NULL.

The rows still holding a raw body are read oldest first, a batch at a time, by the partial
indexes ``ix_observations_fetched_at_id`` and ``ix_notifications_received_at_id`` (migration
0010), resuming after the last row of the previous batch (keyset), so kept rows are not read
twice in one prune and dropped ones leave the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, Connection, Table, and_, or_, select, true, union, update

from recon.constants import NotificationKind, TxType
from recon.store._batch import chunks, one_of
from recon.store.tables import exception_cases, notifications, observations, run_returns

# (time, id) of the last row a batch read; the next batch starts after it.
Position = tuple[datetime, int]


def open_cases(conn: Connection) -> list[tuple[str, str, str | None]]:
    """(item_kind, item_id, last_facts) of every exception case not ended (its index:
    ended_run_id)."""
    c = exception_cases.c
    query = select(c.item_kind, c.item_id, c.last_facts).where(c.ended_run_id.is_(None))
    return [(str(kind), str(item), facts) for kind, item, facts in conn.execute(query)]


def return_ids(conn: Connection) -> set[str]:
    """Every id known as a return: answered as type 13, announced, or judged by a run."""
    o, n, r = observations.c, notifications.c, run_returns.c
    query = union(
        select(o.transaction_id.label("id")).where(o.type == int(TxType.RETURNED_FUNDS)),
        select(n.transaction_id).where(
            n.kind == NotificationKind.RETURNED_FUNDS.value, n.transaction_id.is_not(None)
        ),
        select(r.return_id),
    )
    return {str(i) for i in conn.execute(query).scalars()}


def _after(time: Column[Any], key: Column[Any], position: Position | None) -> Any:
    if position is None:
        return true()
    at, last = position
    # The range on the time column is what the index is searched by; the OR breaks ties.
    return and_(time >= at, or_(time > at, key > last))


def raw_answers(
    conn: Connection, *, before: datetime, after: Position | None, limit: int
) -> list[tuple[Any, ...]]:
    """Up to ``limit`` answers fetched before ``before`` that hold a raw body, oldest first:
    (fetched_at, id, transaction_id, type, related_transaction_id)."""
    o = observations.c
    query = (
        select(o.fetched_at, o.id, o.transaction_id, o.type, o.related_transaction_id)
        .where(o.fetched_at < before, o.raw.is_not(None), _after(o.fetched_at, o.id, after))
        .order_by(o.fetched_at, o.id)
        .limit(limit)
    )
    return [tuple(row) for row in conn.execute(query)]


def raw_notifications(
    conn: Connection, *, before: datetime, after: Position | None, limit: int
) -> list[tuple[Any, ...]]:
    """Up to ``limit`` notifications received before ``before`` that hold a raw body, oldest
    first: (received_at, id, kind, transaction_id)."""
    n = notifications.c
    query = (
        select(n.received_at, n.id, n.kind, n.transaction_id)
        .where(n.received_at < before, n.body.is_not(None), _after(n.received_at, n.id, after))
        .order_by(n.received_at, n.id)
        .limit(limit)
    )
    return [tuple(row) for row in conn.execute(query)]


def _drop(conn: Connection, table: Table, column: str, ids: Sequence[int]) -> int:
    dropped = 0
    for part in chunks(ids):
        result = conn.execute(
            update(table)
            .where(one_of(conn, table.c.id, part, BigInteger()), table.c[column].is_not(None))
            .values({column: None})
        )
        dropped += result.rowcount
    return dropped


def drop_raw_answers(conn: Connection, ids: Sequence[int]) -> int:
    """Set ``raw`` to NULL on these answers; how many had one."""
    return _drop(conn, observations, "raw", ids)


def drop_raw_notifications(conn: Connection, ids: Sequence[int]) -> int:
    """Set ``body`` to NULL on these notifications; how many had one."""
    return _drop(conn, notifications, "body", ids)
