"""The journal's lines and batches in the store: what an export reads, and the batch it records.

- :func:`add_journal_lines`: lines as the core made them, stored unexported (``batch`` NULL).
- :func:`unexported_lines`, :func:`batch_lines`: the lines an export takes, and those of a batch,
  in the export's order (provider account, entry number, entry, line).
- :func:`batch_record`, :func:`next_batch`, :func:`record_batch`: a batch's row; the number the
  next takes (one sequence for every account); and a new batch recorded with its lines stamped,
  in the caller's transaction. A line already in a batch is never stamped again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from recon.errors import StoreError
from recon.reconcile.journal import JournalLine
from recon.store._batch import chunks, one_of
from recon.store.journal import line_from_row, write_lines
from recon.store.journal_tables import journal_batches, journal_lines


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """One export: its number, format, account (None: every account), time, line count, the
    options its files were written with, and each file's name, sha256 and size (manifest last)."""

    batch: int
    format: str
    provider_account: str | None
    created_at: datetime
    lines: int
    options: dict[str, Any]
    files: list[dict[str, Any]]


def add_journal_lines(conn: Connection, lines: Sequence[JournalLine], run_id: int) -> None:
    """Store ``lines`` as run ``run_id`` made them, not yet exported (:func:`write_lines`)."""
    write_lines(conn, run_id, lines)


def _ordered(query: Select[Any]) -> Select[Any]:
    c = journal_lines.c
    return query.order_by(c.provider_account, c.number, c.journal_id, c.line)


def unexported_lines(conn: Connection, account: str | None = None) -> list[JournalLine]:
    """Every line not in a batch yet, of ``account`` (None: of every account)."""
    c = journal_lines.c
    query = select(journal_lines).where(c.batch.is_(None))
    if account is not None:
        query = query.where(c.provider_account == account)
    return [line_from_row(row) for row in conn.execute(_ordered(query))]


def batch_lines(conn: Connection, batch: int) -> list[JournalLine]:
    """The lines batch ``batch`` exported."""
    query = select(journal_lines).where(journal_lines.c.batch == batch)
    return [line_from_row(row) for row in conn.execute(_ordered(query))]


def batch_record(conn: Connection, batch: int) -> BatchRecord | None:
    """Batch ``batch``'s row, or None when there is no such batch."""
    row = conn.execute(select(journal_batches).where(journal_batches.c.batch == batch)).first()
    if row is None:
        return None
    return BatchRecord(
        batch=int(row.batch),
        format=row.format,
        provider_account=row.provider_account,
        created_at=row.created_at,
        lines=int(row.lines),
        options=json.loads(row.options),
        files=json.loads(row.files),
    )


def next_batch(conn: Connection) -> int:
    """The number the next batch takes: one more than the highest so far (1 for the first)."""
    highest = conn.execute(select(func.max(journal_batches.c.batch))).scalar()
    return int(highest or 0) + 1


def record_batch(conn: Connection, record: BatchRecord, lines: Sequence[JournalLine]) -> None:
    """Record ``record`` and stamp its number on ``lines``, in the caller's transaction.

    ``StoreError`` when another export took the number first, or when a line is no longer
    unexported (another export took it): the caller rolls back and nothing is recorded.
    """
    try:
        conn.execute(
            insert(journal_batches).values(
                batch=record.batch,
                format=record.format,
                provider_account=record.provider_account,
                created_at=record.created_at,
                lines=record.lines,
                options=json.dumps(record.options, sort_keys=True),
                files=json.dumps(record.files),
            )
        )
    except IntegrityError:
        raise StoreError(
            f"journal batch {record.batch} was taken by another export at the same time: "
            "nothing was exported; run the export again"
        ) from None
    c = journal_lines.c
    ids = sorted({line.journal_id for line in lines})
    for part in chunks(ids):
        conn.execute(
            update(journal_lines)
            .where(one_of(conn, c.journal_id, part), c.batch.is_(None))
            .values(batch=record.batch)
        )
    stamped = conn.execute(
        select(func.count()).select_from(journal_lines).where(c.batch == record.batch)
    ).scalar()
    if stamped != len(lines):
        raise StoreError(
            f"journal batch {record.batch}: {stamped} lines stamped where {len(lines)} were "
            "read (another export or a change at the same time): nothing was exported; run "
            "the export again"
        )
