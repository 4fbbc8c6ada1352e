"""`recon run` when it must hold back (a dry run, a held lock, a provider that keeps failing) and
on a quiet night when nothing changed."""

from __future__ import annotations

import asyncio
import email
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import update

from recon.serving import serve_in_thread
from recon.store.db import make_engine
from recon.store.lock import RunLock
from recon.store.tables import run_lock
from tests.e2e.run_support import (
    DAILY_RETURN_WATCH_SCHEDULE,
    DAILY_WATCH_SCHEDULE,
    RECON,
    Payout,
    Spec,
    World,
    by_id,
    count,
    create_payouts,
    exceptions_of,
    explain,
    read_csv,
    recon,
    recon_env,
    served_world,
    start_recon,
    utc_now,
    write_payouts_csv,
)

CSVS = ("payouts.csv", "summary.csv", "exceptions.csv", "returns.csv")


class Inbox:
    """An SMTP server's handler that keeps every message it is sent."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope.content)
        return "250 OK"


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on loopback and what it received."""
    handler = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


@dataclass
class Shop:
    """A served sandbox with a few payouts the merchant has imported."""

    tmp: Path
    world: World
    database_url: str
    payouts: list[Payout]

    def env(self, **settings: str) -> dict[str, str]:
        return recon_env(
            self.database_url,
            self.world.sandbox_url,
            **{
                "watch_schedule": DAILY_WATCH_SCHEDULE,
                "return_watch_schedule": DAILY_RETURN_WATCH_SCHEDULE,
                **settings,
            },
        )

    def run(self, out: str, *args: str, **settings: str) -> Any:
        return recon(
            self.env(**settings),
            "run",
            "--as-of",
            self.world.now(),
            "--out",
            str(self.tmp / out),
            *args,
            cwd=self.tmp,
        )

    def add(self, *specs: Spec, prefix: str) -> list[Payout]:
        """Pay out ``specs`` and import every payout made so far."""
        self.payouts += create_payouts(self.world, specs, prefix=prefix)
        rows = [p.csv_row() for p in self.payouts]
        export = write_payouts_csv(self.tmp / "payouts.csv", rows)
        imported = recon(self.env(), "import", "payouts", str(export), cwd=self.tmp)
        assert imported.returncode == 0, explain(imported)
        return self.payouts


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Shop]:
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        shop = Shop(tmp_path, world, database_url, [])
        shop.add(Spec("11.01"), Spec("12.01"), Spec("13.01"), Spec("25.00"), prefix="a")
        yield shop


STORE_COUNTS = {
    "runs": "SELECT COUNT(*) FROM runs",
    "observations": "SELECT COUNT(*) FROM observations",
    "history": "SELECT COUNT(*) FROM outcome_history",
    "exceptions": "SELECT COUNT(*) FROM run_exceptions",
    "returns": "SELECT COUNT(*) FROM run_returns",
    "unreconciled": "SELECT COUNT(*) FROM payouts WHERE outcome IS NULL",
    "notifications": "SELECT COUNT(*) FROM notifications",
}


def _store_counts(database_url: str) -> dict[str, int]:
    return {name: count(database_url, sql) for name, sql in STORE_COUNTS.items()}


def test_a_dry_run_writes_reports_but_stores_and_sends_nothing(
    shop: Shop, inbox: tuple[Inbox, int]
) -> None:
    """The store is unchanged and no mail goes out; the reports classify as a real run would."""
    handler, port = inbox
    mail = {"smtp_host": "127.0.0.1", "smtp_port": str(port), "mail_to": "finance@shop.test"}
    before = _store_counts(shop.database_url)
    dry = shop.run("dry", "--dry-run", **mail)
    assert dry.returncode == 0, explain(dry)
    assert _store_counts(shop.database_url) == before
    assert handler.messages == []
    for name in CSVS:
        assert (shop.tmp / "dry" / f"dry-run-{name}").is_file()
    outcomes = {r["outcome"] for r in read_csv(shop.tmp / "dry" / "dry-run-payouts.csv")}
    assert outcomes == {"aborted", "failed", "delayed", "pending"}

    # Four days on (as_of only: the provider still answers state 4), waiting payouts are
    # delayed (past eta plus the grace) and stale; the store is still untouched.
    later = f"{Decimal(shop.world.now()) + 4 * 86400}"
    future = recon(shop.env(), "run", "--dry-run", "--as-of", later, "--out",
                   str(shop.tmp / "future"), cwd=shop.tmp)  # fmt: skip
    assert future.returncode == 0, explain(future)
    assert _store_counts(shop.database_url) == before
    rows = read_csv(shop.tmp / "future" / "dry-run-payouts.csv")
    waiting = [(r["amount"], r["outcome"], r["exceptions"]) for r in rows if r["state"] == "4"]
    assert sorted(waiting) == [("13.01", "delayed", "stale"), ("25.00", "delayed", "stale")]

    real = shop.run("real", **mail)
    assert real.returncode == 0, explain(real)
    assert len(handler.messages) == 1  # the same settings do send mail on a real run
    subject = email.message_from_bytes(handler.messages[0])["Subject"]
    assert "recon" in subject
    assert "applied" not in subject  # the mail reports the run as it ended, not half-way
    dry_rows = read_csv(shop.tmp / "dry" / "dry-run-payouts.csv")
    assert read_csv(shop.tmp / "real" / "payouts.csv") == dry_rows


