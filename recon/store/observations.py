"""Every answer the provider gave a run: stored as it arrives (batched inserts), read back once.

The run keeps its answers through :mod:`recon.night.observations`; this module is the SQL side.
Rows go in through :func:`recon.store.bulk.execute_columns` (one statement, each column converted
once per batch): the sink's thread stores every answer of a run while the pollers wait on the GIL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, insert, select

from recon.constants import DEFAULT_ACCOUNT
from recon.store._batch import chunks
from recon.store.bulk import execute_columns, sqlite_times
from recon.store.tables import observations
from recon.store.types import UTCDateTime

_COLUMNS = tuple(c.name for c in observations.columns if c.name not in ("id", "provider_account"))
_TIMES = tuple(c for c in _COLUMNS if isinstance(observations.c[c].type, UTCDateTime))


def insert_observations(
    conn: Connection, rows: Sequence[Mapping[str, Any]], *, account: str = DEFAULT_ACCOUNT
) -> int:
    """Insert observations of ``account`` (keys: the ``observations`` columns but ``id`` and
    ``provider_account``; missing ones are NULL).

    Returns the number of rows written.
    """
    statement = insert(observations).values(provider_account=account)
    sqlite = conn.dialect.name == "sqlite"
    for part in chunks(rows):
        columns = {c: [r.get(c) for r in part] for c in _COLUMNS}
        if sqlite:  # the times as the text stored there, a column at a time
            columns.update({c: sqlite_times(columns[c]) for c in _TIMES})
        execute_columns(conn, statement, columns)
    return len(rows)


def run_answers(conn: Connection, run_id: int, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """A run's stored answers, oldest first, as tuples of ``columns`` (a resumed run's start)."""
    o = observations.c
    query = select(*(o[c] for c in columns)).where(o.run_id == run_id).order_by(o.id)
    return [tuple(row) for row in conn.execute(query)]
