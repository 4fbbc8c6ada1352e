"""The merchant's payout records: set-based upserts that never touch the reconciliation columns.

A re-import follows :mod:`recon.records`: an empty ``created``/``eta`` keeps what a run filled in,
and every field it changes in a payout a run already reconciled goes to ``record_changes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from recon.constants import DEFAULT_ACCOUNT
from recon.records import field_changes, merged
from recon.store._batch import chunks, one_of, upsert
from recon.store.tables import PAYOUT_RECORD_COLUMNS, payouts, record_changes


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
    conn: Connection,
    rows: Sequence[Mapping[str, Any]],
    *,
    now: datetime | None = None,
    account: str = DEFAULT_ACCOUNT,
) -> UpsertCounts:
    """Insert new payouts of ``account`` and update changed ones, keyed on ``transaction_id``
    within the account, in batches.

    ``rows`` carry the record columns (``PAYOUT_RECORD_COLUMNS``; missing optional ones are NULL).
    A row equal to the stored record (an empty ``created``/``eta`` keeping the stored one) is not
    written at all, so ``imported_at`` keeps the time the record last changed. A changed payout
    that a run has reconciled gets a ``record_changes`` row per changed field. Within ``rows`` a
    repeated id keeps its last occurrence.
    """
    imported_at = now or datetime.now(UTC)
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        record = {col: row.get(col) for col in PAYOUT_RECORD_COLUMNS}
        latest[str(record["transaction_id"])] = record
    total = UpsertCounts()
    for part in chunks(list(latest.values())):
        total += _upsert_chunk(conn, part, imported_at, account)
    return total


def _upsert_chunk(
    conn: Connection, records: Sequence[dict[str, Any]], imported_at: datetime, account: str
) -> UpsertCounts:
    ids = [r["transaction_id"] for r in records]
    stored: dict[str, dict[str, Any]] = {}
    reconciled: set[str] = set()
    query = select(*(payouts.c[col] for col in PAYOUT_RECORD_COLUMNS), payouts.c.outcome).where(
        payouts.c.provider_account == account, one_of(conn, payouts.c.transaction_id, ids)
    )
    for row in conn.execute(query):
        values = row._asdict()
        if values.pop("outcome") is not None:
            reconciled.add(row.transaction_id)
        stored[row.transaction_id] = values
    changed: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    inserted = unchanged = 0
    for incoming in records:
        tid = incoming["transaction_id"]
        before = stored.get(tid)
        record = merged(before, incoming)
        if before is None:
            inserted += 1
        elif before == record:
            unchanged += 1
            continue
        elif tid in reconciled:
            changes += [
                {**vars(c), "imported_at": imported_at, "provider_account": account}
                for c in field_changes(before, record, PAYOUT_RECORD_COLUMNS)
            ]
        changed.append({**record, "imported_at": imported_at, "provider_account": account})
    if changed:
        update = [*PAYOUT_RECORD_COLUMNS[1:], "imported_at"]
        key = ["provider_account", "transaction_id"]
        conn.execute(upsert(conn, payouts, key, update), changed)
    if changes:
        conn.execute(insert(record_changes), changes)
    return UpsertCounts(inserted, len(changed) - inserted, unchanged)
