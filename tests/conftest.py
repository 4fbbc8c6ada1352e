"""Shared fixtures: real databases (SQLite always; PostgreSQL and MariaDB when configured)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from sqlalchemy import Engine

POSTGRES_ENV = "RECON_TEST_POSTGRES_URL"
MYSQL_ENV = "RECON_TEST_MYSQL_URL"
REQUIRE_ENV = "RECON_TEST_REQUIRE_DBS"
BROWSER_ENV = "RECON_TEST_REQUIRE_BROWSER"
BROWSER_NAMES = ("chromium", "chromium-browser", "chrome")

# The suite configures recon itself: a RECON_ setting or the credentials directory left in the
# shell that runs it (the README's `export RECON_CONFIG=... CREDENTIALS_DIRECTORY=...` of the
# demo's store and brands, a sourced env file) must not reach a test. The RECON_TEST_* variables
# are the suite's own and stay.
for _name in [name for name in os.environ if name.upper().startswith("RECON_")]:
    if not _name.upper().startswith("RECON_TEST_"):
        del os.environ[_name]
os.environ.pop("CREDENTIALS_DIRECTORY", None)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the client's aiohttp transport needs it)."""
    return "asyncio"


@pytest.fixture
def no_retry_waits() -> Iterator[None]:
    """Retry waits (the client's, its pacer's, the mailer's) take no time; attempts still count."""
    from recon import retry

    retry.set_testing(True)
    yield
    retry.set_testing(False)


def database_url_or_skip(env: str, example: str) -> str:
    """The URL of a real test database, or skip (fail under CI, where RECON_TEST_REQUIRE_DBS=1)."""
    url = os.environ.get(env)
    if not url:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{env} is not set but {REQUIRE_ENV}=1: the database suite must run")
        pytest.skip(f"set {env} (for example {example}) to run this test against a real server")
    return url


@pytest.fixture
def chromium() -> str:
    """Headless Chromium's path, or skip (fail under CI, where RECON_TEST_REQUIRE_BROWSER=1)."""
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get(BROWSER_ENV) == "1":
        pytest.fail(f"no chromium on PATH but {BROWSER_ENV}=1: the browser checks must run")
    pytest.skip("chromium is not installed (apt-get install chromium) to lay the report out")


# --- real databases: one throwaway database per server and test session ---------------------------

_SERVERS = {
    "postgres": (POSTGRES_ENV, "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    "mysql": (MYSQL_ENV, "mysql+pymysql://root@127.0.0.1:3306/test"),
}
DB_KINDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    pytest.param("mysql", id="mysql", marks=pytest.mark.mysql),
]


class ServerDatabases:
    """Creates databases named ``recon_t_<pid>_<random>`` on the test servers and drops them all.

    Several engineers run the suite at once against the same servers, so no test touches the
    ``test`` database's tables: it is only the door through which we create our own.
    """

    def __init__(self) -> None:
        self._created: list[tuple[str, str]] = []  # (server URL, database name)
        self._session: dict[str, str] = {}
        self._broken: dict[str, str] = {}

    def _admin(self, server_url: str) -> Any:
        from sqlalchemy import create_engine

        from recon.store.db import parse_url

        return create_engine(parse_url(server_url), isolation_level="AUTOCOMMIT")

    def create(self, kind: str) -> str:
        """A new empty database on the ``kind`` server; its URL. Skips or fails if unreachable."""
        env, example = _SERVERS[kind]
        server_url = database_url_or_skip(env, example)
        if kind in self._broken:
            self._unreachable(self._broken[kind])
        from sqlalchemy.exc import SQLAlchemyError

        from recon.store.db import parse_url, safe_url

        name = f"recon_t_{os.getpid()}_{secrets.token_hex(4)}"
        admin = self._admin(server_url)
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
        except SQLAlchemyError as exc:
            self._broken[kind] = f"{safe_url(server_url)} is unreachable: {exc}"
            self._unreachable(self._broken[kind])
        finally:
            admin.dispose()
        self._created.append((server_url, name))
        return parse_url(server_url).set(database=name).render_as_string(hide_password=False)

    def session_url(self, kind: str) -> str:
        """The database shared by this test session on the ``kind`` server."""
        if kind not in self._session:
            self._session[kind] = self.create(kind)
        return self._session[kind]

    @staticmethod
    def _unreachable(reason: str) -> None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(reason)
        pytest.skip(reason)

    def drop_all(self) -> None:
        for server_url, name in reversed(self._created):
            admin = self._admin(server_url)
            force = " WITH (FORCE)" if admin.dialect.name == "postgresql" else ""
            try:
                with admin.connect() as conn:
                    conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
            finally:
                admin.dispose()


@pytest.fixture(scope="session")
def server_databases() -> Iterator[ServerDatabases]:
    """Throwaway databases on the PostgreSQL and MariaDB test servers, dropped at the end."""
    databases = ServerDatabases()
    yield databases
    databases.drop_all()


@pytest.fixture(params=DB_KINDS)
def db_url(
    request: pytest.FixtureRequest, tmp_path: Path, server_databases: ServerDatabases
) -> str:
    """recon's database URL on SQLite (a fresh file), PostgreSQL and MariaDB (the session's)."""
    kind: str = request.param
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'recon.db'}"
    return server_databases.session_url(kind)


@pytest.fixture(params=DB_KINDS)
def empty_db_url(
    request: pytest.FixtureRequest, tmp_path: Path, server_databases: ServerDatabases
) -> str:
    """A database without any table, new for this test (for migration tests)."""
    kind: str = request.param
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    return server_databases.create(kind)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on ``db_url`` with the current schema and every table empty."""
    from sqlalchemy import delete

    from recon.store.db import ensure_schema, make_engine
    from recon.store.tables import metadata

    eng = make_engine(db_url)
    ensure_schema(eng)
    with eng.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(delete(table))
    yield eng
    eng.dispose()
