"""The merchant's callback endpoint: ``POST /callbacks/NAME`` stores each provider notification of
account NAME once (``POST /callbacks``: of the account ``default``).

It answers 200 only after the notification is committed (or was already stored: a duplicate is a
success), and 503 when the database cannot commit, so the provider retries (interface 6.1) and
nothing is lost. Every JSON object is stored raw, also one recon cannot read as a notification
(its parse status and reason are stored beside it for the run to report); only bodies that are not
JSON (400), not a JSON object (422) or too large (413) are refused. Callbacks are
unauthenticated claims (interface 5.6): they are recorded for the reconciliation run to verify and
never acted on here.

Optional hardening, off by default: ``receiver_allow_networks`` (other clients get 403) and
``receiver_path_token`` (the paths become ``/callbacks/<token>`` and ``/callbacks/<token>/NAME``;
compared in constant time and never logged, which is why the server runs without uvicorn's access
log).

A callback for an account that is not configured is kept like any other (nothing the provider
sends is lost) and answered alike: stored under the name its path gives when that is a plain
identifier (:data:`recon.accounts.ACCOUNT_NAME`), else under :data:`NOT_A_NAME` with the path's
name, escaped and cut, in its parse problem. A night reports each as the finding
``notification_unreadable`` naming the account
(:func:`recon.store.notifications.unparsed_notifications`).

Database writes are synchronous SQLAlchemy and run in worker threads, keeping the event loop free.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from recon.accounts import ACCOUNT_NAME
from recon.constants import DEFAULT_ACCOUNT, NotificationSource, ParseStatus
from recon.errors import ConfigError, StoreError
from recon.ingest.connection_limits import ConnectionLimits, fit_to_descriptors
from recon.ingest.notifications import BodyError, NotJSON, parse_body
from recon.ingest.receiver_metrics import ReceiverMetrics
from recon.settings import Settings
from recon.store.db import describe_db_error, ensure_schema, make_engine
from recon.store.notifications import (
    NOT_A_NAME,
    NotificationRecord,
    probe_writes,
    store_notifications,
)

log = logging.getLogger(__name__)

# The merchant's own query parameters are short; a longer query string is not a callback url.
MAX_QUERY_CHARS = 4096

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class _TooLarge(Exception):
    pass


def _error(status: int, error: str, detail: str | None = None) -> JSONResponse:
    content = {"error": error} if detail is None else {"error": error, "detail": detail}
    return JSONResponse(content, status_code=status)


def parse_networks(cidrs: list[str]) -> list[Network]:
    """The allow-list as networks; ``ConfigError`` names the entry that is not a CIDR."""
    networks = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(cidr.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"receiver_allow_networks: not a network: {cidr!r}") from None
    return networks


class AllowNetworks:
    """ASGI middleware answering 403 to clients outside the allowed networks."""

    def __init__(
        self, app: ASGIApp, networks: list[Network], metrics: ReceiverMetrics | None = None
    ) -> None:
        self.metrics = metrics
        self.app = app
        self.networks = networks

    def allowed(self, host: str | None) -> bool:
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return False  # no peer address (a unix socket or a test transport): not on the list
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            client = scope.get("client")
            if not self.allowed(client[0] if client else None):
                if self.metrics is not None:
                    self.metrics.answered(403)
                await _error(403, "forbidden")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _media_type_problem(request: Request) -> str | None:
    media_type, _, params = request.headers.get("content-type", "").partition(";")
    if media_type.strip().lower() != "application/json":
        return "content-type must be application/json"
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() != "utf-8":
            return "charset must be utf-8"
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        return "content-encoding is not supported"
    return None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise _TooLarge
    body = bytearray()
    # Enforced while reading: Content-Length may be absent (chunked) or lie.
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _TooLarge
    return bytes(body)


# How much of a path's name that is no account's a parse problem quotes.
_NAME_SHOWN = 40


def _owned(record: NotificationRecord, name: str) -> NotificationRecord:
    """``record`` stored under the account ``name`` from the path: the name itself when it is a
    plain identifier (configured or not: a night reports those not configured), else
    :data:`NOT_A_NAME`, the name kept escaped (ASCII, cut) in the parse problem."""
    if ACCOUNT_NAME.fullmatch(name):
        return dataclasses.replace(record, provider_account=name)
    shown = ascii(name[:_NAME_SHOWN]) + ("..." if len(name) > _NAME_SHOWN else "")
    problem = f"account: the callback's path names {shown}, which is not an account name"
    return dataclasses.replace(
        record,
        provider_account=NOT_A_NAME,
        parse_status=ParseStatus.PARTIAL
        if record.parse_status is ParseStatus.PARSED
        else record.parse_status,
        parse_problem=problem
        if record.parse_problem is None
        else f"{problem}; {record.parse_problem}",
    )


def _db_problem(exc: Exception) -> str:
    # StoreError messages are already safe (no password); SQLAlchemy's carry SQL and parameters.
    return describe_db_error(exc) if isinstance(exc, SQLAlchemyError) else str(exc)


def _log_stored(record: NotificationRecord, new: int) -> None:
    # Ids come from the open internet: %r keeps control characters out of the log line.
    log.log(
        logging.INFO if new else logging.DEBUG,
        "%s %s notification account=%s merchant_id=%r transaction_id=%r session_id=%r "
        "original_transaction_id=%r state=%r%s",
        "stored" if new else "duplicate",
        record.kind,
        record.provider_account,  # a plain identifier or NOT_A_NAME: safe as it is
        record.merchant_id,
        record.transaction_id,
        record.session_id,
        record.original_transaction_id,
        record.state,
        "" if record.parse_problem is None else f" {record.parse_status}: {record.parse_problem!r}",
    )


def create_receiver_app(settings: Settings, engine: Engine | None = None) -> Starlette:
    """The receiver as an ASGI app; builds (and disposes of) its own engine unless given one."""
    networks = parse_networks(settings.receiver_allow_networks)
    token = settings.receiver_path_token
    limit = settings.receiver_max_body_bytes
    owned = engine is None
    if engine is None:
        engine = make_engine(settings.database_url)
    db: Engine = engine
    # SQLite has one writer at a time: queue writers here instead of in its busy-wait loop.
    sqlite_lock = threading.Lock() if db.dialect.name == "sqlite" else None

    # The schema is made current before the first write rather than at start-up, so a receiver
    # started while the database is down still answers (503) and recovers once it is back.
    schema_ready = threading.Event()

    def store(record: NotificationRecord) -> int:
        if not schema_ready.is_set():
            ensure_schema(db)
            schema_ready.set()
        with sqlite_lock if sqlite_lock is not None else nullcontext():
            return store_notifications(db, [record])

    metrics = ReceiverMetrics()

    async def receive(request: Request) -> Response:
        answer = await _receive(request)
        metrics.answered(answer.status_code)
        return answer

    async def _receive(request: Request) -> Response:
        if token is not None:
            given = str(request.path_params.get("token", "")).encode()
            if not hmac.compare_digest(given, token.get_secret_value().encode()):
                return _error(404, "not found")
        problem = _media_type_problem(request)
        if problem:
            return _error(415, "unsupported media type", problem)
        try:
            raw = await _read_body(request, limit)
        except _TooLarge:
            return _error(413, "body too large", f"at most {limit} bytes")
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is listening; nothing was stored
        query = request.url.query
        if len(query) > MAX_QUERY_CHARS or "\x00" in query:
            return _error(414, "query string too long or malformed")
        try:
            record = parse_body(raw, source=NotificationSource.RECEIVER, query=query)
        except NotJSON as exc:
            return _error(400, "malformed body", str(exc))
        except BodyError as exc:  # JSON, but not an object
            return _error(422, "not a notification", str(exc))
        record = _owned(record, str(request.path_params.get("account", DEFAULT_ACCOUNT)))
        try:
            new = await run_in_threadpool(store, record)
        except (SQLAlchemyError, StoreError) as exc:
            log.error("cannot store notification, answering 503: %s", _db_problem(exc))
            return _error(503, "database unavailable, try again later")
        _log_stored(record, new)
        if new:
            metrics.stored.labels(kind=str(record.kind)).inc()
        return JSONResponse({"status": "stored" if new else "duplicate"})

    def probe() -> None:
        if not schema_ready.is_set():
            ensure_schema(db)
            schema_ready.set()
        with sqlite_lock if sqlite_lock is not None else nullcontext():
            probe_writes(db)

    # The last probe's answer and when it was taken: a load balancer polling every second
    # must not turn into a write transaction a second.
    last_probe: dict[str, Any] = {"at": None, "ok": False}

    async def health(request: Request) -> Response:
        at = last_probe["at"]
        if at is None or time.monotonic() - at >= settings.receiver_health_cache:
            try:
                await run_in_threadpool(probe)
                ok = True
            except (SQLAlchemyError, StoreError) as exc:
                log.warning("health check: database refuses writes: %s", _db_problem(exc))
                ok = False
            last_probe.update(at=time.monotonic(), ok=ok)
        if not last_probe["ok"]:
            return JSONResponse({"status": "unavailable"}, status_code=503)
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if owned:
            db.dispose()

    path = "/callbacks/{token}" if token is not None else "/callbacks"
    app = Starlette(
        routes=[
            Route(path, receive, methods=["POST"]),
            Route(path + "/{account}", receive, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics.endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    if networks:
        app.add_middleware(AllowNetworks, networks=networks, metrics=metrics)
    return app


def connection_limits(settings: Settings) -> ConnectionLimits:
    """The receiver's request deadlines, header size and connection cap from the settings."""
    return ConnectionLimits(
        header_timeout=settings.receiver_header_timeout,
        body_timeout=settings.receiver_body_timeout,
        max_header_bytes=settings.receiver_max_header_bytes,
        max_connections=settings.receiver_max_connections,
    )


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn options of the receiver: h11 with recon's limits, no access log, no proxy headers.

    The connection cap is fitted to the file descriptors this process may open.
    """
    return fit_to_descriptors(connection_limits(settings)).uvicorn_options() | {
        "proxy_headers": False,  # the allow-list checks the real peer, never X-Forwarded-For
        "server_header": False,
    }


def serve_callbacks(settings: Settings, host: str, port: int) -> None:
    """Serve the receiver with uvicorn (h11 with limits, uvloop) until interrupted."""
    from recon.serving import AnnouncingServer, uvicorn_config

    app = create_receiver_app(settings)
    # One line per stored notification is the receiver's record of work: show it by default.
    if log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)
    # recon's config has no access log: it would print the secret path token.
    config = uvicorn_config(app, host=host, port=port, **server_options(settings))
    secret_path = settings.receiver_path_token is not None  # never printed: it names a placeholder
    path = "/callbacks/<RECON_RECEIVER_PATH_TOKEN>" if secret_path else "/callbacks"
    names = [account.name for account in settings.provider_accounts]

    def announce(url: str) -> None:
        log.info("receiving callbacks on %s%s (health check: GET %s/health)", url, path, url)
        for name in names:
            log.info("account %s: %s%s/%s", name, url, path, name)

    AnnouncingServer(config, announce).run()
