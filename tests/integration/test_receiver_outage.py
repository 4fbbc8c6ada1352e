"""The receiver while its database is down: 503 (the provider retries), then 200, nothing lost."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, create_engine, event, func, select, text

from recon.ingest.receiver import create_receiver_app
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine, parse_url
from recon.store.tables import notifications
from tests.conftest import DB_KINDS, ServerDatabases

JSON = {"content-type": "application/json"}


Outage = Callable[[], Any]


@contextmanager
def sqlite_outage(url: str, engine: Engine) -> Iterator[Outage]:
    """Another connection holds SQLite's write lock (BEGIN EXCLUSIVE) during the outage."""
    path = parse_url(url).database
    assert path is not None

    @contextmanager
    def outage() -> Iterator[None]:
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN EXCLUSIVE")
            yield
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()

    yield outage


@contextmanager
def postgres_outage(url: str, engine: Engine) -> Iterator[Outage]:
    """The database refuses connections (ALLOW_CONNECTIONS false) and its sessions are killed."""
    name = parse_url(url).database
    admin = create_engine(parse_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")

    @contextmanager
    def outage() -> Iterator[None]:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
        try:
            yield
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))

    try:
        yield outage
    finally:
        admin.dispose()


@contextmanager
def mysql_outage(url: str, engine: Engine) -> Iterator[Outage]:
    """The notifications table is gone (renamed away) during the outage, then comes back."""
    admin = create_engine(parse_url(url))

    @contextmanager
    def outage() -> Iterator[None]:
        with admin.begin() as conn:
            conn.execute(text("RENAME TABLE notifications TO notifications_away"))
        try:
            yield
        finally:
            with admin.begin() as conn:
                conn.execute(text("RENAME TABLE notifications_away TO notifications"))

    try:
        yield outage
    finally:
        admin.dispose()


OUTAGES = {"sqlite": sqlite_outage, "postgres": postgres_outage, "mysql": mysql_outage}


