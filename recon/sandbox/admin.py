"""Admin routes under ``/sandbox/``: the clock, faults, delivery log, listings, bank-side actions.

They need no bearer token, never meet injected faults, and are not mounted at all when
``admin_enabled`` is false. Answers use ``jsonparse`` too, so amounts stay exact; the few float
settings (fault shares, the clock) are written through ``Decimal`` of their ``repr``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from recon.provider import jsonparse
from recon.sandbox.errors import SandboxError, invalid, invalid_from

if TYPE_CHECKING:
    from recon.sandbox.engine import Sandbox


def _plain(value: Any) -> Any:
    """Floats to exact ``Decimal`` (``jsonparse`` refuses floats), recursively."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _json(data: Any, status: int = 200) -> Response:
    return Response(jsonparse.dumpb(_plain(data)), status, media_type="application/json")


def _error(exc: SandboxError) -> Response:
    body = {"error_name": exc.name, "error_message": exc.message}
    return Response(jsonparse.dumpb(body), exc.status, exc.headers, media_type="application/json")


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = jsonparse.loads(raw)
    except ValueError:
        raise invalid("body: not valid JSON") from None
    if not isinstance(data, dict):
        raise invalid("body: must be a JSON object")
    return data


def _sandbox(request: Request) -> Sandbox:
    sandbox: Sandbox = request.app.state.sandbox
    return sandbox


async def get_clock(request: Request) -> Response:
    """``GET /sandbox/clock``: ``{"now": epoch seconds, "offset": seconds added}``."""
    clock = _sandbox(request).clock
    return _json({"now": clock.now(), "offset": clock.offset})


async def advance_clock(request: Request) -> Response:
    """``POST /sandbox/clock/advance {"seconds": n}``: advance, then process everything due."""
    sandbox = _sandbox(request)
    try:
        seconds = (await _body(request)).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | Decimal):
            raise invalid("seconds: a number of seconds (>= 0) is required")
        if seconds < 0:
            raise invalid("seconds: the clock only moves forward")
    except SandboxError as exc:
        return _error(exc)
    processed = await sandbox.advance(float(seconds))
    return _json({"now": sandbox.clock.now(), "processed": processed})


async def get_faults(request: Request) -> Response:
    """``GET /sandbox/faults``: the faults in force."""
    return _json(_sandbox(request).faults.config.model_dump())


async def set_faults(request: Request) -> Response:
    """``POST /sandbox/faults``: change some faults (the rest stay) and re-seed the draws."""
    injector = _sandbox(request).faults
    try:
        changes = await _body(request)
        changes = {k: float(v) if isinstance(v, Decimal) else v for k, v in changes.items()}
        try:
            injector.configure(injector.config.updated(changes))
        except ValidationError as exc:
            raise invalid_from(exc) from None
    except SandboxError as exc:
        return _error(exc)
    return _json(injector.config.model_dump())


async def deliveries(request: Request) -> Response:
    """``GET /sandbox/deliveries``: every callback and notification attempt, oldest first."""
    return _json({"deliveries": [a.as_json() for a in _sandbox(request).dispatcher.log]})


async def transactions(request: Request) -> Response:
    """``GET /sandbox/transactions``: every transaction of every merchant."""
    records = [tx.record() for tx in _sandbox(request).transactions.values()]
    return _json({"transactions": records})


async def sessions(request: Request) -> Response:
    """``GET /sandbox/sessions``: every session of every merchant."""
    records = [s.record() for s in _sandbox(request).sessions.values()]
    return _json({"sessions": records})


async def confirm(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/confirm``: the bank confirms an aborted/failed payout."""
    try:
        tx = _sandbox(request).confirm(request.path_params["tx_id"])
    except SandboxError as exc:
        return _error(exc)
    return _json(tx.record())


async def return_funds(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/return [{"amount": ..}]``: the bank returns a payout."""
    try:
        amount = (await _body(request)).get("amount")
        if amount is not None and (
            isinstance(amount, bool) or not isinstance(amount, int | Decimal)
        ):
            raise invalid("amount: must be a number")
        returned = _sandbox(request).return_funds(
            request.path_params["tx_id"], None if amount is None else Decimal(amount)
        )
    except SandboxError as exc:
        return _error(exc)
    return _json(returned.record())


def admin_routes() -> list[BaseRoute]:
    """The admin routes, mounted before the API's catch-all ``/{op}``."""
    return [
        Route("/sandbox/clock", get_clock, methods=["GET"]),
        Route("/sandbox/clock/advance", advance_clock, methods=["POST"]),
        Route("/sandbox/faults", get_faults, methods=["GET"]),
        Route("/sandbox/faults", set_faults, methods=["POST"]),
        Route("/sandbox/deliveries", deliveries, methods=["GET"]),
        Route("/sandbox/transactions", transactions, methods=["GET"]),
        Route("/sandbox/sessions", sessions, methods=["GET"]),
        Route("/sandbox/transactions/{tx_id}/confirm", confirm, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/return", return_funds, methods=["POST"]),
    ]
