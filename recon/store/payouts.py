"""The merchant's payout records: set-based upserts that never touch the reconciliation columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from recon.store._batch import chunks, one_of, upsert
from recon.store.tables import PAYOUT_RECORD_COLUMNS, payouts


@dataclass(frozen=True)
class UpsertCounts:
    """What an upsert did: rows new to the store, rows whose record changed, rows already equal."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0

    def __add__(self, other: UpsertCounts) -> UpsertCounts:
        return UpsertCounts(
            self.inserted + other.inserted,
            self.updated + other.updated,
            self.unchanged + other.unchanged,
        )


def upsert_payouts(
    conn: Connection, rows: Sequence[Mapping[str, Any]], *, now: datetime | None = None
) -> UpsertCounts:
    """Insert new payouts and update changed ones, keyed on ``transaction_id``, in batches.

    ``rows`` carry the record columns (``PAYOUT_RECORD_COLUMNS``; missing optional ones are NULL).
    A row equal to the stored record is not written at all, so ``imported_at`` keeps the time the
    record last changed. Within ``rows`` a repeated id keeps its last occurrence.
    """
    imported_at = now or datetime.now(UTC)
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        record = {col: row.get(col) for col in PAYOUT_RECORD_COLUMNS}
        latest[str(record["transaction_id"])] = record
    total = UpsertCounts()
    for part in chunks(list(latest.values())):
        total += _upsert_chunk(conn, part, imported_at)
    return total


def _upsert_chunk(
    conn: Connection, records: Sequence[dict[str, Any]], imported_at: datetime
) -> UpsertCounts:
    ids = [r["transaction_id"] for r in records]
    stored = {
        row.transaction_id: tuple(row)
        for row in conn.execute(
            select(*(payouts.c[col] for col in PAYOUT_RECORD_COLUMNS)).where(
                one_of(conn, payouts.c.transaction_id, ids)
            )
        )
    }
    changed: list[dict[str, Any]] = []
    inserted = unchanged = 0
    for record in records:
        before = stored.get(record["transaction_id"])
        if before is None:
            inserted += 1
        elif before == tuple(record[col] for col in PAYOUT_RECORD_COLUMNS):
            unchanged += 1
            continue
        changed.append({**record, "imported_at": imported_at})
    if changed:
        update = [*PAYOUT_RECORD_COLUMNS[1:], "imported_at"]
        conn.execute(upsert(conn, payouts, "transaction_id", update), changed)
    return UpsertCounts(inserted, len(changed) - inserted, unchanged)
