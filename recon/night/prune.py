"""Retention's shell: every nightly run and ``recon db prune`` drop the raw bodies past
``RECON_KEEP_RAW_DAYS`` that are no evidence (the rule: :mod:`recon.reconcile.retention`).

The evidence (live cases, known returns) is read once; then the rows still holding a raw body
are walked oldest first, :data:`BATCH_ROWS` at a time, each batch read, judged and dropped in a
transaction of its own, so a first prune of a long history never holds one huge transaction and
a prune stopped half-way keeps what it did. A nightly run's batches are fenced by its run lock
(``run.transaction``); ``recon db prune`` takes the same lock, so it never races a run that is
opening a finding on an old answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from recon.errors import StoreError
from recon.reconcile.retention import (
    Evidence,
    RawAnswer,
    RawNotification,
    answers_to_drop,
    evidence,
    notifications_to_drop,
    raw_cutoff,
)
from recon.store.db import safe_url, schema_engine
from recon.store.lock import RunLock
from recon.store.retention import (
    Position,
    drop_raw_answers,
    drop_raw_notifications,
    open_cases,
    raw_answers,
    raw_notifications,
    return_ids,
)
from recon.words import counted

log = logging.getLogger("recon.progress")

# Rows judged per transaction: each commit frees a batch's raw text, and the walk costs the same
# per row from small batches up (docs/scaling.md, "Retention").
BATCH_ROWS = 10_000

Transaction = Callable[[], AbstractContextManager[Connection]]
Reader = Callable[..., list[tuple[Any, ...]]]


@dataclass(frozen=True, slots=True)
class PruneCounts:
    """What a prune dropped (or, dry, would drop), and what it kept as evidence."""

    answers_dropped: int = 0
    answers_kept: int = 0
    notifications_dropped: int = 0
    notifications_kept: int = 0

    def line(self, before: datetime, *, dry_run: bool) -> str:
        """One line for the operator: what went (or would go), what stayed as evidence."""
        verb = "would drop" if dry_run else "dropped"
        return (
            f"retention: raw bodies from before {before.isoformat(timespec='seconds')}: {verb} "
            f"{counted(self.answers_dropped, 'provider answer')} and "
            f"{counted(self.notifications_dropped, 'notification')}; kept as evidence "
            f"{self.answers_kept} and {self.notifications_kept}"
        )


def prune_raw(
    transaction: Transaction, *, before: datetime, dry_run: bool = False, batch: int = BATCH_ROWS
) -> PruneCounts:
    """Drop (dry: count) the raw bodies from before ``before`` that are no evidence."""
    with transaction() as conn:
        ev = evidence(open_cases(conn), return_ids(conn))
    answers = _walk(
        transaction,
        raw_answers,
        _judge_answers(ev),
        drop_raw_answers,
        before=before,
        dry_run=dry_run,
        batch=batch,
    )
    notes = _walk(
        transaction,
        raw_notifications,
        _judge_notifications(ev),
        drop_raw_notifications,
        before=before,
        dry_run=dry_run,
        batch=batch,
    )
    return PruneCounts(*answers, *notes)


def prune_night(transaction: Transaction, *, as_of: datetime, keep_days: float) -> PruneCounts:
    """A nightly run's prune (the cutoff counts from its ``as_of``), logged in one line."""
    before = raw_cutoff(as_of, keep_days)
    counts = prune_raw(transaction, before=before)
    log.info("%s", counts.line(before, dry_run=False))
    return counts


def prune_store(database_url: str, *, now: datetime, keep_days: float, dry_run: bool) -> str:
    """``recon db prune [--dry-run]``: prune under the run lock (dry: without it); its line."""
    before = raw_cutoff(now, keep_days)
    with schema_engine(database_url) as engine:
        try:
            if dry_run:
                counts = prune_raw(engine.connect, before=before, dry_run=True)
            else:
                with RunLock(engine) as lock:
                    counts = prune_raw(lock.fenced_transaction, before=before)
        except SQLAlchemyError as exc:
            reason = getattr(exc, "orig", None) or exc
            raise StoreError(
                f"the database {safe_url(engine.url)} failed during the prune: {reason}"
            ) from None
    return counts.line(before, dry_run=dry_run)


def _judge_answers(ev: Evidence) -> Callable[[list[tuple[Any, ...]]], list[int]]:
    return lambda rows: answers_to_drop((RawAnswer(*row[1:]) for row in rows), ev)


def _judge_notifications(ev: Evidence) -> Callable[[list[tuple[Any, ...]]], list[int]]:
    return lambda rows: notifications_to_drop((RawNotification(*row[1:]) for row in rows), ev)


def _walk(
    transaction: Transaction,
    read: Reader,
    judge: Callable[[list[tuple[Any, ...]]], list[int]],
    drop: Callable[[Connection, Sequence[int]], int],
    *,
    before: datetime,
    dry_run: bool,
    batch: int,
) -> tuple[int, int]:
    """(dropped, kept) over every row read, a batch per transaction, oldest first."""
    dropped = kept = 0
    after: Position | None = None
    while True:
        with transaction() as conn:
            rows = read(conn, before=before, after=after, limit=batch)
            ids = judge(rows)
            gone = len(ids) if dry_run else drop(conn, ids)
        dropped, kept = dropped + gone, kept + len(rows) - len(ids)
        if len(rows) < batch:
            return dropped, kept
        after = (rows[-1][0], rows[-1][1])
