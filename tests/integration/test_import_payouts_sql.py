"""`recon import payouts --sql`: a read-only query against the merchant's SQLite, PostgreSQL or
MariaDB database, streamed through the same validation and the same single transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import DBAPIError

from recon.errors import InputError, StoreError
from recon.ingest.payouts import import_payouts_sql
from recon.store.db import make_engine
from recon.store.payouts import UpsertCounts
from recon.store.source import read_only_connection
from recon.store.tables import payouts
from tests.conftest import ServerDatabases

QUERY = """
-- the merchant's nightly extract
SELECT id AS transaction_id, ref AS merchant_reference, amt AS amount, cur AS currency,
       created_at AS created, note
FROM merchant_payouts
ORDER BY id;
"""


def table(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {row.transaction_id: row for row in conn.execute(select(payouts))}


@pytest.fixture
def sqlite_source(tmp_path: Path) -> str:
    path = tmp_path / "merchant.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE merchant_payouts "
            "(id TEXT, ref TEXT, amt TEXT, cur TEXT, created_at INTEGER, note TEXT)"
        )
        conn.executemany(
            "INSERT INTO merchant_payouts VALUES (?, ?, ?, ?, ?, ?)",
            [
                ("abc", "r1", "0.10", "EUR", 1740830400, "x"),
                ("ABC", "r2", "99999999999.99", "eur", None, None),
                ("jp", "r3", "1500", "JPY", 1740830400, None),
            ],
        )
    return f"sqlite:///{path}"


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    yield engine
    engine.dispose()


def test_a_query_on_a_sqlite_source_imports_every_row(engine: Engine, sqlite_source: str) -> None:
    """The query's rows are imported exactly; unused columns are named; a repeat changes nothing."""
    result = import_payouts_sql(engine, QUERY, sqlite_source)
    assert result.counts == UpsertCounts(inserted=3)
    assert result.ignored_columns == ("note",)
    rows = table(engine)
    assert {tid: r.amount_minor for tid, r in rows.items()} == {
        "abc": 10,
        "ABC": 9999999999999,
        "jp": 1500,
    }
    assert rows["abc"].created == datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    assert import_payouts_sql(engine, QUERY, sqlite_source).counts == UpsertCounts(unchanged=3)


def test_bad_source_rows_are_reported_by_row_number(target: Engine, sqlite_source: str) -> None:
    """A bad value in the source names its row, and nothing is imported."""
    with sqlite3.connect(sqlite_source.removeprefix("sqlite:///")) as conn:
        conn.execute("INSERT INTO merchant_payouts VALUES ('zz', 'r9', '1.234', 'EUR', NULL, NULL)")
    with pytest.raises(InputError) as caught:
        import_payouts_sql(target, QUERY, sqlite_source)
    assert caught.value.problems == ["row 4: amount 1.234 has more than 2 decimals for EUR"]
    assert table(target) == {}


def test_a_floating_point_amount_column_is_refused(target: Engine, sqlite_source: str) -> None:
    """A REAL/DOUBLE amount cannot be exact: the error says to cast it in the query."""
    query = (
        "SELECT id AS transaction_id, ref AS merchant_reference, 0.1 AS amount, cur AS currency "
        "FROM merchant_payouts"
    )
    with pytest.raises(InputError, match="floating-point number"):
        import_payouts_sql(target, query, sqlite_source)


@pytest.mark.parametrize(
    "query", ["DELETE FROM merchant_payouts", "SELECT 1 AS x; DROP TABLE merchant_payouts"]
)
def test_a_query_that_is_not_one_select_is_refused_before_it_runs(
    target: Engine, sqlite_source: str, query: str
) -> None:
    """Writes and several statements are refused; the source table is untouched."""
    with pytest.raises(InputError, match="single"):
        import_payouts_sql(target, query, sqlite_source)
    with sqlite3.connect(sqlite_source.removeprefix("sqlite:///")) as conn:
        assert conn.execute("SELECT count(*) FROM merchant_payouts").fetchone() == (3,)


def test_a_missing_required_column_is_named(target: Engine, sqlite_source: str) -> None:
    """A query without the required columns says which are missing."""
    with pytest.raises(InputError, match="missing required column"):
        import_payouts_sql(
            target, "SELECT id AS transaction_id FROM merchant_payouts", sqlite_source
        )


