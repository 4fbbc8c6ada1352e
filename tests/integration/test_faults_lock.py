"""The run lock after a crash (a dead holder on this host is taken over, a live one never is) and
after a stall (a run that lost its lock to another stops at its next write)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, insert, select, text, update

from recon import jsonparse
from recon.constants import ExitCode
from recon.errors import LockHeld, LockLost
from recon.ingest.payouts import import_payouts_csv
from recon.night.lifecycle import Heartbeat
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.settings import Settings
from recon.store.db import make_engine
from recon.store.lock import RunLock
from recon.store.tables import observations, run_lock, runs


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


# --- a run that lost its lock (fencing) ---------------------------------------------------------


class StallingProvider:
    """The provider at the HTTP boundary; with ``stall_at``, that transaction request is held
    until ``release`` is set (the run's loop keeps turning, so earlier answers get stored)."""

    def __init__(self, stall_at: int | None = None) -> None:
        self.stall_at = stall_at
        self.asked = 0
        self.stalled = threading.Event()
        self.release = threading.Event()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        tid = jsonparse.loads(request.content)["id"]
        self.asked += 1
        if self.asked == self.stall_at:
            self.stalled.set()
            await asyncio.to_thread(self.release.wait, 120)
        body = {"id": tid, "state": 6, "type": 1, "amount": 1, "currency_id": "EUR"}
        return httpx.Response(200, content=jsonparse.dumpb(body))


def count_rows(engine: Engine, sql: str) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(text(sql)) or 0)


def wait_for(engine: Engine, sql: str, value: int) -> None:
    deadline = time.monotonic() + 60
    while count_rows(engine, sql) != value:
        assert time.monotonic() < deadline, f"{sql} never reached {value}"
        time.sleep(0.05)


def test_a_run_that_lost_its_lock_stops_at_its_next_write_and_keeps_nothing_after(
    engine: Engine, db_url: str, tmp_path: Path
) -> None:
    """A run stalled past the stale limit loses the lock to a second run, which resumes the same
    run id and completes; the stalled run, going on, stops at its next write (LockHeld, exit 4)
    and the store holds each answer once."""
    csv_path = tmp_path / "payouts.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"tx-{i},r-{i},1.00,EUR\n" for i in range(6)),
        encoding="utf-8",
    )
    import_payouts_csv(engine, csv_path)
    settings = Settings(
        database_url=db_url, api_base_url="http://provider", retry_attempts=1, concurrency=1
    )
    as_of = datetime.now(UTC)
    stalling = StallingProvider(stall_at=4)
    ended: list[BaseException | RunResult] = []

    def first_run() -> None:
        first_engine = make_engine(db_url)  # its own engine: another process, in effect
        try:
            ended.append(
                run_reconciliation(
                    settings,
                    RunOptions(out_dir=tmp_path / "first", as_of=as_of, email=False),
                    transport=httpx.MockTransport(stalling),
                    engine=first_engine,
                )
            )
        except BaseException as exc:  # handed to the test thread to assert on
            ended.append(exc)
        finally:
            first_engine.dispose()

    first = threading.Thread(target=first_run)
    first.start()
    try:
        assert stalling.stalled.wait(60), "the first run never asked the provider"
        wait_for(engine, "SELECT COUNT(*) FROM observations", 3)  # its first batch is stored
        # The stall: no heartbeat for longer than the stale limit (ten minutes).
        with engine.begin() as conn:
            conn.execute(
                update(run_lock).values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=11))
            )
        second_engine = make_engine(db_url)
        try:
            second = run_reconciliation(
                settings,
                RunOptions(out_dir=tmp_path / "second", as_of=as_of, email=False),
                transport=httpx.MockTransport(StallingProvider()),
                engine=second_engine,
            )
        finally:
            second_engine.dispose()
        assert second.exit_code == ExitCode.OK
    finally:
        stalling.release.set()
        first.join(120)
    # The second run resumed the stalled run's id; each payout is answered once in it.
    with engine.connect() as conn:
        per_id = conn.execute(
            select(observations.c.run_id, observations.c.transaction_id, func.count()).group_by(
                observations.c.run_id, observations.c.transaction_id
            )
        ).all()
        statuses = conn.execute(select(runs.c.id, runs.c.status)).all()
    assert statuses == [(second.run_id, "complete")]
    assert sorted((run_id, tid) for run_id, tid, _ in per_id) == [
        (second.run_id, f"tx-{i}") for i in range(6)
    ]
    assert {n for _, _, n in per_id} == {1}, "observations doubled"
    assert len(ended) == 1
    lost = ended[0]
    assert isinstance(lost, LockHeld), f"the stalled run went on: {lost!r}"
    assert "the run lock was taken over" in str(lost)
    assert not (tmp_path / "first" / "payouts.csv").exists()
    assert count_rows(engine, "SELECT COUNT(*) FROM run_lock") == 0


def test_a_heartbeat_that_finds_another_holder_stops_and_marks_the_lock_lost(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """The run's heartbeat thread logs the loss once and beats no more; the lock says lost, so the
    run's next write fails without asking the database."""
    t0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    stalled = RunLock(engine, clock=lambda: t0)  # its beats say t0: stale ten minutes on
    stalled.acquire()
    with Heartbeat(stalled, every=0.01):
        successor = RunLock(engine, clock=lambda: t0 + timedelta(minutes=11))
        successor.acquire()
        deadline = time.monotonic() + 30
        while not stalled.lost:
            assert time.monotonic() < deadline, "the heartbeat never noticed"
            time.sleep(0.01)
        time.sleep(0.2)  # room for many more beats, had it gone on beating
    assert holder_of(engine) == successor.holder
    messages = [r.getMessage() for r in caplog.records if r.name == "recon.night.lifecycle"]
    assert messages == [
        "another run took the run lock over: no more heartbeats, and the run stops at its next "
        "write"
    ]
    with pytest.raises(LockLost, match=successor.holder), stalled.fenced_transaction():
        pass
    successor.release()
