"""Every answer the provider gave a run: stored as it arrives (batched inserts), read back once.

The run keeps its answers through :mod:`recon.reconcile.observations`; this module is the SQL side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, insert, select

from recon.store._batch import chunks
from recon.store.tables import observations

_COLUMNS = tuple(c.name for c in observations.columns if c.name != "id")


def insert_observations(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert observations (keys: the ``observations`` columns but ``id``; missing ones are NULL).

    Returns the number of rows written.
    """
    records = [{col: row.get(col) for col in _COLUMNS} for row in rows]
    for part in chunks(records):
        conn.execute(insert(observations), list(part))
    return len(records)


def run_answers(conn: Connection, run_id: int, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """A run's stored answers, oldest first, as tuples of ``columns`` (a resumed run's start)."""
    o = observations.c
    query = select(*(o[c] for c in columns)).where(o.run_id == run_id).order_by(o.id)
    return [tuple(row) for row in conn.execute(query)]
