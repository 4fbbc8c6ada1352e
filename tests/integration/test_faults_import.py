"""Hostile payout files: the importer refuses them with a clear error naming the line and writes
nothing, or imports them exactly; no other exception ever escapes. Hostile source queries never
change the merchant's PostgreSQL or MariaDB database."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, func, inspect, select, text

from recon.errors import InputError, StoreError
from recon.ingest.payouts import import_payouts_csv, import_payouts_sql
from recon.store.db import ensure_schema, make_engine
from recon.store.tables import payouts
from tests.conftest import ServerDatabases

HEADER = "transaction_id,merchant_reference,amount,currency\n"
GOOD = ["t-1,ref-1,10.10,EUR", "t-2,ref-2,1500,JPY", "t-3,ref-3,0.01,SEK"]
cells = st.text(max_size=12) | st.sampled_from(["", "1e5", "NaN", "-0", "1.001", "eur", '"', "\r"])
hostile_rows = st.lists(cells, min_size=0, max_size=6).map(",".join)


@pytest.fixture(scope="module")
def store() -> Iterator[tuple[Engine, Path]]:
    """One SQLite store (emptied after each example) and a directory for the files."""
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'import.db'}")
        ensure_schema(engine)
        yield engine, Path(tmp)
        engine.dispose()


def stored(engine: Engine) -> dict[str, tuple[str, int, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                payouts.c.transaction_id,
                payouts.c.merchant_reference,
                payouts.c.amount_minor,
                payouts.c.currency,
            )
        )
        return {r[0]: (r[1], r[2], r[3]) for r in rows}


def attempt(engine: Engine, path: Path, content: bytes) -> InputError | None:
    """Import ``content``; the InputError if refused (any other exception fails the test)."""
    path.write_bytes(content)
    try:
        import_payouts_csv(engine, path)
    except InputError as exc:
        return exc
    return None


def empty(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(delete(payouts))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: (HEADER + t).encode()))
def test_random_bytes_are_refused_cleanly_or_imported(
    store: tuple[Engine, Path], content: bytes
) -> None:
    """Random files either import or raise InputError, and a refused one writes nothing."""
    engine, tmp = store
    empty(engine)
    error = attempt(engine, tmp / "random.csv", content)
    if error is not None:
        assert str(error).strip()
        assert stored(engine) == {}
    empty(engine)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_rows, st.integers(min_value=0, max_value=len(GOOD)))
def test_one_hostile_row_among_good_ones_names_its_line_or_all_rows_are_imported(
    store: tuple[Engine, Path], row: str, position: int
) -> None:
    """A bad row anywhere rejects the whole file naming its line; otherwise every row is stored."""
    engine, tmp = store
    empty(engine)
    lines = [*GOOD[:position], row, *GOOD[position:]]
    error = attempt(engine, tmp / "rows.csv", (HEADER + "\n".join(lines) + "\n").encode())
    if error is not None:
        assert stored(engine) == {}
        assert "line" in str(error) or "header" in str(error) or "column" in str(error), error
    else:
        found = stored(engine)
        assert {"t-1", "t-2", "t-3"} <= found.keys()
        assert found["t-1"] == ("ref-1", 1010, "EUR")
        assert found["t-2"] == ("ref-2", 1500, "JPY")
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(payouts)) == len(found)
    empty(engine)


# --- hostile source queries against the merchant's real database ------------------------------

# Pieces that fool one reader of SQL or another: backslash escapes, quotes of every kind,
# executable and ordinary comments, dollar quotes, statement separators and writes.
FRAGMENTS = [
    "'", "\\'", "\\", '"', "`", "''", "$$", "$q$", "--", "#", "\n", "/*", "*/", "/*!", "/*M!",
    "/*!50000", ";", " ", "(", ")", ",", "SELECT", "WITH", "AS", "FROM victim", "INTO",
    "CREATE OR REPLACE TABLE victim AS", "DROP TABLE victim", "DELETE FROM victim",
    "UPDATE victim SET a = 0", "INSERT INTO victim VALUES (9)", "TRUNCATE victim",
    "x", "1", "E'", "@x", "OUTFILE 'recon-hostile.txt'",
    "/*!CREATE OR REPLACE TABLE victim AS*/", "/*M!DROP TABLE victim*/",
    "'\\'; DROP TABLE victim; -- '",
]  # fmt: skip
hostile_queries = st.builds(
    lambda head, rest: head + "".join(rest),
    st.sampled_from(["SELECT 1 AS transaction_id ", "WITH v AS (SELECT 1 AS a) SELECT ", ""]),
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=10),
)


@pytest.fixture(scope="module", params=[
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("mysql", marks=pytest.mark.mysql),
])  # fmt: skip
def hostile_source(
    request: pytest.FixtureRequest, server_databases: ServerDatabases
) -> Iterator[tuple[str, Engine]]:
    """The merchant's database with a table named victim (rows 1 and 2), and an engine on it."""
    url = server_databases.create(request.param)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE victim (a INTEGER)"))
        conn.execute(text("INSERT INTO victim VALUES (1), (2)"))
    yield url, engine
    engine.dispose()


def tables_and_victim(engine: Engine) -> tuple[list[str], list[int]]:
    with engine.connect() as conn:
        rows = [r[0] for r in conn.execute(text("SELECT a FROM victim ORDER BY a"))]
    return sorted(inspect(engine).get_table_names()), rows


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=hostile_queries)
@example(query="/*!CREATE OR REPLACE TABLE victim AS*/ SELECT 1 AS transaction_id")
@example(query="SELECT a FROM victim WHERE '\\' <> ''; DELETE FROM victim; -- '")
def test_no_source_query_changes_the_merchants_database(
    hostile_source: tuple[str, Engine], store: tuple[Engine, Path], query: str
) -> None:
    """Whatever the query text, the import refuses it or reads, and the merchant's tables stay."""
    url, engine = hostile_source
    target, _ = store
    before = tables_and_victim(engine)
    with contextlib.suppress(InputError, StoreError):  # refusals; any other exception fails
        import_payouts_sql(target, query, url)
    assert tables_and_victim(engine) == before == (["victim"], [1, 2])
    empty(target)