def _server_source(server_databases: ServerDatabases, kind: str) -> str:
    url = server_databases.create(kind)
    engine = make_engine(url)
    numeric = "NUMERIC(20, 2)" if kind == "postgres" else "DECIMAL(20, 2)"
    stamp = "TIMESTAMPTZ" if kind == "postgres" else "DATETIME"
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    f"CREATE TABLE merchant_payouts (id VARCHAR(50), ref VARCHAR(50), "
                    f"amt {numeric}, cur CHAR(3), created_at {stamp}, note VARCHAR(10))"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO merchant_payouts VALUES "
                    "('p1', 'r1', 100.10, 'EUR', '2025-03-01 12:00:00', 'a%b'), "
                    "('p2', 'r2', 99999999999.99, 'EUR', NULL, NULL)"
                )
            )
    finally:
        engine.dispose()
    return url


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mysql", marks=pytest.mark.mysql),
    ],
)
def test_a_query_on_a_server_source_imports_exact_decimals(
    target: Engine, server_databases: ServerDatabases, kind: str
) -> None:
    """NUMERIC/DECIMAL and timestamp columns of PostgreSQL and MariaDB arrive exactly."""
    source = _server_source(server_databases, kind)
    query = QUERY.replace("ORDER BY id", "WHERE note LIKE 'a%' OR note IS NULL ORDER BY id")
    result = import_payouts_sql(target, query, source)
    assert result.counts == UpsertCounts(inserted=2)
    rows = table(target)
    assert (rows["p1"].amount_minor, rows["p2"].amount_minor) == (10010, 9999999999999)
    assert rows["p1"].created == datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.postgres
def test_a_query_with_side_effects_is_stopped_by_the_read_only_transaction(
    target: Engine, server_databases: ServerDatabases
) -> None:
    """A SELECT that would write (here: advance a sequence) fails: the transaction is read-only."""
    source = _server_source(server_databases, "postgres")
    engine = make_engine(source)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE SEQUENCE merchant_seq"))
        query = (
            "SELECT id AS transaction_id, ref AS merchant_reference, amt AS amount, "
            "cur AS currency, nextval('merchant_seq') AS n FROM merchant_payouts"
        )
        with pytest.raises(InputError, match="read-only transaction"):
            import_payouts_sql(target, query, source)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT last_value FROM merchant_seq")).scalar() == 1
            assert conn.execute(text("SELECT is_called FROM merchant_seq")).scalar() is False
    finally:
        engine.dispose()
    assert table(target) == {}


def _victim(url: str) -> Engine:
    """A table named ``victim`` with two rows beside the merchant's payouts."""
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE victim (a INTEGER)"))
        conn.execute(text("INSERT INTO victim VALUES (1), (2)"))
    return engine


def _victim_rows(engine: Engine) -> list[int]:
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT a FROM victim ORDER BY a"))]


SELECT_PAYOUTS = (
    "SELECT id AS transaction_id, ref AS merchant_reference, amt AS amount, cur AS currency "
    "FROM merchant_payouts"
)


@pytest.mark.mysql
@pytest.mark.parametrize(
    "query",
    [
        f"/*!CREATE OR REPLACE TABLE victim AS*/ {SELECT_PAYOUTS}",
        f"/*M!100100 CREATE OR REPLACE TABLE victim AS*/ {SELECT_PAYOUTS}",
        f"/*!50000 CREATE OR REPLACE TABLE victim AS*/ {SELECT_PAYOUTS}",
    ],
)
def test_an_executable_comment_cannot_replace_a_table_on_mariadb(
    target: Engine, server_databases: ServerDatabases, query: str
) -> None:
    """MariaDB runs the text of /*! ... */ as code: the query is refused and the table is kept."""
    source = _server_source(server_databases, "mysql")
    engine = _victim(source)
    try:
        with pytest.raises(InputError, match="executable comment"):
            import_payouts_sql(target, query, source)
        assert _victim_rows(engine) == [1, 2]
    finally:
        engine.dispose()
    assert table(target) == {}


@pytest.mark.postgres
def test_a_backslash_before_a_quote_does_not_hide_a_second_statement_on_postgresql(
    target: Engine, server_databases: ServerDatabases
) -> None:
    """On PostgreSQL '\\' is a whole string: the checker sees the DROP after it and refuses."""
    source = _server_source(server_databases, "postgres")
    engine = _victim(source)
    query = f"{SELECT_PAYOUTS} WHERE ref <> '\\'; DROP TABLE victim; -- '"
    try:
        with pytest.raises(InputError, match="single statement"):
            import_payouts_sql(target, query, source)
        assert _victim_rows(engine) == [1, 2]
    finally:
        engine.dispose()


