"""Reading a merchant's own database: one SELECT, in a read-only transaction, streamed in batches.

The query text comes from the merchant's file, so it is checked to be a single ``SELECT``/``WITH``
statement before it is sent, and the transaction is made read-only where the database can enforce
it: PostgreSQL ``SET TRANSACTION READ ONLY``, MySQL/MariaDB ``START TRANSACTION READ ONLY``, SQLite
a read-only open plus ``PRAGMA query_only``. The check is the friendly refusal; the read-only
transaction is the guarantee (a ``WITH`` may hide a data-modifying statement on PostgreSQL).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, CursorResult
from sqlalchemy.exc import SQLAlchemyError

from recon.errors import InputError, StoreError
from recon.store.db import make_source_engine, safe_url

_DOLLAR_TAG = re.compile(r"\$[A-Za-z_0-9]*\$")


def code_outside_literals(sql: str) -> str:
    """The statement with comments and the insides of quoted literals blanked out.

    The result has the same length as ``sql``, so a position in one is the same in the other.
    """
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end < 0:
                raise InputError("the query has an unterminated /* comment")
            end += 2
        elif ch in "'\"`":
            end = _end_of_quoted(sql, i)
            out.append(ch + " " * (end - i - 2) + ch)
            i = end
            continue
        elif ch == "$" and (tag := _DOLLAR_TAG.match(sql, i)):
            close = sql.find(tag.group(), tag.end())
            if close < 0:
                raise InputError(f"the query has an unterminated {tag.group()} quote")
            end = close + len(tag.group())
            out.append("'" + " " * (end - i - 2) + "'")
            i = end
            continue
        else:
            out.append(ch)
            i += 1
            continue
        out.append(" " * (end - i))
        i = end
    return "".join(out)


def _end_of_quoted(sql: str, start: int) -> int:
    """Index just past the literal opened at ``start`` (doubled quotes and backslashes escape)."""
    quote = sql[start]
    j = start + 1
    while True:
        j = sql.find(quote, j)
        if j < 0:
            raise InputError(f"the query has an unterminated {quote} quote")
        if sql.startswith(quote * 2, j):
            j += 2
        elif quote == "'" and _escaped_by_backslashes(sql, j):
            j += 1
        else:
            return j + 1


def _escaped_by_backslashes(sql: str, quote_at: int) -> bool:
    count, k = 0, quote_at - 1
    while k >= 0 and sql[k] == "\\":
        count += 1
        k -= 1
    return count % 2 == 1


def check_single_select(sql: str) -> str:
    """The statement without trailing semicolons and comments, or ``InputError`` unless it is
    exactly one ``SELECT``/``WITH`` statement."""
    code = code_outside_literals(sql).rstrip()
    while code.endswith(";"):
        code = code[:-1].rstrip()
    if not code.strip():
        raise InputError("the query file is empty")
    if ";" in code:
        raise InputError("the query must be a single statement (found a ';' between statements)")
    first = re.match(r"[\s(]*([A-Za-z]+)", code)
    if first is None or first.group(1).upper() not in ("SELECT", "WITH"):
        raise InputError("the query must be a single SELECT (or WITH ... SELECT) statement")
    return sql[: len(code)].strip()


@dataclass
class SourceRows:
    """The column names of a source query and its rows, batch by batch."""

    columns: list[str]
    batches: Iterator[Sequence[Sequence[Any]]]


@contextmanager
def read_source(url: str, sql: str, batch_size: int = 10_000) -> Iterator[SourceRows]:
    """Run ``sql`` read-only against ``url`` and stream its rows in batches of ``batch_size``."""
    query = check_single_select(sql)
    engine = make_source_engine(url)
    try:
        with engine.connect() as conn:
            _begin_read_only(conn)
            conn.execution_options(stream_results=True, yield_per=batch_size)
            if conn.dialect.paramstyle in ("format", "pyformat"):
                query = query.replace("%", "%%")  # the driver formats even without parameters
            try:
                result = conn.exec_driver_sql(query)
            except SQLAlchemyError as exc:
                raise InputError(
                    f"the source query failed on {safe_url(engine.url)}: {exc}"
                ) from None
            names = result.keys()
            columns = [str(name) for name in names]
            try:
                yield SourceRows(columns, _batches(result, batch_size, safe_url(engine.url)))
            finally:
                result.close()
                conn.rollback()
    except SQLAlchemyError as exc:
        raise StoreError(f"reading the source {safe_url(engine.url)} failed: {exc}") from None
    finally:
        engine.dispose()


def _batches(result: CursorResult[Any], size: int, url: str) -> Iterator[Sequence[Any]]:
    """The rows in batches; the source failing mid-stream is named as the source (the caller
    iterates inside its own write transaction, whose database errors mean recon's database)."""
    try:
        for part in result.partitions(size):
            yield list(part)
    except SQLAlchemyError as exc:
        raise StoreError(f"reading the source {url} failed: {exc}") from None


def _begin_read_only(conn: Connection) -> None:
    name = conn.dialect.name
    if name == "postgresql":
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
    elif name in ("mysql", "mariadb"):
        conn.exec_driver_sql("START TRANSACTION READ ONLY")
    elif name == "sqlite":
        conn.exec_driver_sql("PRAGMA query_only = ON")
