"""`recon run` killed with SIGKILL while it writes its reports, and two runs started at once.

A report file is read by finance's spreadsheets and mailed on: it must never be half-written. The
runs are real subprocesses against a served sandbox and a SQLite store; the payouts are ids the
provider does not know, so every run polls (and reports) all of them.
"""

from __future__ import annotations

import csv
import io
import os
import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from recon.constants import ExitCode
from recon.sandbox.app import create_app
from recon.sandbox.config import FaultConfig, SandboxConfig
from recon.serving import serve_in_thread
from tests.e2e.run_support import explain, recon, recon_env, start_recon

pytestmark = pytest.mark.timeout(120)

AS_OF = "2026-03-01T06:00:00+00:00"
PAYOUTS = 400
CSVS = ("payouts.csv", "summary.csv", "exceptions.csv", "returns.csv")
PNG_END = b"IEND\xaeB`\x82"


@dataclass
class Shop:
    """A served sandbox and a payouts file the merchant imports into each store."""

    api_url: str
    csv: Path
    root: Path

    def store(self, name: str, **settings: str) -> tuple[dict[str, str], str]:
        """A new SQLite store with the payouts imported: its `recon` environment and URL."""
        url = f"sqlite:///{self.root / f'{name}.db'}"
        env = recon_env(url, self.api_url, retry_attempts="2", retry_initial_wait="0", **settings)
        done = recon(env, "import", "payouts", str(self.csv), cwd=self.root)
        assert done.returncode == 0, explain(done)
        return env, url


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    """The sandbox on loopback (a little latency so runs overlap) and 400 payouts."""
    root = tmp_path_factory.mktemp("crash")
    lines = [f"crash-{i:05d},ref-{i:05d},{i % 97 + 1}.{i % 100:02d},EUR" for i in range(PAYOUTS)]
    path = root / "payouts.csv"
    path.write_text("transaction_id,merchant_reference,amount,currency\n" + "\n".join(lines) + "\n")
    config = SandboxConfig(faults=FaultConfig(latency_ms=1))
    with serve_in_thread(create_app(config)) as url:
        yield Shop(url, path, root)


def run_args(out: Path) -> list[str]:
    return ["run", "--out", str(out), "--as-of", AS_OF, "--no-email"]


def complete(out: Path, reference: Path) -> list[str]:
    """What is wrong with the report files in ``out``: each is absent or whole and parseable."""
    problems: list[str] = []
    for name in CSVS:
        path = out / name
        if not path.exists():
            continue
        want = list(csv.reader(io.StringIO((reference / name).read_text(encoding="utf-8"))))
        try:
            got = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        except (csv.Error, UnicodeDecodeError) as exc:
            problems.append(f"{name}: unreadable: {exc}")
            continue
        if not got or got[0] != want[0] or len(got) != len(want):
            problems.append(f"{name}: {len(got)} rows, want {len(want)} with the same header")
    html = out / "report.html"
    if html.exists() and not html.read_text(encoding="utf-8").rstrip().endswith("</html>"):
        problems.append("report.html is cut short")
    chart = out / "chart.png"
    if chart.exists() and not chart.read_bytes().endswith(PNG_END):
        problems.append("chart.png is cut short")
    return problems


def contract_rows(path: Path, columns: int) -> list[list[str]]:
    """The rows of a CSV, restricted to its leading contract columns, sorted."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return [rows[0][:columns], *sorted(r[:columns] for r in rows[1:])]


def wait_for_report_writing(process: subprocess.Popen[str], out: Path, limit: float) -> bool:
    """Wait until the run starts writing a report file (a temporary file appears in ``out``)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.poll() is None:
        if out.is_dir() and any(p.name.endswith(".tmp") for p in out.iterdir()):
            return True
        time.sleep(0.001)
    return False


def test_sigkill_while_writing_reports_never_leaves_a_half_written_file(shop: Shop) -> None:
    """Killed at random moments of report writing (and before), every report file is absent,
    or whole; the run after the kills succeeds with the CSVs of an uninterrupted run."""
    reference = shop.root / "reference"
    env, _ = shop.store("reference")
    done = recon(env, *run_args(reference), cwd=shop.root)
    assert done.returncode == ExitCode.OK, explain(done)

    env, url = shop.store("killed")
    out = shop.root / "killed-out"
    draw = random.Random(20260301)
    hits = 0
    for attempt in range(5):
        process = start_recon(env, *run_args(out), cwd=shop.root)
        try:
            if attempt == 2:  # now and then somewhere earlier: polling or storing
                time.sleep(draw.uniform(0.3, 2.0))
            elif wait_for_report_writing(process, out, limit=60):
                hits += 1
                time.sleep(draw.uniform(0.0, 0.15))
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
        finally:
            _, stderr = process.communicate(timeout=30)
        # Killed, or finished before the kill: never refused by the lock of a killed predecessor.
        assert process.returncode in (-signal.SIGKILL, ExitCode.OK), stderr
        assert complete(out, reference) == [], f"after kill {attempt}"
    assert hits >= 2, "the kills never landed while reports were written"

    final = recon(env, *run_args(out), cwd=shop.root)
    assert final.returncode == ExitCode.OK, explain(final)
    assert complete(out, reference) == []
    assert contract_rows(out / "payouts.csv", 9) == contract_rows(reference / "payouts.csv", 9)
    assert (out / "summary.csv").read_bytes() == (reference / "summary.csv").read_bytes()
    pairs = contract_rows(out / "exceptions.csv", 2)
    assert pairs == contract_rows(reference / "exceptions.csv", 2)
    # Every observation is stored once per run however often the run was killed and resumed.
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        repeated = conn.execute(
            "SELECT run_id, transaction_id FROM observations WHERE status != 'error' "
            "GROUP BY run_id, transaction_id HAVING COUNT(*) > 1"
        ).fetchall()
    assert repeated == []


def test_two_runs_started_at_once_never_count_anything_twice(shop: Shop) -> None:
    """Three runs started together on one store: the others exit 4 (locked) while one works,
    and the store holds each observation, history row and exception once per run."""
    env, url = shop.store("together")
    outs = [shop.root / f"together-{i}" for i in range(3)]
    processes = [start_recon(env, *run_args(out), cwd=shop.root) for out in outs]
    codes = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=90)
        codes.append(process.returncode)
        if process.returncode == ExitCode.LOCKED:
            assert "another run holds the lock" in stderr, stderr
            assert "Traceback" not in stderr
        else:
            assert process.returncode == ExitCode.OK, (stdout, stderr)
    assert ExitCode.OK in codes, codes
    assert set(codes) <= {ExitCode.OK, ExitCode.LOCKED}, codes
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        runs = conn.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
        assert dict(runs) == {"complete": codes.count(ExitCode.OK)}
        checks = {
            "observations": "SELECT run_id, transaction_id FROM observations "
            "GROUP BY run_id, transaction_id HAVING COUNT(*) > 1",
            "history": "SELECT run_id, transaction_id FROM outcome_history "
            "GROUP BY run_id, transaction_id HAVING COUNT(*) > 1",
            "exceptions": "SELECT run_id, item_id, flag FROM run_exceptions "
            "GROUP BY run_id, item_id, flag HAVING COUNT(*) > 1",
        }
        for name, sql in checks.items():
            assert conn.execute(sql).fetchall() == [], name
        per_run = conn.execute("SELECT COUNT(*) FROM observations GROUP BY run_id").fetchall()
        assert per_run == [(PAYOUTS,)] * codes.count(ExitCode.OK)
        assert conn.execute("SELECT COUNT(*) FROM run_lock").fetchone() == (0,)
