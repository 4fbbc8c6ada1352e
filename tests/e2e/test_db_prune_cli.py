"""`recon db prune [--dry-run]`: says what would go, drops it, never races a
run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert, select

from recon.constants import ExitCode
from recon.store.db import ensure_schema, make_engine
from recon.store.lock import RunLock
from recon.store.tables import observations, runs
from tests.e2e.run_support import explain, recon, recon_env

NOW = datetime.now(UTC)


def _store(tmp_path: Path) -> str:
    """A store with one answer 100 days old, one 10 days old and one type-13 answer 100 days old."""
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    engine = make_engine(url)
    ensure_schema(engine)
    old, recent = NOW - timedelta(days=100), NOW - timedelta(days=10)
    with engine.begin() as conn:
        run_id = conn.execute(
            insert(runs).values(started_at=old, finished_at=old, as_of=old, status="complete",
                                counts="{}", host="h", pid=1)
        ).inserted_primary_key[0]  # fmt: skip
        conn.execute(
            insert(observations),
            [{"id": i, "run_id": run_id, "transaction_id": tid, "fetched_at": at, "status": "ok",
              "type": typ, "raw": "{}"}
             for i, tid, at, typ in [(1, "P1", old, 1), (2, "P2", recent, 1), (3, "R1", old, 13)]],
        )  # fmt: skip
    engine.dispose()
    return url


def _held(url: str) -> set[int]:
    engine = make_engine(url)
    with engine.connect() as conn:
        ids = set(conn.execute(select(observations.c.id).where(observations.c.raw.is_not(None))))
    engine.dispose()
    return {row[0] for row in ids}


def test_db_prune_dry_run_says_what_goes_then_prune_drops_it(tmp_path: Path) -> None:
    """--dry-run counts the 100-day-old plain answer and changes nothing; the prune drops it."""
    url = _store(tmp_path)
    env = recon_env(url, "http://127.0.0.1:9")
    dry = recon(env, "db", "prune", "--dry-run", cwd=tmp_path)
    assert dry.returncode == ExitCode.OK, explain(dry)
    assert (
        "would drop 1 provider answer and 0 notifications; kept as evidence 1 and 0" in dry.stdout
    )
    assert _held(url) == {1, 2, 3}
    done = recon(env, "db", "prune", cwd=tmp_path)
    assert done.returncode == ExitCode.OK, explain(done)
    assert "dropped 1 provider answer" in done.stdout
    assert _held(url) == {2, 3}


def test_db_prune_waits_for_no_run_a_run_holding_the_lock_exits_4(tmp_path: Path) -> None:
    """While a run holds the run lock the prune changes nothing and exits 4 (LOCKED)."""
    url = _store(tmp_path)
    engine = make_engine(url)
    try:
        with RunLock(engine):
            held = recon(recon_env(url, "http://127.0.0.1:9"), "db", "prune", cwd=tmp_path)
    finally:
        engine.dispose()
    assert held.returncode == ExitCode.LOCKED, explain(held)
    assert _held(url) == {1, 2, 3}
