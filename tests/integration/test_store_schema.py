"""The schema on SQLite, PostgreSQL and MariaDB: migrations, engines and connection failures."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, Engine, inspect, text

from recon.errors import ConfigError, StoreError
from recon.store.db import ensure_schema, make_engine, parse_url, upgrade, write_transaction
from recon.store.migrate import alembic_config, current_revision, head_revision
from recon.store.tables import SCHEMA_HEAD, VERSION_TABLE, metadata
from tests.conftest import ServerDatabases


def test_upgrading_twice_creates_the_schema_once(empty_db_url: str) -> None:
    """`db upgrade` on an empty database creates every table; a second upgrade changes nothing."""
    engine = make_engine(empty_db_url)
    try:
        assert current_revision(engine) is None
        upgrade(engine)
        tables = set(inspect(engine).get_table_names())
        upgrade(engine)
        ensure_schema(engine)
        assert current_revision(engine) == head_revision()
        assert set(inspect(engine).get_table_names()) == tables
        assert tables == set(metadata.tables) | {VERSION_TABLE}
    finally:
        engine.dispose()


def test_the_migrated_schema_matches_the_table_definitions(engine: Engine) -> None:
    """Alembic finds no difference between the migrated database and recon.store.tables."""
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
        )
        assert compare_metadata(context, metadata) == []


ID_COLUMNS = {
    "transaction_id",
    "merchant_reference",
    "bank_account_id",
    "customer_id",
    "merchant_id",
    "session_id",
    "related_transaction_id",
    "original_transaction_id",
    "item_id",
}


@pytest.mark.mysql
def test_mysql_id_columns_use_a_binary_collation(server_databases: ServerDatabases) -> None:
    """On MariaDB every id column compares bytes (utf8mb4_bin), so `abc` and `ABC` differ."""
    engine = make_engine(server_databases.session_url("mysql"))
    try:
        ensure_schema(engine)
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT table_name, column_name, collation_name FROM information_schema.columns"
                    " WHERE table_schema = DATABASE()"
                )
            ).all()
    finally:
        engine.dispose()
    collations = {(t, c): coll for t, c, coll in rows if c in ID_COLUMNS}
    assert len(collations) >= 12
    assert set(collations.values()) == {"utf8mb4_bin"}


def test_a_bare_postgresql_url_gets_the_psycopg_driver() -> None:
    """`postgresql://` and `postgres://` mean psycopg 3."""
    assert parse_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert parse_url("postgres://u@h/db").drivername == "postgresql+psycopg"


def test_a_bare_mysql_or_mariadb_url_gets_pymysql_and_utf8mb4() -> None:
    """`mysql://` and `mariadb://` mean PyMySQL with the utf8mb4 character set."""
    for url in ("mysql://u@h/db", "mariadb://u@h/db"):
        parsed = parse_url(url)
        assert parsed.drivername == "mysql+pymysql"
        assert parsed.query["charset"] == "utf8mb4"


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    """The embedded database can be shared by the receiver and a run."""
    engine = make_engine(f"sqlite:///{tmp_path}/x.db")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://recon:s3cr3t-pw@127.0.0.1:1/recon",
        "mysql://recon:s3cr3t-pw@127.0.0.1:1/recon",
    ],
)
def test_a_connection_failure_is_a_store_error_without_the_password(url: str) -> None:
    """An unreachable server raises StoreError naming the database, never the password."""
    engine = make_engine(url)
    try:
        with pytest.raises(StoreError) as caught:
            ensure_schema(engine)
    finally:
        engine.dispose()
    message = str(caught.value)
    assert "127.0.0.1" in message
    assert "s3cr3t-pw" not in message
    assert "***" in message


@pytest.mark.parametrize(
    "url",
    [
        "postgresql:/recon:s3cr3t-pw@127.0.0.1/recon",
        "postgresql://recon:s3cr3t-pw@127.0.0.1:notaport/recon",
        "postgresql://recon:s3cr3t-pw@127.0.0.1:70000/recon",
        "mysql+pymysql://recon:s3cr3t@pw@127.0.0.1/recon",
        "nosuchdb://recon:s3cr3t-pw@127.0.0.1/recon",
        "recon:s3cr3t-pw@127.0.0.1/recon",
    ],
)
def test_a_url_recon_could_only_misread_is_a_config_error_without_the_password(url: str) -> None:
    """Malformed, a bad port, an unencoded '@', an unknown dialect: ConfigError, password masked."""
    with pytest.raises(ConfigError) as caught:
        make_engine(url)
    message = str(caught.value)
    assert "s3cr3t" not in message
    assert "pw@127" not in message
    assert "\n" not in message


def test_the_schema_head_recon_checks_is_alembics_newest_revision() -> None:
    """ensure_schema compares the stored revision with SCHEMA_HEAD without Alembic: a migration
    added without moving SCHEMA_HEAD would never run on a store at the previous head."""
    assert head_revision() == SCHEMA_HEAD


def test_a_store_at_an_older_revision_is_upgraded_by_ensure_schema(empty_db_url: str) -> None:
    """The quick check sends anything but the newest revision to Alembic."""
    engine = make_engine(empty_db_url)
    try:
        with _upgraded_to(engine, "0005"):
            pass
        assert current_revision(engine) == "0005"
        ensure_schema(engine)
        assert current_revision(engine) == SCHEMA_HEAD
    finally:
        engine.dispose()


@contextmanager
def _upgraded_to(engine: Engine, revision: str) -> Iterator[Connection]:
    """A write transaction on ``engine``'s store, upgraded first to the older ``revision``."""
    with write_transaction(engine) as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        yield conn


