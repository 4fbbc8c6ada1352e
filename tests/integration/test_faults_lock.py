"""The run lock after a crash: a dead holder on this host is taken over, a live one never is."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, insert, select

from recon.errors import LockHeld
from recon.store.lock import RunLock
from recon.store.tables import run_lock


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def hold(engine: Engine, holder: str) -> None:
    """Leave a lock row behind as a crashed run would (fresh heartbeat)."""
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            insert(run_lock).values(name="run", holder=holder, acquired_at=now, heartbeat_at=now)
        )


def holder_of(engine: Engine) -> str:
    with engine.connect() as conn:
        return str(conn.scalar(select(run_lock.c.holder).where(run_lock.c.name == "run")))


def test_a_lock_left_by_a_killed_process_of_this_host_is_taken_over_at_once(
    engine: Engine,
) -> None:
    """A run killed with SIGKILL leaves its lock row; the next run on the host takes it over."""
    hold(engine, f"{socket.gethostname()}:{dead_pid()}:deadbeef")
    with RunLock(engine) as lock:
        assert holder_of(engine) == lock.holder


@pytest.mark.parametrize(
    "holder",
    [
        pytest.param(f"{socket.gethostname()}:1:cafe", id="a-live-process-of-this-host"),
        pytest.param("another-host.example:999999:cafe", id="a-process-of-another-host"),
        pytest.param("not a holder we wrote", id="an-unreadable-holder"),
    ],
)
def test_a_lock_whose_holder_may_be_alive_is_left_alone(engine: Engine, holder: str) -> None:
    """Only a definitely dead process of this host loses its lock before it goes stale."""
    hold(engine, holder)
    with pytest.raises(LockHeld, match="another run holds the lock"):
        RunLock(engine).acquire()
    assert holder_of(engine) == holder
