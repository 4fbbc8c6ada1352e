"""The database failing under `recon run`: unreachable at the start, or refusing writes half-way.

The run must stop with exit 1 and one clear line (no traceback, no password), keep what it already
stored, and a later run must complete.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.constants import ExitCode
from recon.sandbox.app import create_app
from recon.sandbox.config import FaultConfig, SandboxConfig
from recon.serving import serve_in_thread
from tests.e2e.run_support import explain, recon, recon_env, start_recon

pytestmark = pytest.mark.timeout(120)

PAYOUTS = 300
AS_OF = "2026-03-01T06:00:00+00:00"


@pytest.fixture(scope="module")
def api_url() -> Iterator[str]:
    """A sandbox slow enough (40 ms a request) that a run with 4 workers polls for seconds."""
    with serve_in_thread(create_app(SandboxConfig(faults=FaultConfig(latency_ms=40)))) as url:
        yield url


def test_an_unreachable_database_stops_the_run_with_exit_1_and_no_password(
    tmp_path: Path, api_url: str
) -> None:
    """A database that cannot be reached is one clear error line and exit 1."""
    url = "postgresql://recon:dbpassword-4711@127.0.0.1:1/recon"
    done = recon(recon_env(url, api_url), "run", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == ExitCode.FAILURE, explain(done)
    assert "cannot connect to database" in done.stderr
    assert "Traceback" not in done.stderr
    assert "dbpassword-4711" not in done.stderr + done.stdout


def stored(db: Path, sql: str) -> int:
    with sqlite3.connect(db, timeout=30) as conn:
        return int(conn.execute(sql).fetchone()[0] or 0)


def test_a_database_refusing_writes_mid_run_fails_cleanly_and_the_next_run_completes(
    tmp_path: Path, api_url: str
) -> None:
    """Writes refused half-way (a trigger aborting every insert) stop the run with exit 1 and a
    clear message; what was stored stays consistent; once writes work the next run completes."""
    db = tmp_path / "recon.db"
    env = recon_env(
        f"sqlite:///{db}", api_url, retry_attempts="2", retry_initial_wait="0", concurrency="4"
    )
    lines = "".join(f"db-{i:04d},ref-{i},1.{i % 100:02d},EUR\n" for i in range(PAYOUTS))
    (tmp_path / "p.csv").write_text("transaction_id,merchant_reference,amount,currency\n" + lines)
    assert recon(env, "import", "payouts", str(tmp_path / "p.csv"), cwd=tmp_path).returncode == 0

    run = start_recon(env, "run", "--out", str(tmp_path / "out"), "--as-of", AS_OF, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while stored(db, "SELECT COUNT(*) FROM observations") == 0:
        assert run.poll() is None, "the run ended before it stored anything"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with sqlite3.connect(db, timeout=30) as conn:
        conn.execute(
            "CREATE TRIGGER outage BEFORE INSERT ON observations "
            "BEGIN SELECT RAISE(ABORT, 'simulated outage: writes refused'); END"
        )
    _, stderr = run.communicate(timeout=60)
    kept = stored(db, "SELECT COUNT(*) FROM observations")
    with sqlite3.connect(db, timeout=30) as conn:
        conn.execute("DROP TRIGGER outage")
    assert run.returncode == ExitCode.FAILURE, stderr
    assert 0 < kept < PAYOUTS
    assert stored(db, "SELECT COUNT(*) FROM outcome_history") == 0  # nothing half-applied
    assert "Traceback" not in stderr, stderr
    assert "recon: error:" in stderr, stderr

    again = recon(env, "run", "--out", str(tmp_path / "out"), "--as-of", AS_OF, cwd=tmp_path)
    assert again.returncode == ExitCode.OK, explain(again)
    assert stored(db, "SELECT COUNT(*) FROM payouts WHERE outcome = 'unknown'") == PAYOUTS
