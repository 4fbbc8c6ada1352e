"""``recon import notifications``: a JSONL file of notification bodies into the store, all of it
or nothing; each body is read as the receiver reads one
(:func:`recon.ingest.notifications.parse_body`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine

from recon.constants import DEFAULT_ACCOUNT, NotificationSource
from recon.errors import InputError
from recon.ingest.allornothing import all_or_nothing
from recon.ingest.notifications import BodyError, parse_body
from recon.store.db import ensure_schema
from recon.store.notifications import NotificationRecord, insert_notifications
from recon.words import counted

IMPORT_BATCH = 500


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """What an import did: bodies read, newly stored, and already known (in the store or file)."""

    bodies: int
    new: int

    @property
    def duplicates(self) -> int:
        return self.bodies - self.new

    def summary(self, source: object) -> str:
        """The one line the CLI prints."""
        return f"{source}: {self.new} new, {counted(self.duplicates, 'duplicate')}"


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                stripped = line.strip()
                if stripped:
                    yield number, stripped
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def import_notifications(
    engine: Engine,
    path: Path,
    *,
    received_at: datetime | None = None,
    account: str = DEFAULT_ACCOUNT,
) -> ImportCounts:
    """Import a JSONL file of notification bodies, each stored under ``account``: all of it, or
    nothing if any line is bad.

    One pass in batches inside one transaction (:mod:`recon.ingest.allornothing`), so memory
    stays flat for large files; every bad line is reported with its number and field.
    """
    ensure_schema(engine)
    when = received_at or datetime.now(UTC)
    bodies = new = 0
    batch: list[NotificationRecord] = []
    with all_or_nothing(engine, str(path)) as (conn, problems):
        for number, line in _lines(path):
            try:
                batch.append(
                    parse_body(
                        line, source=NotificationSource.FILE, received_at=when, account=account
                    )
                )
            except BodyError as exc:
                problems.add(f"line {number}", exc.problems)
                continue
            bodies += 1
            if len(batch) >= IMPORT_BATCH:
                if not problems:
                    new += insert_notifications(conn, batch)
                batch.clear()
        if not problems:
            new += insert_notifications(conn, batch)
    return ImportCounts(bodies=bodies, new=new)