def test_a_second_run_while_the_lock_is_held_exits_4_at_once(shop: Shop) -> None:
    """Another holder of the database's run lock makes `recon run` stop with a clear message."""
    engine = make_engine(shop.database_url)
    try:
        with RunLock(engine):
            started = time.monotonic()
            blocked = shop.run("blocked")
            elapsed = time.monotonic() - started
        assert blocked.returncode == 4, explain(blocked)
        assert "another run holds the lock" in blocked.stderr
        assert elapsed < 10
        assert count(shop.database_url, "SELECT COUNT(*) FROM runs") == 0
        assert not (shop.tmp / "blocked" / "payouts.csv").exists()
        after = shop.run("after")  # released: the next run goes ahead
        assert after.returncode == 0, explain(after)
    finally:
        engine.dispose()


def test_a_run_stalled_until_another_took_its_lock_over_stops_with_exit_4(shop: Shop) -> None:
    """A `recon run` stopped (SIGSTOP) past the stale limit loses the lock to the next run, which
    resumes its run id and completes; continued (SIGCONT), it stops at its next write with one
    line and exit 4, writes no reports, and no answer is stored twice."""
    as_of = shop.world.now()
    shop.world.faults(latency_ms=3000)  # the first run waits on the provider when it is stopped
    stalled = start_recon(shop.env(read_timeout="60"), "run", "--as-of", as_of, "--out",
                          str(shop.tmp / "stalled"), cwd=shop.tmp)  # fmt: skip
    engine = make_engine(shop.database_url)
    try:
        deadline = time.monotonic() + 30
        while count(shop.database_url, "SELECT COUNT(*) FROM runs") == 0:
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        time.sleep(0.5)
        stalled.send_signal(signal.SIGSTOP)
        # What the stall leaves behind, without waiting ten minutes: a heartbeat gone stale.
        with engine.begin() as conn:
            conn.execute(update(run_lock).values(heartbeat_at=utc_now() - timedelta(minutes=11)))
        shop.world.faults(latency_ms=0)
        second = recon(
            shop.env(), "run", "--as-of", as_of, "--out", str(shop.tmp / "second"), cwd=shop.tmp
        )
        assert second.returncode == 0, explain(second)
        stalled.send_signal(signal.SIGCONT)
        out, err = stalled.communicate(timeout=120)
    finally:
        stalled.kill()
        engine.dispose()
    assert stalled.returncode == 4, out + err
    assert err.strip().splitlines()[-1] == (
        "recon: error: the run lock was taken over by another run, which has since released it; "
        "this run stopped and kept nothing it wrote after losing it"
    ), err
    assert "Traceback" not in err
    assert not (shop.tmp / "stalled" / "payouts.csv").exists()
    assert count(shop.database_url, "SELECT COUNT(*) FROM runs WHERE status = 'complete'") == 1
    assert count(shop.database_url, "SELECT COUNT(*) FROM runs") == 1
    per_answer = "SELECT COUNT(*) AS n FROM observations GROUP BY run_id, transaction_id"
    assert count(shop.database_url, f"SELECT MAX(n) FROM ({per_answer})") == 1
    assert count(shop.database_url, "SELECT COUNT(*) FROM observations") == len(shop.payouts)
    assert count(shop.database_url, "SELECT COUNT(*) FROM run_lock") == 0


