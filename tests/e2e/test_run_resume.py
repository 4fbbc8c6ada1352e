"""A `recon run` killed half-way, run again, reports exactly what an uninterrupted run reports.

Two copies of the same starting database: on one the run is SIGKILLed once some observations are
stored and then started again at once with the same --as-of (the dead run's lock is taken over:
its process is gone); on the other it runs uninterrupted. The provider is slowed down (latency,
few workers) so that polling takes seconds.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

from tests.e2e.run_support import (
    Spec,
    count,
    create_payouts,
    db_path,
    explain,
    recon,
    recon_env,
    served_world,
    start_recon,
    write_payouts_csv,
)

PAYOUTS = 1500
AMOUNTS = ("11.01", "11.02", "12.01", "13.01", "14.01", "20.00", "35.50", "100.10", "99.99", "7.05")
CSVS = ("payouts.csv", "summary.csv", "exceptions.csv", "returns.csv")
SLOW = {"concurrency": "8"}
KILL_AFTER = 200  # observations stored when the run is killed (it stores them in batches)


def _copy_database(source: str, target: str) -> None:
    """A consistent copy of a SQLite database (the backup API, whatever its journal mode)."""
    with sqlite3.connect(db_path(source)) as src, sqlite3.connect(db_path(target)) as dst:
        src.backup(dst)


def _observed_ids(database_url: str) -> list[str]:
    with sqlite3.connect(db_path(database_url), timeout=30) as conn:
        rows = conn.execute("SELECT transaction_id FROM observations WHERE run_id = 1").fetchall()
    return [row[0] for row in rows]


def test_a_run_killed_half_way_resumes_and_writes_the_reports_of_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    """The resumed run fetches only what is missing; its four CSVs equal, byte for byte."""
    killed_db = f"sqlite:///{tmp_path / 'killed.db'}"
    whole_db = f"sqlite:///{tmp_path / 'whole.db'}"
    with served_world(killed_db, receiver=False, settle_after=60) as world:
        specs = [Spec(AMOUNTS[i % len(AMOUNTS)], account=f"a{i % 25}") for i in range(PAYOUTS)]
        payouts = create_payouts(world, specs)
        world.advance(900)  # every payout reaches its final state; 14.01 ones are returned
        export = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        env = recon_env(killed_db, world.sandbox_url)
        imported = recon(env, "import", "payouts", str(export), cwd=tmp_path)
        assert imported.returncode == 0, explain(imported)
        _copy_database(killed_db, whole_db)
        world.faults(latency_ms=20)
        as_of = world.now()

        whole_env = recon_env(whole_db, world.sandbox_url, **SLOW)
        run = ("run", "--as-of", as_of, "--no-email", "--out")
        whole = start_recon(whole_env, *run, str(tmp_path / "whole"), cwd=tmp_path)
        killed_env = recon_env(killed_db, world.sandbox_url, **SLOW)
        victim = start_recon(killed_env, *run, str(tmp_path / "killed"), cwd=tmp_path)
        deadline = time.monotonic() + 60
        while count(killed_db, "SELECT COUNT(*) FROM observations") < KILL_AFTER:
            assert victim.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no observations were stored"
            time.sleep(0.02)
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
        before = _observed_ids(killed_db)
        assert KILL_AFTER <= len(before) < PAYOUTS

        resumed = recon(killed_env, *run, str(tmp_path / "killed"), cwd=tmp_path)
        out, err = whole.communicate(timeout=120)
    returns = {p.transaction_id for p in payouts if str(p.amount) == "14.01"}
    assert resumed.returncode == 0, explain(resumed)
    assert whole.returncode == 0, f"exit {whole.returncode}\n{out}\n{err}"
    assert "resuming run 1" in resumed.stderr
    fetched = len(payouts) - len(before) + len(returns)
    assert f"polled {fetched} in" in resumed.stdout  # only the rest

    after = _observed_ids(killed_db)
    assert len(after) == len(set(after)), "an id was fetched twice"
    assert set(before) <= set(after)
    assert len(after) == PAYOUTS + len(returns)  # every payout and every return, once
    assert count(killed_db, "SELECT COUNT(*) FROM runs") == 1
    for name in CSVS:
        killed = (tmp_path / "killed" / name).read_bytes()
        assert killed == (tmp_path / "whole" / name).read_bytes(), name