def _store_at_0007_with_cases(url: str, cases: list[tuple[str, str, str, int | None]]) -> Engine:
    """A store at revision 0007 with one run and these cases (id, flag, state, ended_run_id),
    each on return ``r-<flag>``."""
    engine = make_engine(url)
    with _upgraded_to(engine, "0007") as conn:
        conn.execute(
            text(
                "INSERT INTO runs (id, started_at, as_of, status, host, pid, counts)"
                " VALUES (1, '2026-11-20 05:00:00', '2026-11-20 05:00:00', 'complete', 'h', 1,"
                " '{}')"
            )
        )
        for eid, flag, state, ended in cases:
            conn.execute(
                text(
                    "INSERT INTO exception_cases (exception_id, item_kind, item_id, flag, state,"
                    " opened_run_id, opened_at, last_seen_run_id, ended_run_id, version)"
                    " VALUES (:eid, 'return', :item, :flag, :state, 1, '2026-11-20 05:00:00',"
                    " 1, :ended, 1)"
                ),
                {"eid": eid, "item": f"r-{flag}", "flag": flag, "state": state, "ended": ended},
            )
    return engine


def _live(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT exception_id FROM exception_cases WHERE ended_run_id IS NULL")
        )
        return {str(r[0]) for r in rows}


def test_findings_that_ended_unclosed_are_open_again_after_the_upgrade(empty_db_url: str) -> None:
    """0008: a claim reported once (ended while open or acknowledged) is live again; a resolved or
    cleared one stays ended; where a later case carries the finding, the ended one stays ended."""
    engine = _store_at_0007_with_cases(
        empty_db_url,
        [
            ("E1-1", "return_unverified", "open", 1),
            ("E1-2", "notification_unreadable", "acknowledged", 1),
            ("E1-3", "return_without_payout", "resolved", 1),
            ("E1-4", "return_amount_mismatch", "cleared", 1),
            ("E1-5", "return_on_unsettled", "open", 1),
            ("E1-6", "return_on_unsettled", "open", None),
        ],
    )
    try:
        ensure_schema(engine)
        assert _live(engine) == {"E1-1", "E1-2", "E1-6"}
    finally:
        engine.dispose()


def test_a_store_whose_findings_cannot_be_carried_over_is_left_as_it_was(
    empty_db_url: str,
) -> None:
    """Two live cases of one finding: the upgrade stops naming it, and the store stays at 0007."""
    engine = _store_at_0007_with_cases(
        empty_db_url,
        [
            ("E1-1", "return_unverified", "open", 1),
            ("E1-7", "return_on_unsettled", "open", None),
            ("E1-8", "return_on_unsettled", "acknowledged", None),
        ],
    )
    try:
        with pytest.raises(StoreError, match="return_on_unsettled on return r-return_on_unsettled"):
            ensure_schema(engine)
        assert current_revision(engine) == "0007"
        assert _live(engine) == {"E1-7", "E1-8"}
    finally:
        engine.dispose()


def test_ids_named_by_notifications_before_0011_become_provider_items_once(
    empty_db_url: str,
) -> None:
    """0011: a callback's id and a return's original that no payout has become items (not yet
    asked); a recorded payout's callback does not; running the upgrade's backfill twice adds
    nothing."""
    engine = make_engine(empty_db_url)
    try:
        with _upgraded_to(engine, "0010") as conn:
            conn.execute(
                text(
                    "INSERT INTO payouts (transaction_id, merchant_reference, amount_minor,"
                    " currency, imported_at) VALUES ('rec-1', 'r', 100, 'EUR',"
                    " '2026-11-20 05:00:00')"
                )
            )
            for n, (kind, tid, orig) in enumerate(
                [("transaction", "gHostPaid1", None), ("transaction", "rec-1", None),
                 ("transaction", "gHostPaid1", None), ("returned_funds", "ret-1", "gone-1")]
            ):  # fmt: skip
                conn.execute(
                    text(
                        "INSERT INTO notifications (dedupe_key, kind, transaction_id,"
                        " original_transaction_id, query, source, received_at)"
                        " VALUES (:key, :kind, :tid, :orig, '', 'receiver',"
                        " '2026-11-20 05:00:00')"
                    ),
                    {"key": f"{n:064d}", "kind": kind, "tid": tid, "orig": orig},
                )
        ensure_schema(engine)
        # The whole revision again, as after a kill before its version stamp (MariaDB).
        with write_transaction(engine) as conn:
            conn.execute(text("DELETE FROM recon_alembic_version"))
            conn.execute(text("INSERT INTO recon_alembic_version VALUES ('0010')"))
        ensure_schema(engine)
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT transaction_id, named_by, status FROM provider_items"
                     " ORDER BY transaction_id")
            ).all()  # fmt: skip
        assert [tuple(r) for r in rows] == [
            ("gHostPaid1", "callback", "unasked"),
            ("gone-1", "return", "unasked"),
            ("ret-1", "claim", "unasked"),
        ]
    finally:
        engine.dispose()
