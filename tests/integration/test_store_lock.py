"""The run lock on SQLite, PostgreSQL and MariaDB: one holder at a time, stale locks taken over,
and writes fenced: a holder that lost the lock writes nothing more."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, insert, select

from recon.errors import LockHeld, LockLost
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


# --- fencing: every write of a run checks that its lock is still its own ----------------------


def test_a_fenced_write_commits_and_refreshes_the_heartbeat_while_the_lock_is_held(
    engine: Engine,
) -> None:
    """The write inside commits, and the heartbeat moves to the writer's "now"."""
    clock = Clock()
    with RunLock(engine, clock=clock) as holder:
        clock.now = T0 + timedelta(minutes=5)
        with holder.fenced_transaction() as conn:
            conn.execute(insert(run_lock).values(name="marker", holder="x", acquired_at=T0,
                                                 heartbeat_at=T0))  # fmt: skip
        with engine.connect() as conn:
            beat = conn.scalar(select(run_lock.c.heartbeat_at).where(run_lock.c.name == "run"))
        assert beat == clock.now
        assert sorted(lock_rows(engine)) == [("marker", "x"), ("run", holder.holder)]


def test_a_fenced_write_after_a_takeover_raises_lock_lost_and_writes_nothing(
    engine: Engine,
) -> None:
    """A holder stalled past stale_after finds, at its next write, who took the lock; the
    transaction rolls back."""
    clock = Clock()
    stalled = RunLock(engine, clock=clock)
    stalled.acquire()
    clock.now = T0 + timedelta(minutes=11)
    with RunLock(engine, clock=clock) as successor:
        with pytest.raises(LockLost) as caught, stalled.fenced_transaction() as conn:
            conn.execute(insert(run_lock).values(name="marker", holder="x", acquired_at=T0,
                                                 heartbeat_at=T0))  # fmt: skip
        assert str(caught.value) == (
            f"the run lock was taken over by {successor.holder}; this run stopped and kept "
            "nothing it wrote after losing it"
        )
        assert isinstance(caught.value, LockHeld)  # exit 4, as for a lock held at the start
        assert lock_rows(engine) == [("run", successor.holder)]
        assert stalled.lost
        assert not successor.lost


def test_a_heartbeat_that_finds_another_holder_marks_the_lock_lost_for_the_next_write(
    engine: Engine,
) -> None:
    """The lost lock is remembered: later writes fail naming the taker, even once it released."""
    clock = Clock()
    stalled = RunLock(engine, clock=clock)
    stalled.acquire()
    clock.now = T0 + timedelta(minutes=11)
    with RunLock(engine, clock=clock) as successor, pytest.raises(LockLost):
        stalled.heartbeat()
    assert lock_rows(engine) == []
    with pytest.raises(LockLost, match=successor.holder), stalled.fenced_transaction():
        pass
    with pytest.raises(LockLost, match=successor.holder):
        stalled.heartbeat()


def test_a_takeover_attempted_during_a_fenced_write_finds_the_lock_fresh(engine: Engine) -> None:
    """The fence holds the lock row until the commit, so a stale takeover cannot slip in between
    the check and the commit: it waits, then sees the heartbeat the write refreshed."""
    clock = Clock()
    holder = RunLock(engine, clock=clock)
    holder.acquire()
    clock.now = T0 + timedelta(minutes=11)  # stale by the last beat, until the write refreshes it
    other_engine = make_engine(str(engine.url.render_as_string(hide_password=False)))
    refused: list[BaseException] = []

    def take_over() -> None:
        try:
            RunLock(other_engine, clock=clock).acquire()
        except LockHeld as exc:
            refused.append(exc)

    try:
        with holder.fenced_transaction():
            taker = threading.Thread(target=take_over)
            taker.start()
            taker.join(0.5)  # gives it the chance to come in between; it must wait instead
        taker.join(60)
    finally:
        other_engine.dispose()
    assert len(refused) == 1
    assert lock_rows(engine) == [("run", holder.holder)]
    holder.release()
