"""Storing notifications on real databases: once each, atomically, under concurrency."""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError

from recon.constants import NotificationSource
from recon.ingest.notifications import parse_body
from recon.store.notifications import (
    NotificationRecord,
    insert_notifications,
    store_notifications,
)
from recon.store.tables import notifications

WHEN = datetime(2025, 3, 1, tzinfo=UTC)


def record(tx: str, state: int = 6) -> NotificationRecord:
    body = f'{{"merchant_id": "m", "transaction_id": "{tx}", "transaction_state": {state}}}'
    return parse_body(body, source=NotificationSource.FILE, received_at=WHEN)


def stored_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(notifications)).scalar_one())


def test_insert_counts_only_newly_stored_bodies(engine: Engine) -> None:
    """Duplicates, in the batch or already stored, are ignored and not counted."""
    first = [record("a"), record("b"), record("a")]
    assert store_notifications(engine, first) == 2
    assert store_notifications(engine, [record("b"), record("c"), record("a", 7)]) == 2
    assert stored_count(engine) == 4


def test_a_large_batch_is_stored_in_one_transaction(engine: Engine) -> None:
    """More rows than one INSERT statement carries are all stored, and counted exactly."""
    records = [record(f"t-{i}") for i in range(1234)]
    with engine.begin() as conn:
        assert insert_notifications(conn, records + records[:100]) == 1234
    assert stored_count(engine) == 1234


def test_other_errors_are_not_swallowed_with_the_duplicates(engine: Engine) -> None:
    """A row the database refuses (here: no query text) fails the insert; nothing is half-stored."""
    broken = dataclasses.replace(record("x"), query=None)  # type: ignore[arg-type]
    with pytest.raises(IntegrityError), engine.begin() as conn:
        insert_notifications(conn, [record("ok"), broken])
    assert stored_count(engine) == 0


def test_concurrent_inserts_of_the_same_bodies_store_each_once(engine: Engine) -> None:
    """Many connections inserting overlapping bodies at once: each stored once, counted once."""
    records = [record(f"t-{i}") for i in range(200)]
    new_counts: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def worker(offset: int) -> None:
        try:
            start.wait()
            # every worker inserts every body, in batches starting at different places
            mine = records[offset * 25 :] + records[: offset * 25]
            for i in range(0, len(mine), 40):
                new_counts.append(store_notifications(engine, mine[i : i + 40]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(new_counts) == 200
    assert stored_count(engine) == 200
