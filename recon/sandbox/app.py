"""The sandbox as an ASGI application: the operations of section 4 and the export, the hosted
page, the export's files, admin routes.

Every operation answers at ``/api/<op>`` and at ``/<op>`` (the interface shows both). Bodies are
parsed with ``jsonparse.loads`` (amounts become ``Decimal``) and answered with ``jsonparse.dumpb``
(``11.01`` is written exactly). Errors are ``{"error_name", "error_message"}`` JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from recon import jsonparse
from recon.provider.models import (
    AuthorizeRequest,
    BankAccountCreateRequest,
    BankAccountSelectionRequest,
    IdRequest,
    WithdrawalRequest,
)
from recon.sandbox import hosted
from recon.sandbox.admin import admin_routes
from recon.sandbox.config import Merchant, SandboxConfig
from recon.sandbox.engine import Sandbox
from recon.sandbox.errors import SandboxError, invalid, invalid_from
from recon.sandbox.faults import NO_FAULT

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
# A handler gets the sandbox, the token's merchant, the body and the address the request came to.
Handler = Callable[[Sandbox, Merchant | None, dict[str, Any], str], "dict[str, Any] | bytes"]
JSON = "application/json"

ASSETS = {
    "name": "Sandbox Instant Payout",
    "description": "Pay out instantly to your bank account (sandbox)",
    "logo_svg": (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
        '<rect width="24" height="24" rx="4" fill="#0a7a3d"/></svg>'
    ),
    "colors": {"primary": "#0a7a3d", "text": "#ffffff"},
}


def error_response(exc: SandboxError) -> Response:
    """The JSON error answer of ``exc``."""
    body = jsonparse.dumpb({"error_name": exc.name, "error_message": exc.message})
    return Response(body, exc.status, headers=exc.headers, media_type=JSON)


def _validate(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_from(exc) from None


def _merchant(merchant: Merchant | None) -> Merchant:
    assert merchant is not None  # every operation but authorize is authenticated first
    return merchant


def _authorize(sb: Sandbox, _: Merchant | None, data: dict[str, Any], _base: str) -> dict[str, Any]:
    req = _validate(AuthorizeRequest, data)
    return sb.authorize(req.public_key, req.secret.get_secret_value())


def _create_session(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str
) -> dict[str, Any]:
    return sb.create_session(_merchant(m), _validate(BankAccountSelectionRequest, data))


def _get_session(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str
) -> dict[str, Any]:
    return sb.get_session(_merchant(m), _validate(IdRequest, data).id).record()


def _create_account(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str
) -> dict[str, Any]:
    return sb.create_account(_merchant(m), _validate(BankAccountCreateRequest, data))


def _create_withdrawal(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str
) -> dict[str, Any]:
    req = _validate(WithdrawalRequest, data)
    return sb.create_withdrawal(_merchant(m), req, data.get("currency_id"))


def _get_transaction(sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str) -> bytes:
    return sb.transaction_answer(_merchant(m), _validate(IdRequest, data).id)


def _request_export(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], _base: str
) -> dict[str, Any]:
    return sb.request_export(_merchant(m), data)


def _get_export_task(
    sb: Sandbox, m: Merchant | None, data: dict[str, Any], base: str
) -> dict[str, Any]:
    return sb.export_task(_merchant(m), _validate(IdRequest, data).id, base)


AUTHORIZE = "merchant.authorize"
CREATE_WITHDRAWAL = "transaction.create_withdrawal"
OPERATIONS: dict[str, Handler] = {
    AUTHORIZE: _authorize,
    "session.create_bank_account_selection": _create_session,
    "session.get": _get_session,
    "bank_account.create": _create_account,
    CREATE_WITHDRAWAL: _create_withdrawal,
    "transaction.get": _get_transaction,
    "transaction.csv_export": _request_export,
    "export_task.get": _get_export_task,
}


def _answer_dropped(sandbox: Sandbox, data: dict[str, Any]) -> bool:
    """Whether this create's answer is lost (FaultConfig.drop_create_answer): made, not told."""
    dropped = sandbox.faults.config.drop_create_answer
    return bool(dropped) and data.get("merchant_reference") in dropped


