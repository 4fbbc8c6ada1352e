"""Every answer the provider gave a run, stored as it arrives (batched inserts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, insert

from recon.store._batch import chunks
from recon.store.tables import observations

_COLUMNS = tuple(c.name for c in observations.columns if c.name != "id")


class ObservationStatus(StrEnum):
    """How a fetch ended: an answer, the provider does not know the id, or no usable answer."""

    OK = "ok"
    NOT_FOUND = "not_found"
    ERROR = "error"


def insert_observations(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert observations (keys: the ``observations`` columns but ``id``; missing ones are NULL).

    Returns the number of rows written.
    """
    records = [{col: row.get(col) for col in _COLUMNS} for row in rows]
    for part in chunks(records):
        conn.execute(insert(observations), list(part))
    return len(records)
