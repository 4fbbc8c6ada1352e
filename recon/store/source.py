"""Reading a merchant's own database: one SELECT, in a read-only session, streamed in batches.

The query text comes from the merchant's file. It is checked to be a single ``SELECT``/``WITH``
statement before it is sent (``recon.store.source_query``, with the session's own quoting rules),
and the connection is read-only at the session level, not only for the one transaction, because
MySQL and MariaDB commit implicitly before DDL and run the DDL outside a read-only transaction:

- PostgreSQL: the session starts with ``default_transaction_read_only=on`` (a startup option, so no
  rollback undoes it) and the transaction is ``SET TRANSACTION READ ONLY``;
- MySQL/MariaDB: ``SET SESSION TRANSACTION READ ONLY`` on connect, so the transaction an implicit
  commit opens is read-only too, and ``START TRANSACTION READ ONLY``;
- SQLite: the file is opened with ``mode=ro`` and ``PRAGMA query_only``.

A function that writes through another connection (``dblink``, a federated table) is beyond what a
session setting can stop: that is what the read-only database role of docs/operations.md is for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, CursorResult, Engine, event
from sqlalchemy.exc import SQLAlchemyError

from recon.errors import InputError, StoreError
from recon.store.db import make_source_engine, safe_url
from recon.store.source_query import check_single_select

_PG_READ_ONLY_OPTION = "-c default_transaction_read_only=on"


@dataclass
class SourceRows:
    """The column names of a source query and its rows, batch by batch."""

    columns: list[str]
    batches: Iterator[Sequence[Sequence[Any]]]


@contextmanager
def read_source(url: str, sql: str, batch_size: int = 10_000) -> Iterator[SourceRows]:
    """Run ``sql`` read-only against ``url`` and stream its rows in batches of ``batch_size``."""
    with read_only_connection(url) as conn:
        query = check_single_select(sql, conn.dialect.name, _sql_mode(conn))
        conn.execution_options(stream_results=True, yield_per=batch_size)
        if conn.dialect.paramstyle in ("format", "pyformat"):
            query = query.replace("%", "%%")  # the driver formats even without parameters
        try:
            result = conn.exec_driver_sql(query)
        except SQLAlchemyError as exc:
            raise InputError(
                f"the source query failed on {safe_url(conn.engine.url)}: {exc}"
            ) from None
        columns = [str(name) for name in result.keys()]  # noqa: SIM118 (a Result is not a dict)
        try:
            url_text = safe_url(conn.engine.url)
            yield SourceRows(columns, _batches(result, batch_size, url_text))
        finally:
            result.close()


def _batches(result: CursorResult[Any], size: int, url: str) -> Iterator[Sequence[Any]]:
    """The rows in batches; the source failing mid-stream is named as the source (the caller
    iterates inside its own write transaction, whose database errors mean recon's database)."""
    try:
        for part in result.partitions(size):
            yield list(part)
    except SQLAlchemyError as exc:
        raise StoreError(f"reading the source {url} failed: {exc}") from None


@contextmanager
def read_only_connection(url: str) -> Iterator[Connection]:
    """A connection to ``url`` in a read-only session and a read-only transaction, rolled back."""
    engine = make_source_engine(url)
    _read_only_sessions(engine)
    try:
        with engine.connect() as conn:
            _begin_read_only(conn)
            try:
                yield conn
            finally:
                conn.rollback()
    except SQLAlchemyError as exc:
        raise StoreError(f"reading the source {safe_url(engine.url)} failed: {exc}") from None
    finally:
        engine.dispose()


def _read_only_sessions(engine: Engine) -> None:
    name = engine.dialect.name
    if name == "postgresql":

        @event.listens_for(engine, "do_connect")
        def _startup_option(
            _dialect: Any, _record: Any, _args: Any, params: dict[str, Any]
        ) -> None:
            params["options"] = " ".join(
                filter(None, (params.get("options"), _PG_READ_ONLY_OPTION))
            )

    elif name in ("mysql", "mariadb", "sqlite"):
        setting = (
            "PRAGMA query_only = ON" if name == "sqlite" else "SET SESSION TRANSACTION READ ONLY"
        )

        @event.listens_for(engine, "connect")
        def _session_setting(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(setting)
            finally:
                cursor.close()


def _sql_mode(conn: Connection) -> str:
    """A MySQL session's ``@@sql_mode`` (it decides how strings are quoted); ``""`` elsewhere."""
    if conn.dialect.name not in ("mysql", "mariadb"):
        return ""
    return str(conn.exec_driver_sql("SELECT @@SESSION.sql_mode").scalar() or "")


def _begin_read_only(conn: Connection) -> None:
    name = conn.dialect.name
    if name == "postgresql":
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
    elif name in ("mysql", "mariadb"):
        conn.exec_driver_sql("START TRANSACTION READ ONLY")
