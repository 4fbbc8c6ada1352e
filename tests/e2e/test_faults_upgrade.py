"""`recon db upgrade` killed with SIGKILL part-way, on SQLite, PostgreSQL and MariaDB.

MariaDB commits each schema change at once: a kill between a change and the version stamp leaves
the change without the stamp, and the next upgrade runs that step again. The kills are real and
timed from outside: the moment an upgrade takes the migration lock (on SQLite, opens its log) is
seen from another connection, and an uninterrupted upgrade of an empty store measures how long its
migrations take from there; each kill hits a new empty store at a moment further through that
span. Every step boundary is covered deterministically by
``tests/integration/test_upgrade_resume.py``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from recon.store.db import make_engine, parse_url, upgrade
from recon.store.migrate import current_revision
from recon.store.tables import SCHEMA_HEAD
from tests.conftest import DB_KINDS, ServerDatabases
from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    post_notification,
    recon,
    recon_env,
    served_world,
    start_recon,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(180)

KILLS = 6
NO_PROVIDER = "http://127.0.0.1:9"  # `db upgrade` never calls it


def new_store(kind: str, tmp_path: Path, server_databases: ServerDatabases, n: int) -> str:
    """An empty database of ``kind`` (a new file on SQLite)."""
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / f'store-{n}.db'}"
    return server_databases.create(kind)


def upgrade_killed_after(url: str, delay: float | None, cwd: Path) -> tuple[bool, float]:
    """Start `recon db upgrade` and SIGKILL it ``delay`` seconds after its migrations began
    (``None``: let it finish). Whether it was killed, rather than finished first (which it must
    do with exit 0), and the seconds from the start of its migrations to its end."""
    process = start_recon(recon_env(url, NO_PROVIDER), "db", "upgrade", cwd=cwd)
    try:
        wait_for_migrations(url, process)
        start = time.monotonic()
        if delay is not None:
            time.sleep(delay)
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
    finally:
        _, stderr = process.communicate(timeout=60)
    assert process.returncode in (-signal.SIGKILL, 0), stderr
    return process.returncode == -signal.SIGKILL, time.monotonic() - start


# Whether an upgrade holds the migration lock, asked from another connection. GET_LOCK's names
# are the server's: only a holder connected to this test's database counts.
_LOCK_HELD = {
    "postgresql": "SELECT 1 FROM pg_locks JOIN pg_database d ON d.oid = database"
    " WHERE locktype = 'advisory' AND objid = 7304151 AND granted AND d.datname = :db",
    "mysql": "SELECT 1 FROM information_schema.processlist"
    " WHERE id = IS_USED_LOCK('recon_schema_upgrade') AND db = :db",
}


def wait_for_migrations(url: str, process: subprocess.Popen[str]) -> None:
    """Return once the upgrade ``process`` has begun migrating (or has ended): it holds the
    migration lock; on SQLite, it has opened the write-ahead log, just before its write lock."""
    parsed = parse_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() == "sqlite":
        while process.poll() is None and not Path(f"{database}-wal").exists():
            time.sleep(0.002)
        return
    query = text(_LOCK_HELD[parsed.get_backend_name()])
    engine = create_engine(parsed, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            while process.poll() is None and conn.execute(query, {"db": database}).first() is None:
                time.sleep(0.002)
    finally:
        engine.dispose()


def half_upgraded(url: str) -> bool:
    """Whether the store holds some of recon's tables but is not at the newest revision."""
    engine = make_engine(url)
    try:
        tables = set(inspect(engine).get_table_names()) & {"runs", "payouts", "exception_cases"}
        return bool(tables) and current_revision(engine) != SCHEMA_HEAD
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", DB_KINDS)
def test_sigkill_during_db_upgrade_leaves_a_store_the_next_upgrade_finishes(
    kind: str, tmp_path: Path, server_databases: ServerDatabases
) -> None:
    """`recon db upgrade` killed at moments spread through its migrations, each on a new store:
    the next `db upgrade` of every store finishes at the newest revision, and on the last one a
    `recon run` and a callback to the receiver work."""
    _, span = upgrade_killed_after(new_store(kind, tmp_path, server_databases, 0), None, tmp_path)
    draw = random.Random(27)
    stores: list[str] = []
    killed = halves = 0
    for n in range(1, KILLS + 1):
        url = new_store(kind, tmp_path, server_databases, n)
        # Spread through the migrations of an uninterrupted upgrade, in steps of span / KILLS.
        hit, _ = upgrade_killed_after(url, span * (n - draw.random()) / KILLS, tmp_path)
        killed += hit
        halves += half_upgraded(url)
        stores.append(url)
    assert killed >= 2, "the upgrades finished before their kills"
    if kind == "mysql":
        assert halves >= 1, "no kill landed between a schema change and its version stamp"
    else:  # DDL is transactional there: a kill leaves the store as it was
        assert halves == 0
    # The first store a kill left half-way (else the last) through the CLI, a run and a
    # callback; the others through the function `db upgrade` calls, to keep the test short.
    shown = next((url for url in stores if half_upgraded(url)), stores[-1])
    for url in stores:
        if url != shown:
            engine = make_engine(url)
            try:
                upgrade(engine)
                assert current_revision(engine) == SCHEMA_HEAD
            finally:
                engine.dispose()
    done = recon(recon_env(shown, NO_PROVIDER), "db", "upgrade", cwd=tmp_path)
    assert done.returncode == 0, explain(done)
    assert f"schema at revision {SCHEMA_HEAD}" in done.stdout
    run_and_receive(shown, tmp_path)


def run_and_receive(url: str, tmp_path: Path) -> None:
    """A night over the sandbox and a callback to the receiver, both on the store at ``url``."""
    with served_world(url) as world:
        env = recon_env(url, world.sandbox_url)
        payouts = create_payouts(world, [Spec("10.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        imported = recon(env, "import", "payouts", str(export), cwd=tmp_path)
        assert imported.returncode == 0, explain(imported)
        night = recon(env, "run", "--as-of", world.now(), "--out", str(tmp_path / "out"),
                      "--no-email", cwd=tmp_path)  # fmt: skip
        assert night.returncode == 0, explain(night)
        body = {"transaction_id": payouts[0].transaction_id, "merchant_id": "sandbox-merchant",
                "state": 2, "notification_type": "TRANSACTION_STATE"}  # fmt: skip
        assert post_notification(world.receiver_url or "", body) == "stored"
