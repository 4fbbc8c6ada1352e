"""Helpers shared by the store modules: batching, id lookups and dialect-specific upserts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Connection, Insert, String, Table, and_, any_, bindparam, or_
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.types import TypeEngine

T = TypeVar("T")

# Rows per executemany call. SQLAlchemy hands each call to the driver as one batch: PyMySQL rewrites
# it into multi-row INSERTs, psycopg 3 pipelines it, sqlite3 reuses one prepared statement.
# (Multi-row VALUES built by SQLAlchemy compile anew for every batch: far slower; BENCHMARKS.md.)
ROWS_PER_STATEMENT = 1000


def chunks(items: Sequence[T], size: int = ROWS_PER_STATEMENT) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def any_of(
    within: ColumnElement[bool], terms: Iterable[ColumnElement[bool]]
) -> ColumnElement[bool]:
    """``terms`` ORed, each ANDed with ``within`` (the account): SQLite plans an OR as one index
    range per term only when nothing stands outside it; given ``within AND (a OR b)`` it walks
    every row ``within`` selects (the whole account) and tests each against every term."""
    return or_(*(and_(within, term) for term in terms))


def one_of(
    conn: Connection,
    column: ColumnElement[Any],
    ids: Sequence[Any],
    element: TypeEngine[Any] | None = None,
) -> ColumnElement[bool]:
    """``column IN ids``, written so that PostgreSQL keeps using the column's index (``element``:
    the ids' SQL type, ``String`` unless given).

    psycopg prepares a statement on the server once it has run five times, and PostgreSQL then
    plans ``IN ($1, ..., $1000)`` generically: a full scan comparing every row with every
    parameter, which made a 100,000-row import take a minute and a 1,000,000-row one never end
    (BENCHMARKS.md, "PostgreSQL"). One array parameter, ``= ANY($1)``, keeps the index scan.
    """
    if conn.dialect.name == "postgresql":
        array = postgresql.ARRAY(element if element is not None else String())
        return column == any_(bindparam(None, list(ids), type_=array))
    return column.in_(ids)


def upsert(conn: Connection, table: Table, key: Sequence[str], update: Sequence[str]) -> Insert:
    """An INSERT that updates ``update`` columns when ``key`` (the columns of the primary key)
    exists; execute it with many rows."""
    name = conn.dialect.name
    if name in ("mysql", "mariadb"):
        my = mysql.insert(table)
        return my.on_duplicate_key_update({col: my.inserted[col] for col in update})
    if name == "postgresql":
        pg = postgresql.insert(table)
        return pg.on_conflict_do_update(
            index_elements=list(key), set_={col: pg.excluded[col] for col in update}
        )
    if name == "sqlite":
        lite = sqlite.insert(table)
        return lite.on_conflict_do_update(
            index_elements=list(key), set_={col: lite.excluded[col] for col in update}
        )
    raise NotImplementedError(f"recon does not support {name!r} as its own database")