def _broken(payload: bytes, missing_state: bool, malformed: bool) -> bytes:
    if missing_state:
        data = jsonparse.loads(payload)
        if isinstance(data, dict) and "state" in data:
            del data["state"]
            payload = jsonparse.dumpb(data)
    if malformed:
        payload = payload[: max(len(payload) // 2, 1)]
    return payload


async def operation(request: Request) -> Response:
    """One API operation: faults, bearer auth, JSON body, handler, JSON answer."""
    sandbox: Sandbox = request.app.state.sandbox
    op: str = request.path_params["op"]
    handler = OPERATIONS.get(op)
    if handler is None:
        return error_response(SandboxError(404, "unknown_operation", f"no operation {op!r}"))
    plan = NO_FAULT
    spared = op == AUTHORIZE and sandbox.faults.config.spare_authorize
    try:
        if sandbox.faults.active and not spared:
            plan = sandbox.faults.plan()
            if plan.delay_seconds:
                await asyncio.sleep(plan.delay_seconds)
            if plan.error is not None:
                raise plan.error
        merchant = (
            None if op == AUTHORIZE else sandbox.merchant_for(request.headers.get("authorization"))
        )
        try:
            data = jsonparse.loads(await request.body())
        except ValueError:
            raise invalid("body: not valid JSON") from None
        if not isinstance(data, dict):
            raise invalid("body: must be a JSON object")
        result = handler(sandbox, merchant, data, str(request.base_url))
        if op == CREATE_WITHDRAWAL and _answer_dropped(sandbox, data):
            raise SandboxError(504, "gateway_timeout", "the answer was lost on the way (injected)")
    except SandboxError as exc:
        return error_response(exc)
    payload = result if isinstance(result, bytes) else jsonparse.dumpb(result)
    if plan.malformed or plan.missing_state:
        payload = _broken(payload, plan.missing_state, plan.malformed)
    return Response(payload, media_type=JSON)


async def artifact(request: Request) -> Response:
    """``GET /artifacts/<token>``: an export's CSV; the unguessable token is the authorisation."""
    sandbox: Sandbox = request.app.state.sandbox
    try:
        content = sandbox.artifact(request.path_params["token"])
    except SandboxError as exc:
        return error_response(exc)
    disposition = {"content-disposition": 'attachment; filename="transactions.csv"'}
    return Response(content, headers=disposition, media_type="text/csv; charset=utf-8")


async def assets(request: Request) -> Response:
    """``GET /v1/assets/``: what a merchant shows the service as a payout option with."""
    return Response(jsonparse.dumpb(ASSETS), media_type=JSON)


def _hosted_session(request: Request) -> Any:
    sandbox: Sandbox = request.app.state.sandbox
    session = sandbox.sessions.get(request.path_params["session_id"])
    if session is None:
        return HTMLResponse("<!doctype html><p>Unknown or expired session.</p>", 404)
    return session


async def hosted_page(request: Request) -> Response:
    """The page the customer is sent to (hosted integration)."""
    session = _hosted_session(request)
    if isinstance(session, Response):
        return session
    return HTMLResponse(hosted.render_page(session, request.url.path))


async def hosted_choice(request: Request) -> Response:
    """The customer's choice ends the session, then the browser goes to ``redirect_uri``."""
    sandbox: Sandbox = request.app.state.sandbox
    session = _hosted_session(request)
    if isinstance(session, Response):
        return session
    try:
        sandbox.finish_session(session, hosted.scenario_from_form(await request.body()))
    except SandboxError as exc:
        page = hosted.render_page(session, request.url.path, error=exc.message)
        return HTMLResponse(page, exc.status)
    if session.redirect_uri:
        return RedirectResponse(hosted.redirect_target(session.redirect_uri, session.id), 303)
    return HTMLResponse(hosted.render_page(session, request.url.path))


async def _run_due_events(sandbox: Sandbox) -> None:
    """Process due events in real time while serving (state changes, returns, callbacks)."""
    interval = sandbox.config.background_interval_seconds
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sandbox.wakeup.wait(), interval)
        sandbox.wakeup.clear()
        try:
            await sandbox.process_due()
        except Exception:  # the loop must outlive one bad event
            log.exception("sandbox event failed")


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """The sandbox app; its state machine is ``app.state.sandbox``."""
    sandbox = Sandbox(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(_run_due_events(sandbox))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await sandbox.aclose()

    routes: list[BaseRoute] = []
    if sandbox.config.admin_enabled:
        routes.extend(admin_routes())
    routes += [
        Route("/v1/assets/", assets, methods=["GET"]),
        Route("/artifacts/{token}", artifact, methods=["GET"]),
        Route("/hosted/{session_id}", hosted_page, methods=["GET"]),
        Route("/hosted/{session_id}", hosted_choice, methods=["POST"]),
        Route("/api/{op}", operation, methods=["POST"]),
        Route("/{op}", operation, methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.sandbox = sandbox
    return app