@pytest.mark.mysql
def test_select_into_outfile_is_refused_on_mariadb(
    target: Engine, server_databases: ServerDatabases, tmp_path: Path
) -> None:
    """SELECT ... INTO writes a file on the database server: a read-only transaction allows it."""
    source = _server_source(server_databases, "mysql")
    query = f"{SELECT_PAYOUTS} INTO OUTFILE 'recon-test-{tmp_path.name}.txt'"
    with pytest.raises(InputError, match="INTO"):
        import_payouts_sql(target, query, source)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mysql", marks=pytest.mark.mysql),
    ],
)
def test_the_source_session_itself_is_read_only(
    server_databases: ServerDatabases, kind: str
) -> None:
    """Past the checker, the session refuses DDL and writes, even after an implicit commit."""
    source = _server_source(server_databases, kind)
    engine = _victim(source)
    try:
        with read_only_connection(source) as conn:
            for statement in ("DROP TABLE victim", "DELETE FROM victim"):
                conn.exec_driver_sql("COMMIT")  # what MariaDB does implicitly before DDL
                with pytest.raises(DBAPIError, match=r"(?i)read[ -]only transaction"):
                    conn.exec_driver_sql(statement)
                conn.rollback()
        assert _victim_rows(engine) == [1, 2]
    finally:
        engine.dispose()


def test_a_sqlite_source_is_opened_read_only(sqlite_source: str) -> None:
    """The SQLite file is opened with mode=ro: a write fails and the file is unchanged."""
    with (
        read_only_connection(sqlite_source) as conn,
        pytest.raises(DBAPIError, match=r"readonly|read-only|query_only"),
    ):
        conn.exec_driver_sql("DELETE FROM merchant_payouts")
    with sqlite3.connect(sqlite_source.removeprefix("sqlite:///")) as raw:
        assert raw.execute("SELECT count(*) FROM merchant_payouts").fetchone() == (3,)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mysql", marks=pytest.mark.mysql),
    ],
)
def test_a_source_decimal_beyond_28_digits_is_refused_not_rounded(
    target: Engine, server_databases: ServerDatabases, kind: str
) -> None:
    """A NUMERIC with a non-zero 18th decimal names its row; nothing is rounded or written."""
    source = _server_source(server_databases, kind)
    query = (
        "SELECT 'big' AS transaction_id, 'r' AS merchant_reference, "
        "CAST('100000000000000.010000000000000001' AS DECIMAL(40, 18)) AS amount, "
        "'EUR' AS currency"
    )
    with pytest.raises(InputError) as caught:
        import_payouts_sql(target, query, source)
    assert caught.value.problems == [
        "row 1: amount 100000000000000.010000000000000001 has more than 2 decimals for EUR"
    ]
    assert table(target) == {}


def test_naive_source_times_are_read_in_the_zone_given(target: Engine, sqlite_source: str) -> None:
    """A source timestamp without an offset is a wall-clock time in the zone (RECON_TIMEZONE)."""
    query = (
        "SELECT id AS transaction_id, ref AS merchant_reference, amt AS amount, cur AS currency, "
        "'2025-03-01 14:00:00' AS created FROM merchant_payouts WHERE id = 'abc'"
    )
    import_payouts_sql(target, query, sqlite_source, zone=ZoneInfo("Europe/Helsinki"))
    assert table(target)["abc"].created == datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.postgres
def test_a_source_failing_mid_stream_is_named_as_the_source(
    target: Engine, server_databases: ServerDatabases
) -> None:
    """An error on the merchant's side after some batches is the source's failure, not recon's."""
    source = _server_source(server_databases, "postgres")
    query = (
        "SELECT 'p' || g AS transaction_id, 'r' AS merchant_reference, "
        "CAST(1.0 / (g - 5) + 10 AS NUMERIC(10, 2)) AS amount, 'EUR' AS currency "
        "FROM generate_series(1, 8) AS g"
    )
    with pytest.raises(StoreError, match=r"reading the source .* failed"):
        import_payouts_sql(target, query, source, batch_rows=2)
    assert table(target) == {}
