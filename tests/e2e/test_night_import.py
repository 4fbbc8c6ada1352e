"""The payouts import a nightly run starts with (RECON_IMPORT_SQL with RECON_IMPORT_SOURCE_URL, or
RECON_IMPORT_FILE): the run reconciles what it imported that night; settings that cannot work
stop it at start; the source's password is never shown; a dry run imports nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import count, explain, recon, recon_env
from tests.e2e.test_run_authorize import closed_port_url, counting_provider
from tests.integration.provider_standin import serve_standin

pytestmark = pytest.mark.timeout(120)

QUERY = "SELECT id AS transaction_id, ref AS merchant_reference, amount, currency FROM orders_paid"


def shop(tmp_path: Path) -> str:
    """The merchant's own database: two payouts in a table of its own naming."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders_paid (id TEXT, ref TEXT, amount TEXT, currency TEXT)")
        conn.executemany(
            "INSERT INTO orders_paid VALUES (?, ?, ?, ?)",
            [("tx-1", "order-1", "10.00", "EUR"), ("tx-2", "order-2", "20.00", "EUR")],
        )
    return f"sqlite:///{path}"


def query_file(tmp_path: Path) -> Path:
    path = tmp_path / "payouts.sql"
    path.write_text(QUERY + "\n", encoding="utf-8")
    return path


def test_a_night_imports_from_the_query_then_reconciles_what_came_in(tmp_path: Path) -> None:
    """Two payouts in the shop's table: imported, then asked about, the same night."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    operations: list[str] = []
    with serve_standin(counting_provider(operations)) as standin:
        env = recon_env(
            database_url,
            standin.url,
            import_sql=str(query_file(tmp_path)),
            import_source_url=shop(tmp_path),
        )
        ran = recon(env, "run", "--no-email", "--out", "out", cwd=tmp_path)
    assert ran.returncode == 0, explain(ran)
    assert "imported payouts from the query: 2 rows, 2 inserted" in ran.stderr
    assert operations == ["merchant.authorize", "transaction.get", "transaction.get"]
    settled = "SELECT COUNT(*) FROM payouts WHERE outcome = 'settled'"
    assert count(database_url, settled) == 2


def test_a_dry_run_imports_nothing(tmp_path: Path) -> None:
    """A dry run stores nothing, its night's import included."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    operations: list[str] = []
    with serve_standin(counting_provider(operations)) as standin:
        env = recon_env(
            database_url,
            standin.url,
            import_sql=str(query_file(tmp_path)),
            import_source_url=shop(tmp_path),
        )
        ran = recon(env, "run", "--dry-run", "--no-email", "--out", "out", cwd=tmp_path)
    assert ran.returncode == 0, explain(ran)
    assert "imported payouts" not in ran.stderr
    assert count(database_url, "SELECT COUNT(*) FROM payouts") == 0


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        pytest.param(
            {"import_sql": "payouts.sql"},
            "import_source_url (default): RECON_IMPORT_SQL and RECON_IMPORT_SOURCE_URL go together",
            id="query-without-source",
        ),
        pytest.param(
            {"import_source_url": "sqlite:///shop.db"},
            "RECON_IMPORT_SQL and RECON_IMPORT_SOURCE_URL go together",
            id="source-without-query",
        ),
        pytest.param(
            {"import_file": "payouts.csv", "import_sql": "payouts.sql"},
            "set RECON_IMPORT_FILE or RECON_IMPORT_SQL, not both",
            id="both",
        ),
    ],
)
def test_import_settings_that_cannot_work_stop_the_run_at_start(
    tmp_path: Path, settings: dict[str, str], says: str
) -> None:
    """Exit 2 naming the settings; no run is opened."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    ran = recon(recon_env(database_url, closed_port_url(), **settings), "run", cwd=tmp_path)
    assert ran.returncode == ExitCode.USAGE, explain(ran)
    assert says in ran.stderr
    assert not (tmp_path / "recon.db").exists()


def test_the_source_password_is_never_shown(tmp_path: Path) -> None:
    """A source that cannot be reached fails the night; its password is in no output, in the run
    log's cause, nor in `recon config check`."""
    password = "s3cret-reader-pw"
    source = (
        f"postgresql+psycopg://reader:{password}@{closed_port_url().removeprefix('http://')}/shop"
    )
    env = recon_env(
        f"sqlite:///{tmp_path / 'recon.db'}",
        closed_port_url(),
        import_sql=str(query_file(tmp_path)),
        import_source_url=source,
    )
    ran = recon(env, "run", "--no-email", "--out", "out", cwd=tmp_path)
    assert ran.returncode == ExitCode.FAILURE, explain(ran)
    changed_nothing = "failed: the payouts import failed and changed nothing: "
    assert f"{changed_nothing}cannot connect to database postgresql+psycopg://reader:***@" in (
        ran.stderr
    )
    runs = recon(env, "runs", cwd=tmp_path)
    checked = recon(env, "config", "check", cwd=tmp_path)
    outputs: list[Any] = [ran, runs, checked]
    for done in outputs:
        assert password not in done.stdout + done.stderr, explain(done)
    assert "postgresql+psycopg://reader:***@" in checked.stdout
