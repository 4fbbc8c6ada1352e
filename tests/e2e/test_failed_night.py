"""A night with the provider down, end to end: the cron wrapper runs the real `recon run` against
a port where nothing listens; the run row says failed and why, `recon status` is CRITICAL, the
wrapper's line (cron's mail) names the night and the cause, the heartbeat's /fail carries it, and
operations get a short email through a real SMTP server (aiosmtpd) on loopback. A night whose
configured import (RECON_IMPORT_FILE) fails is failed the same way, the store as it was."""

from __future__ import annotations

import email
import email.policy
import re
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.monitor_support import Monitor
from tests.e2e.run_support import (
    RECON,
    Spec,
    World,
    count,
    create_payouts,
    explain,
    import_payouts,
    recon,
    recon_env,
    served_world,
    start_recon,
    utc_now,
)

WRAPPER = Path(__file__).resolve().parents[2] / "cron" / "recon-nightly.sh"
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("flock") is None, reason="the wrapper needs flock(1)"),
]


class Inbox:
    """An SMTP handler keeping every message it receives."""

    def __init__(self) -> None:
        self.received: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(parsed)
        return "250 OK"


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def test_a_night_with_the_provider_down_is_named_failed_everywhere(
    tmp_path: Path, smtp: tuple[Inbox, int], monitor: Monitor
) -> None:
    """Refused port: row failed with the cause, status exit 2, wrapper line, ops email, /fail."""
    inbox, smtp_port = smtp
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        payouts = create_payouts(world, [Spec("10.00"), Spec("20.00")])
        env = recon_env(database_url, world.sandbox_url)
    import_payouts(env, tmp_path, [p.csv_row() for p in payouts])

    tomorrow = (utc_now() + timedelta(days=1)).date()
    night = tomorrow - timedelta(days=1)
    log_file = tmp_path / "log" / "recon.log"
    env_file = tmp_path / "recon.env"
    env_file.write_text(
        f"RECON_BIN={RECON}\n"
        f"RECON_DATABASE_URL={database_url}\n"
        f"RECON_API_BASE_URL=http://127.0.0.1:{free_port()}\n"
        "RECON_RETRY_ATTEMPTS=1\n"
        "RECON_TIMEZONE=UTC\n"
        f"RECON_OUT_DIR={tmp_path / 'out'}\n"
        "RECON_SMTP_HOST=127.0.0.1\n"
        f"RECON_SMTP_PORT={smtp_port}\n"
        "RECON_MAIL_TO=ops@example.test\n"
        f"RECON_HEARTBEAT_URL={monitor.url}\n"
        f"RECON_LOG_FILE={log_file}\n"
        f"RECON_LOCK_FILE={tmp_path / 'recon-nightly.lock'}\n",
        encoding="utf-8",
    )
    env_file.chmod(0o600)
    done = subprocess.run(
        ["bash", str(WRAPPER), "--as-of", f"{tomorrow}T02:30:00"],
        env={"PATH": "/usr/bin:/bin", "RECON_ENV_FILE": str(env_file)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    subject = f"recon: night of {night} failed: cannot reach the provider (merchant.authorize)"
    assert done.returncode == 1, explain(done)
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{subject} (recon run exited 1; see {log_file})"), line

    with sqlite3.connect(tmp_path / "recon.db") as conn:
        status, counts = conn.execute("SELECT status, counts FROM runs").fetchone()
    assert status == "failed"
    assert "cannot reach the provider (merchant.authorize)" in counts

    runs = recon(env, "runs", cwd=tmp_path)
    assert "failed" in runs.stdout
    assert runs.stdout.splitlines()[1].endswith("cannot reach the provider (merchant.authorize)")
    status_check = recon(env, "status", cwd=tmp_path)
    assert status_check.returncode == 2, explain(status_check)
    assert status_check.stdout.startswith("RECON CRITICAL - no complete run yet")
    assert "latest run 1 failed: cannot reach the provider (merchant.authorize)" in (
        status_check.stdout
    )

    (mail,) = inbox.received
    assert mail["Subject"] == subject
    assert mail["To"] == "ops@example.test"
    body = mail.get_body(("plain",))
    assert body is not None
    assert "No report was written or sent for this night." in body.get_content()

    assert monitor.paths == ["/ping/3f0e-check/start", "/ping/3f0e-check/fail"]
    assert monitor.pings[1][1].startswith(subject)


def _runs(database_url: str) -> list[tuple[str, str]]:
    with sqlite3.connect(database_url.removeprefix("sqlite:///"), timeout=30) as conn:
        return conn.execute("SELECT status, counts FROM runs ORDER BY id").fetchall()


def _stopped_half_way(
    world: World, database_url: str, tmp_path: Path, sig: signal.Signals
) -> tuple[dict[str, str], str]:
    """Import 200 payouts, start `recon run` against a slow provider and send it ``sig`` once it
    has stored some answers; the provider is fast again after. The env and the run's as-of."""
    payouts = create_payouts(world, [Spec("10.00", account=f"a{i % 9}") for i in range(200)])
    env = recon_env(database_url, world.sandbox_url, concurrency="2")
    import_payouts(env, tmp_path, [p.csv_row() for p in payouts])
    world.faults(latency_ms=20)
    as_of = world.now()
    run = start_recon(env, "run", "--as-of", as_of, "--no-email", "--out", "out", cwd=tmp_path)
    deadline = time.monotonic() + 60
    while count(database_url, "SELECT COUNT(*) FROM observations") < 20:
        assert run.poll() is None, "the run ended before it could be stopped"
        assert time.monotonic() < deadline, "no observations were stored"
        time.sleep(0.02)
    run.send_signal(sig)
    run.communicate(timeout=60)
    assert run.returncode == -sig
    world.faults(latency_ms=0)
    return env, as_of


def test_a_run_stopped_by_sigterm_is_failed_with_the_signal_and_the_next_run_resumes_it(
    tmp_path: Path,
) -> None:
    """systemd's deadline (SIGTERM): the row says failed, why; the next run completes that run."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env, as_of = _stopped_half_way(world, database_url, tmp_path, signal.SIGTERM)
        ((status, counts),) = _runs(database_url)
        assert status == "failed"
        assert "stopped by SIGTERM before it finished" in counts
        resumed = recon(env, "run", "--as-of", as_of, "--no-email", "--out", "out", cwd=tmp_path)
    assert resumed.returncode == 0, explain(resumed)
    assert "resuming run 1" in resumed.stderr
    ((status, counts),) = _runs(database_url)
    assert status == "complete"
    assert "failure" not in counts


def test_a_killed_run_not_resumed_is_closed_as_failed_naming_its_process(tmp_path: Path) -> None:
    """SIGKILL leaves `running`; a run at another as-of closes it as failed, with its pid."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env, as_of = _stopped_half_way(world, database_url, tmp_path, signal.SIGKILL)
        assert [s for s, _ in _runs(database_url)] == ["running"]
        later = str(float(as_of) + 60)
        done = recon(env, "run", "--as-of", later, "--no-email", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, explain(done)
    (first, _), (second, _) = _runs(database_url)
    assert (first, second) == ("failed", "complete")
    runs = recon(env, "runs", cwd=tmp_path)
    assert "stopped without finishing (killed, or its host went down: pid" in runs.stdout


def _wrapper_night(
    tmp_path: Path, smtp_port: int, *extra: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The cron wrapper's `recon run` on ``tmp_path/recon.db`` against a closed provider port,
    with mail, a metrics file and the env file's ``extra`` lines; the wrapper's result and log."""
    log_file = tmp_path / "log" / "recon.log"
    env_file = tmp_path / "recon.env"
    env_file.write_text(
        f"RECON_BIN={RECON}\n"
        f"RECON_DATABASE_URL=sqlite:///{tmp_path / 'recon.db'}\n"
        f"RECON_API_BASE_URL=http://127.0.0.1:{free_port()}\n"
        "RECON_RETRY_ATTEMPTS=1\n"
        "RECON_TIMEZONE=UTC\n"
        f"RECON_OUT_DIR={tmp_path / 'out'}\n"
        "RECON_SMTP_HOST=127.0.0.1\n"
        f"RECON_SMTP_PORT={smtp_port}\n"
        "RECON_MAIL_TO=ops@example.test\n"
        f"RECON_METRICS_FILE={tmp_path / 'textfile' / 'recon.prom'}\n"
        f"RECON_LOG_FILE={log_file}\n"
        f"RECON_LOCK_FILE={tmp_path / 'recon-nightly.lock'}\n" + "".join(f"{x}\n" for x in extra),
        encoding="utf-8",
    )
    env_file.chmod(0o600)
    done = subprocess.run(
        ["bash", str(WRAPPER)],
        env={"PATH": "/usr/bin:/bin", "RECON_ENV_FILE": str(env_file)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, log_file


def _exit_code_metric(metrics: Path) -> float:
    (value,) = [
        s.value
        for f in text_string_to_metric_families(metrics.read_text(encoding="utf-8"))
        for s in f.samples
        if s.name == "recon_run_exit_code"
    ]
    return value


def test_the_wrapper_imports_then_fails_an_empty_night_on_a_closed_provider_port(
    tmp_path: Path, smtp: tuple[Inbox, int]
) -> None:
    """RECON_IMPORT_FILE holds no payout, so nothing is due; the night still asks for its token,
    fails, and says why (the wrapper's line, the log, the mail), its metrics file readable by
    node_exporter's user (0644 under the wrapper's umask 077)."""
    inbox, smtp_port = smtp
    export = tmp_path / "export" / "payouts.csv"
    export.parent.mkdir()
    export.write_text("transaction_id,merchant_reference,amount,currency\n", encoding="utf-8")
    done, log_file = _wrapper_night(tmp_path, smtp_port, f"RECON_IMPORT_FILE={export}")
    assert done.returncode == 1, explain(done)
    (line,) = done.stderr.splitlines()
    assert re.fullmatch(
        r"recon: night of [0-9-]+ failed: cannot reach the provider \(merchant\.authorize\) "
        rf"\(recon run exited 1; see {re.escape(str(log_file))}\)",
        line,
    ), line
    log = log_file.read_text(encoding="utf-8")
    assert f"imported payouts from {export}: 0 rows" in log  # the import ran first
    assert log.index("imported payouts from") < log.index("failed: cannot reach the provider")
    (mail,) = inbox.received
    assert mail["Subject"] == line.partition(" (recon run exited")[0]
    metrics = tmp_path / "textfile" / "recon.prom"
    assert stat.S_IMODE(metrics.stat().st_mode) == 0o644, "another user could not read it"
    assert stat.S_IMODE(metrics.parent.stat().st_mode) == 0o755
    assert _exit_code_metric(metrics) == 1


def test_a_failed_import_fails_the_night_and_leaves_the_store_as_it_was(
    tmp_path: Path, smtp: tuple[Inbox, int]
) -> None:
    """One bad row among good ones: nothing of the file is imported, the night is failed with the
    import's problem (wrapper line, run log, `recon status`, metrics, mail), and the provider is
    never asked."""
    inbox, smtp_port = smtp
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    env = recon_env(database_url, f"http://127.0.0.1:{free_port()}")
    header = "transaction_id,merchant_reference,amount,currency\n"
    before = tmp_path / "before.csv"
    before.write_text(header + "tx-1,ref-1,10.00,EUR\n", encoding="utf-8")
    assert recon(env, "import", "payouts", str(before), cwd=tmp_path).returncode == 0
    export = tmp_path / "payouts.csv"
    export.write_text(header + "tx-2,ref-2,20.00,EUR\ntx-3,ref-3,30.00,XYZ\n", encoding="utf-8")

    done, _ = _wrapper_night(tmp_path, smtp_port, f"RECON_IMPORT_FILE={export}")
    assert done.returncode == 1, explain(done)
    (line,) = done.stderr.splitlines()
    cause = "the payouts import failed and changed nothing: "
    assert re.match(rf"recon: night of [0-9-]+ failed: {cause}{re.escape(str(export))}: ", line)
    assert "line 3: unknown currency code 'XYZ'" in line
    assert count(database_url, "SELECT COUNT(*) FROM payouts") == 1  # tx-2 is not in
    assert count(database_url, "SELECT COUNT(*) FROM observations") == 0
    status = recon(env, "status", cwd=tmp_path)
    assert status.returncode == 2, explain(status)
    assert f"latest run 1 failed: {cause}" in status.stdout
    assert _exit_code_metric(tmp_path / "textfile" / "recon.prom") == 1
    (mail,) = inbox.received
    assert mail["Subject"].startswith("recon: night of ")
    assert cause in mail["Subject"]
