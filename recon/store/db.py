"""Engines for the three supported databases, and the schema upgrade.

``make_engine`` accepts the URLs people write (``postgresql://``, ``mysql://``, ``mariadb://``) and
maps them to the drivers recon ships (psycopg 3, PyMySQL). SQLite runs in WAL mode with foreign keys
and a busy timeout, so the callback receiver and a run can share one file; SQLAlchemy, not the
``sqlite3`` module, emits ``BEGIN`` so every transaction (DDL included) is a real one.

A URL recon cannot use (not a URL, a port that is not one, an unencoded ``@`` in the password, an
unknown dialect) is a ``ConfigError``; a failure to connect is a ``StoreError``. Both messages name
the database with its password masked (:mod:`recon.redact`), on one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, select, text
from sqlalchemy.engine import URL, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from recon.errors import ConfigError, StoreError
from recon.redact import Scrubber, hide_url
from recon.store.tables import SCHEMA_HEAD, VERSION_TABLE, schema_version

SQLITE_BUSY_TIMEOUT_S = 30.0
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")

_DRIVER_FOR = {
    "postgres": "postgresql+psycopg",
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
}


_EXPECTED = "expected dialect://user:password@host:port/database, or sqlite:///path"


def parse_url(url: str) -> URL:
    """Parse a database URL; bare ``postgresql``/``mysql``/``mariadb`` get recon's drivers.

    ``ConfigError`` (the URL masked) for anything recon could only misread: SQLAlchemy takes
    ``u:p@ss@host`` for password ``p`` at host ``ss@host`` and fails on a bad port with a bare
    ``ValueError``.
    """
    shown = hide_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        # A value with no scheme may be anything (a password pasted in the wrong place): not shown.
        named = f": {shown!r}" if _SCHEME.match(url) or shown != url else ""
        raise ConfigError(f"not a database URL{named} ({_EXPECTED})") from None
    except ValueError:
        raise ConfigError(f"database URL {shown!r}: the port is not a number") from None
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ConfigError(f"database URL {shown!r}: port {parsed.port} is out of range")
    if "@" in (parsed.host or ""):
        raise ConfigError(
            f"database URL {shown!r}: more than one '@'; write an '@' inside the password as %40"
        )
    driver = _DRIVER_FOR.get(parsed.drivername)
    if driver is not None:
        parsed = parsed.set(drivername=driver)
    if parsed.get_backend_name() in ("mysql", "mariadb"):
        if "charset" not in parsed.query:
            parsed = parsed.update_query_dict({"charset": "utf8mb4"})
        elif not _known_charset(parsed.query["charset"]):  # the driver fails on it unnamed
            raise ConfigError(f"database URL {shown!r}: unknown charset")
    return parsed


def _known_charset(name: str | tuple[str, ...]) -> bool:
    from pymysql.charset import charset_by_name  # MySQL's driver: only for a MySQL URL

    return isinstance(name, str) and charset_by_name(name) is not None


def safe_url(url: URL | str) -> str:
    """The URL as text with its password and secret parameters masked: safe to print and log."""
    text = url.render_as_string(hide_password=False) if isinstance(url, URL) else url
    return hide_url(text)


def make_engine(url: str) -> Engine:
    """An engine for recon's own database (``sqlite:///recon.db`` by default)."""
    parsed = parse_url(url)
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if parsed.get_backend_name() == "sqlite":
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
    elif parsed.get_backend_name() in ("mysql", "mariadb"):
        # PostgreSQL's level, not InnoDB's REPEATABLE READ: its gap locks made two accounts'
        # nights, each writing only its own rows, deadlock on the index gaps between them.
        kwargs["isolation_level"] = "READ COMMITTED"
    engine = _create(parsed, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        _configure_sqlite(engine)
        _create_sqlite_file_private(engine, parsed.database)
    return engine


def make_source_engine(url: str) -> Engine:
    """An engine for a merchant's database that recon only reads: no pragmas, no WAL switch."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        # Open the file read-only: the query cannot write, and no journal is created beside it.
        parsed = parsed.set(database=f"file:{parsed.database}").update_query_dict(
            {"mode": "ro", "uri": "true"}
        )
    return _create(parsed, pool_pre_ping=True)


def _create(parsed: URL, **kwargs: Any) -> Engine:
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, ImportError) as exc:
        raise ConfigError(f"cannot use database {safe_url(parsed)}: {exc}") from None
    scrub = Scrubber([parsed.password and str(parsed.password)])
    scrub.add_url(parsed.render_as_string(hide_password=False))

    @event.listens_for(engine, "handle_error")
    def _connect_failed(context: ExceptionContext) -> None:
        # Only failures to open a connection become StoreError: errors of statements stay
        # SQLAlchemy's, so callers can still tell an IntegrityError from an outage.
        if context.connection is None and not context.is_pre_ping:
            message = " ".join(scrub(str(context.original_exception)).split())
            raise StoreError(f"cannot connect to database {safe_url(parsed)}: {message}")

    return engine


def describe_db_error(exc: SQLAlchemyError) -> str:
    """One line naming a database error without its SQL or parameters (which hold bodies)."""
    orig = getattr(exc, "orig", None)
    detail = str(orig if orig is not None else exc).strip().splitlines()
    return f"{type(orig or exc).__name__}: {detail[0] if detail else 'no detail'}"


def _create_sqlite_file_private(engine: Engine, database: str | None) -> None:
    """A new SQLite file is created 0600 just before SQLite would create it (0644 less umask).

    SQLite gives the -wal, -shm and -journal files the mode of the database file, so they are
    0600 too. A file that exists keeps the mode its owner gave it.
    """
    if database in (None, "", ":memory:") or str(database).startswith("file:"):
        return
    path = str(database)

    @event.listens_for(engine, "do_connect")
    def _private_file(*_args: Any) -> None:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
        except OSError:
            return  # a missing directory: let SQLite fail with its own message


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN (below) instead of the sqlite3 module's partial emulation.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            return
        # A writer asks for IMMEDIATE so it takes the write lock up front (waiting up to the busy
        # timeout) rather than failing half-way when another writer committed since its first read.
        if conn.get_execution_options().get("recon_write"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection inside one transaction that writes: commit at the end, roll back on error."""
    with engine.connect() as conn:
        conn.execution_options(recon_write=True)
        with conn.begin():
            yield conn


def upgrade(engine: Engine) -> None:
    """Create or upgrade the schema to the newest revision; running it again changes nothing."""
    from recon.store.migrate import migrate  # Alembic: only when there is something to migrate

    try:
        with write_transaction(engine) as conn:
            _serialise_migrations(conn)
            try:
                migrate(conn)
            finally:
                _release_migration_lock(conn)
    except SQLAlchemyError as exc:
        raise StoreError(f"schema upgrade of {safe_url(engine.url)} failed: {exc}") from exc


def _serialise_migrations(conn: Connection) -> None:
    # Two processes starting on an empty database (a run and the receiver) must not both create the
    # tables. SQLite is already serialised by BEGIN IMMEDIATE; MySQL's lock ends with the session.
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(7304151)"))
    elif conn.dialect.name in ("mysql", "mariadb"):
        conn.execute(text("SELECT GET_LOCK('recon_schema_upgrade', 60)"))


def _release_migration_lock(conn: Connection) -> None:
    if conn.dialect.name in ("mysql", "mariadb"):
        conn.execute(text("SELECT RELEASE_LOCK('recon_schema_upgrade')"))


def ensure_schema(engine: Engine) -> None:
    """Upgrade the schema if it is not at :data:`~recon.store.tables.SCHEMA_HEAD`; one query when
    it is (anything else, an empty store, an older or unknown revision, goes to Alembic)."""
    try:
        with engine.connect() as conn:
            stored = (
                list(conn.execute(select(schema_version.c.version_num)).scalars())
                if inspect(conn).has_table(VERSION_TABLE)
                else []
            )
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot read the schema version of {safe_url(engine.url)}: {exc}"
        ) from exc
    if stored != [SCHEMA_HEAD]:
        upgrade(engine)


@contextmanager
def schema_engine(database_url: str) -> Iterator[Engine]:
    """An engine on ``database_url`` with the schema up to date, disposed of at the end (for
    commands that open the store, do one thing and exit)."""
    engine = make_engine(database_url)
    try:
        ensure_schema(engine)
        yield engine
    finally:
        engine.dispose()