class HeldAnswers:
    """A proxy in front of the sandbox that holds every ``transaction.get`` until :meth:`release`:
    while it holds one, the run is polling, however slow the machine."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.asked = threading.Event()
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # served with lifespan="off"
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"].endswith("transaction.get"):
            self.asked.set()
            await asyncio.to_thread(self._released.wait, 120)
        headers = {k.decode(): v.decode() for k, v in scope["headers"] if k != b"host"}
        async with httpx.AsyncClient(base_url=self.upstream) as client:
            answer = await client.post(scope["path"], content=body, headers=headers)
        await send({"type": "http.response.start", "status": answer.status_code,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        await send({"type": "http.response.body", "body": answer.content})


def test_a_payout_imported_while_a_run_polls_waits_for_the_next_run(shop: Shop) -> None:
    """Not fetch_failed (exit 0) in the run it arrived during; polled by the next run."""
    newcomer = create_payouts(shop.world, [Spec("30.00")], prefix="late")[0]
    late = write_payouts_csv(shop.tmp / "late.csv", [newcomer.csv_row()])
    held = HeldAnswers(shop.world.sandbox_url)
    with serve_in_thread(held, lifespan="off") as proxy:
        env = {**shop.env(), "RECON_API_BASE_URL": proxy}
        with start_recon(env, "run", "--as-of", shop.world.now(), "--out",
                         str(shop.tmp / "night1"), cwd=shop.tmp) as running:  # fmt: skip
            try:
                assert held.asked.wait(120), "the run never asked the provider"
                imported = recon(shop.env(), "import", "payouts", str(late), cwd=shop.tmp)
                assert imported.returncode == 0, explain(imported)
                assert count(shop.database_url, "SELECT COUNT(*) FROM observations") == 0
            finally:
                held.release()
                out, err = running.communicate(timeout=120)
    assert running.returncode == 0, out + err
    first = by_id(read_csv(shop.tmp / "night1" / "payouts.csv"))
    assert newcomer.transaction_id not in first
    assert "fetch_failed" not in (shop.tmp / "night1" / "exceptions.csv").read_text("utf-8")

    second = shop.run("night2")
    assert second.returncode == 0, explain(second)
    rows = by_id(read_csv(shop.tmp / "night2" / "payouts.csv"))
    assert rows[newcomer.transaction_id]["outcome"] not in ("", "unchecked")


def test_a_night_in_which_nothing_changed_completes_and_records_no_history(shop: Shop) -> None:
    """A second run seeing the same answers exits 0 and adds no outcome history."""
    first = shop.run("night1")
    assert first.returncode == 0, explain(first)
    history = count(shop.database_url, "SELECT COUNT(*) FROM outcome_history")
    assert history == len(shop.payouts)
    second = shop.run("night2")
    assert second.returncode == 0, explain(second)
    assert count(shop.database_url, "SELECT COUNT(*) FROM outcome_history") == history
    night1 = read_csv(shop.tmp / "night1" / "payouts.csv")
    night2 = read_csv(shop.tmp / "night2" / "payouts.csv")
    assert [r["outcome"] for r in night2] == [r["outcome"] for r in night1]
    assert [r["previous_outcome"] for r in night2] == [r["outcome"] for r in night1]


def test_reports_that_could_not_be_written_are_written_by_the_next_run_without_polling(
    shop: Shop,
) -> None:
    """An unwritable --out fails clearly (exit 2, a bad --out); the next run writes the reports."""
    (shop.tmp / "a-file").write_text("not a directory\n", encoding="utf-8")
    as_of = shop.world.now()
    env = shop.env()
    broken = recon(env, "run", "--as-of", as_of, "--out", str(shop.tmp / "a-file" / "out"),
                   cwd=shop.tmp)  # fmt: skip
    assert broken.returncode == 2, explain(broken)
    assert "cannot write the reports to" in broken.stderr
    assert "Traceback" not in broken.stderr
    # Failed, with the cause, and still resumable from its stored decision.
    failed = count(
        shop.database_url,
        "SELECT COUNT(*) FROM runs WHERE status = 'failed' AND counts LIKE ?",
        '%"cause":"the reports could not be written: cannot write the reports to%'
        '"stage":"applied"%',
    )
    assert failed == 1

    again = recon(env, "run", "--as-of", as_of, "--out", str(shop.tmp / "out"), cwd=shop.tmp)
    assert again.returncode == 0, explain(again)
    assert "polled 0 in" in again.stdout
    assert count(shop.database_url, "SELECT COUNT(*) FROM runs WHERE status = 'complete'") == 1
    outcomes = {r["outcome"] for r in read_csv(shop.tmp / "out" / "payouts.csv")}
    assert outcomes == {"aborted", "failed", "delayed", "pending"}
    assert "did not finish" not in (shop.tmp / "out" / "report.html").read_text(encoding="utf-8")


def test_recon_report_into_a_directory_it_cannot_write_prints_one_line_and_exits_2(
    shop: Shop,
) -> None:
    """Like `recon run`: a bad --out is a usage error (2), one line, no traceback."""
    assert shop.run("night1").returncode == 0
    (shop.tmp / "a-file").write_text("not a directory\n", encoding="utf-8")
    broken = recon(shop.env(), "report", "--out", str(shop.tmp / "a-file" / "out"), cwd=shop.tmp)
    assert broken.returncode == 2, explain(broken)
    assert broken.stderr.strip().splitlines() == [
        f"recon: error: cannot write the reports to {shop.tmp / 'a-file' / 'out'}: Not a directory"
    ]


def test_recon_report_on_a_full_disk_prints_one_line_and_exits_1(shop: Shop) -> None:
    """A disk that refuses the bytes (here: a file-size limit, EFBIG) is one line, exit 1, and no
    half-written report is left behind."""
    # a report.html well over 33 KB: failed payouts are listed (routine settlements are counted)
    shop.add(*[Spec("12.01")] * 80, prefix="many")
    assert shop.run("night1").returncode == 0
    out = shop.tmp / "full"

    def small_files() -> None:  # room for SQLite's 32 KiB shared-memory file, not for the report
        resource.setrlimit(resource.RLIMIT_FSIZE, (33_000, 33_000))

    full = subprocess.run(
        [RECON, "report", "--out", str(out)], env=shop.env(), cwd=shop.tmp, capture_output=True,
        text=True, timeout=120, check=False, preexec_fn=small_files,
    )  # fmt: skip
    assert full.returncode == 1, explain(full)
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1, full.stderr
    assert lines[0].startswith(f"recon: error: cannot write the reports to {out}: ")
    assert not (out / "report.html").exists()
    assert [p.name for p in out.iterdir() if not p.name.startswith(".")] == []


def test_refused_api_keys_stop_the_run_at_once_with_exit_1(shop: Shop) -> None:
    """Keys the provider refuses end the run with one clear error, not a fetch_failed per payout."""
    secret = "not-the-sandbox-secret-42"
    refused = shop.run("refused", api_secret=secret)
    assert refused.returncode == 1, explain(refused)
    assert "recon: error:" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert secret not in refused.stdout + refused.stderr
    assert not (shop.tmp / "refused" / "payouts.csv").exists()


def test_a_provider_that_keeps_failing_gives_fetch_failed_and_exit_3(shop: Shop) -> None:
    """Payouts keep their last outcome (never-fetched ones are unchecked); reports are written."""
    first = shop.run("night1")
    assert first.returncode == 0, explain(first)
    before = by_id(read_csv(shop.tmp / "night1" / "payouts.csv"))
    newcomers = shop.add(Spec("30.00"), Spec("11.02"), prefix="b")[-2:]
    shop.world.advance(86400)  # the next night: the failed and aborted payouts are due again
    shop.world.faults(error_rate=1.0, spare_authorize=True)  # a failed authorize stops a run

    failing = shop.run("night2", retry_attempts="2", retry_initial_wait="0")
    assert failing.returncode == 3, explain(failing)
    assert "could not be fetched" in failing.stdout
    rows = by_id(read_csv(shop.tmp / "night2" / "payouts.csv"))
    for tx_id, old in before.items():
        assert (rows[tx_id]["outcome"], rows[tx_id]["state"]) == (old["outcome"], old["state"])
        assert rows[tx_id]["exceptions"] == "fetch_failed"
    for payout in newcomers:
        assert rows[payout.transaction_id]["outcome"] == "unchecked"
    flagged = exceptions_of(read_csv(shop.tmp / "night2" / "exceptions.csv"))
    assert flagged == {(tx_id, "fetch_failed"): "new" for tx_id in rows}
    assert {r["outcome"] for r in rows.values()} <= {"aborted", "failed", "delayed", "pending",
                                                    "unchecked"}  # fmt: skip
    status = count(shop.database_url, "SELECT COUNT(*) FROM runs WHERE status = 'incomplete'")
    assert status == 1

    shop.world.faults(error_rate=0.0)
    recovered = shop.run("night3")
    assert recovered.returncode == 0, explain(recovered)
    statuses = exceptions_of(read_csv(shop.tmp / "night3" / "exceptions.csv"))
    assert set(statuses.values()) == {"cleared"}
    outcomes = by_id(read_csv(shop.tmp / "night3" / "payouts.csv"))
    assert outcomes[newcomers[1].transaction_id]["outcome"] == "aborted"