@contextmanager
def _database_with(
    kind: str, tmp_path: Any, server_databases: ServerDatabases, outages: dict[str, Any]
) -> Iterator[tuple[Engine, Outage]]:
    """A database of ``kind`` for one test alone (its outage must not disturb others), and the
    outage ``outages`` names for that kind."""
    url = (
        f"sqlite:///{tmp_path / 'recon.db'}" if kind == "sqlite" else server_databases.create(kind)
    )
    engine = make_engine(url)
    if kind == "sqlite":
        # recon waits 30 s for SQLite's write lock; a test need not wait that long to see a 503.
        @event.listens_for(engine, "connect")
        def _short_busy_timeout(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute("PRAGMA busy_timeout=200")

    ensure_schema(engine)
    with outages[kind](url, engine) as outage:
        yield engine, outage
    engine.dispose()


@pytest.fixture(params=DB_KINDS)
def own_database(
    request: pytest.FixtureRequest, tmp_path: Any, server_databases: ServerDatabases
) -> Iterator[tuple[Engine, Outage]]:
    """A database of this test alone, and an outage in which it answers nothing."""
    with _database_with(request.param, tmp_path, server_databases, OUTAGES) as pair:
        yield pair


@asynccontextmanager
async def receiver(engine: Engine) -> AsyncIterator[httpx.AsyncClient]:
    app = create_receiver_app(Settings(receiver_health_cache=0), engine)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        yield client


def body(merchant: str, tx: str) -> str:
    return json.dumps({"merchant_id": merchant, "transaction_id": tx, "transaction_state": 6})


@pytest.mark.anyio
async def test_an_unavailable_database_gets_503_then_200_and_nothing_is_lost(
    own_database: tuple[Engine, Outage],
) -> None:
    """While the database cannot commit the answer is 503; the retries after it are stored."""
    engine, outage = own_database
    merchant = "m-" + uuid.uuid4().hex
    async with receiver(engine) as client:
        before = await client.post("/callbacks", content=body(merchant, "t-1"), headers=JSON)
        assert before.status_code == 200
        with outage():
            during = [
                await client.post("/callbacks", content=body(merchant, tx), headers=JSON)
                for tx in ("t-2", "t-3", "t-2")
            ]
        assert [answer.status_code for answer in during] == [503, 503, 503]
        assert during[0].json() == {"error": "database unavailable, try again later"}
        # the provider retries each notification it was not given a 200 for
        retried = [
            await client.post("/callbacks", content=body(merchant, tx), headers=JSON)
            for tx in ("t-2", "t-3", "t-1")
        ]
        assert [answer.json()["status"] for answer in retried] == ["stored", "stored", "duplicate"]
    with engine.connect() as conn:
        ids = conn.execute(
            select(notifications.c.transaction_id)
            .where(notifications.c.merchant_id == merchant)
            .order_by(notifications.c.transaction_id)
        ).scalars()
        assert list(ids) == ["t-1", "t-2", "t-3"]


@pytest.mark.anyio
@pytest.mark.postgres
async def test_health_is_503_while_postgres_refuses_connections(
    server_databases: ServerDatabases,
) -> None:
    """GET /health reports the database, not just the process."""
    url = server_databases.create("postgres")
    engine = make_engine(url)
    try:
        ensure_schema(engine)
        with postgres_outage(url, engine) as outage:
            async with receiver(engine) as client:
                with outage():
                    down = await client.get("/health")
                up = await client.get("/health")
    finally:
        engine.dispose()
    assert (down.status_code, down.json()) == (503, {"status": "unavailable"})
    assert (up.status_code, up.json()) == (200, {"status": "ok"})


@contextmanager
def postgres_read_only(url: str, engine: Engine) -> Iterator[Outage]:
    """The database accepts connections and reads but no writes (default_transaction_read_only)."""
    name = parse_url(url).database
    admin = create_engine(parse_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")

    def set_read_only(value: str) -> None:
        with admin.connect() as conn:
            conn.execute(
                text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = {value}')
            )
            # sessions take the database's defaults when they start: end the pooled ones
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )

    @contextmanager
    def outage() -> Iterator[None]:
        set_read_only("on")
        try:
            yield
        finally:
            set_read_only("off")

    try:
        yield outage
    finally:
        admin.dispose()


# Outages in which the database still answers a query but refuses every write.
WRITE_OUTAGES = {"sqlite": sqlite_outage, "postgres": postgres_read_only, "mysql": mysql_outage}


@pytest.fixture(params=DB_KINDS)
def refusing_writes(
    request: pytest.FixtureRequest, tmp_path: Any, server_databases: ServerDatabases
) -> Iterator[tuple[Engine, Outage]]:
    """A database of this test alone, and an outage that refuses writes but answers reads."""
    with _database_with(request.param, tmp_path, server_databases, WRITE_OUTAGES) as pair:
        yield pair


@pytest.mark.anyio
async def test_health_is_503_while_the_database_answers_reads_but_refuses_writes(
    refusing_writes: tuple[Engine, Outage],
) -> None:
    """GET /health probes a write: a store that reads but cannot write is unavailable."""
    engine, outage = refusing_writes
    app = create_receiver_app(Settings(receiver_health_cache=0), engine)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        before = await client.get("/health")
        with outage():
            with engine.connect() as conn:  # the database still answers a query
                assert conn.execute(text("SELECT 1")).scalar_one() == 1
            down = await client.get("/health")
            post = await client.post("/callbacks", content=body("m", "t-1"), headers=JSON)
        up = await client.get("/health")
    assert (before.status_code, before.json()) == (200, {"status": "ok"})
    assert (down.status_code, down.json()) == (503, {"status": "unavailable"})
    assert post.status_code == 503
    assert (up.status_code, up.json()) == (200, {"status": "ok"})
    with engine.connect() as conn:  # the probes left nothing behind
        assert conn.execute(select(func.count()).select_from(notifications)).scalar_one() == 0


@pytest.mark.anyio
async def test_health_reuses_a_recent_probe_for_the_cache_period(
    refusing_writes: tuple[Engine, Outage],
) -> None:
    """Within receiver_health_cache seconds /health answers from the last probe."""
    engine, outage = refusing_writes
    app = create_receiver_app(Settings(receiver_health_cache=3600), engine)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        first = await client.get("/health")
        with outage():
            cached = await client.get("/health")
    assert first.status_code == cached.status_code == 200
