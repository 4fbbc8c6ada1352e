"""The run lock on SQLite, PostgreSQL and MariaDB: one holder at a time, stale locks taken over."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from recon.errors import LockHeld
from recon.store.db import make_engine
from recon.store.lock import RunLock
from recon.store.tables import run_lock

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A hand-moved clock, so staleness needs no sleeping."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def lock_rows(engine: Engine) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        return [(r.name, r.holder) for r in conn.execute(select(run_lock))]


def test_a_second_acquirer_gets_lock_held_naming_the_holder(engine: Engine) -> None:
    """While one run holds the lock, another is refused with who holds it and since when."""
    clock = Clock()
    first = RunLock(engine, clock=clock)
    with first:
        # A separate engine stands in for another process (or host) on the same database.
        other_engine = make_engine(str(engine.url.render_as_string(hide_password=False)))
        try:
            with pytest.raises(LockHeld) as caught, RunLock(other_engine, clock=clock):
                pass
        finally:
            other_engine.dispose()
        assert first.holder in str(caught.value)
        assert T0.isoformat() in str(caught.value)
    assert lock_rows(engine) == []


def test_a_released_lock_can_be_acquired_again(engine: Engine) -> None:
    """Leaving the block deletes the row, so the next run acquires at once."""
    with RunLock(engine):
        pass
    with RunLock(engine) as again:
        assert lock_rows(engine) == [("run", again.holder)]


def test_a_stale_lock_is_taken_over(engine: Engine) -> None:
    """A holder silent for longer than stale_after loses the lock to the next run."""
    clock = Clock()
    crashed = RunLock(engine, clock=clock)
    crashed.acquire()  # and never releases: the process died
    clock.now = T0 + timedelta(minutes=9)
    with pytest.raises(LockHeld):
        RunLock(engine, clock=clock).acquire()
    clock.now = T0 + timedelta(minutes=11)
    with RunLock(engine, clock=clock) as successor:
        assert lock_rows(engine) == [("run", successor.holder)]
        # The crashed holder, coming back, finds it lost the lock and cannot release ours.
        with pytest.raises(LockHeld):
            crashed.heartbeat()
        crashed.release()
        assert lock_rows(engine) == [("run", successor.holder)]


def test_heartbeats_keep_a_long_run_from_looking_stale(engine: Engine) -> None:
    """A run that sends heartbeats keeps its lock past stale_after."""
    clock = Clock()
    with RunLock(engine, clock=clock) as holder:
        clock.now = T0 + timedelta(minutes=8)
        holder.heartbeat()
        clock.now = T0 + timedelta(minutes=16)
        with pytest.raises(LockHeld):
            RunLock(engine, clock=clock).acquire()


def test_locks_with_different_names_are_independent(engine: Engine) -> None:
    """The lock name scopes it: a "run" lock does not block a "report" lock."""
    with RunLock(engine, "run"), RunLock(engine, "report"):
        assert sorted(name for name, _ in lock_rows(engine)) == ["report", "run"]
