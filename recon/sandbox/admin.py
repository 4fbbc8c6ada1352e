"""Admin routes under ``/sandbox/``: the clock, faults, delivery log, listings, bank-side actions,
accounts and their own balance movements.

They need no bearer token, never meet injected faults, and are not mounted at all when
``admin_enabled`` is false. Answers use ``jsonparse`` too, so amounts stay exact; the few float
settings (fault shares, the clock) are written through ``Decimal`` of their ``repr``.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from recon import jsonparse
from recon.constants import TxState
from recon.money import from_minor, minor_digits, normalise_currency, parse_decimal, to_minor
from recon.sandbox import exports
from recon.sandbox.config import ACCOUNT_NAME, Merchant
from recon.sandbox.errors import SandboxError, invalid, invalid_from
from recon.sandbox.records import epoch

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


def _number(body: dict[str, Any], name: str, *, default: Decimal | None = None) -> Decimal | None:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise invalid(f"{name}: must be a number")
    return Decimal(value)


def _delay(body: dict[str, Any]) -> float:
    seconds = _number(body, "after_seconds", default=Decimal(0))
    assert seconds is not None
    if seconds < 0:
        raise invalid("after_seconds: must be >= 0")
    return float(seconds)


def _flag(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise invalid(f"{name}: must be true or false")
    return value


def _text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, str) or not value):
        raise invalid(f"{name}: must be a non-empty string")
    return value


def _known(body: dict[str, Any], names: set[str]) -> None:
    unknown = sorted(set(body) - names)
    if unknown:
        raise invalid(f"unknown field(s): {', '.join(unknown)} (known: {', '.join(sorted(names))})")


async def confirm(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/confirm [{"after_seconds": s}]``: 2/3 -> 5 -> 6."""
    sandbox = _sandbox(request)
    try:
        body = await _body(request)
        _known(body, {"after_seconds"})
        tx = sandbox.confirm(request.path_params["tx_id"], _delay(body))
    except SandboxError as exc:
        return _error(exc)
    await sandbox.process_due()
    return _json(tx.record())


async def reverse(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/reverse [{"state": 3, "error_code": c}]``: 6 -> 3 or 2."""
    sandbox = _sandbox(request)
    try:
        body = await _body(request)
        _known(body, {"state", "error_code"})
        state = body.get("state", 3)
        if isinstance(state, bool) or not isinstance(state, int):
            raise invalid("state: must be 2 (aborted) or 3 (failed)")
        tx = sandbox.reverse(request.path_params["tx_id"], state, _text(body, "error_code"))
    except SandboxError as exc:
        return _error(exc)
    await sandbox.process_due()
    return _json(tx.record())


RETURN_FIELDS = {"amount", "currency", "notify", "notified_amount", "any_state", "after_seconds"}


async def return_funds(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/return [{...}]``: the bank returns a payout (type 13)."""
    sandbox = _sandbox(request)
    try:
        body = await _body(request)
        _known(body, RETURN_FIELDS)
        returned = sandbox.return_funds(
            request.path_params["tx_id"],
            _number(body, "amount"),
            currency=_text(body, "currency"),
            notify=_flag(body, "notify", True),
            notified_amount=_number(body, "notified_amount"),
            any_state=_flag(body, "any_state", False),
            after_seconds=_delay(body),
        )
    except SandboxError as exc:
        return _error(exc)
    await sandbox.process_due()
    if returned is None:
        return _json({"scheduled": True, "after_seconds": _delay(body)}, 202)
    return _json(returned.record())


async def change_return(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/change {"amount": a} | {"gone": true}``: a type-13
    return answers another amount from now on, or 404."""
    try:
        body = await _body(request)
        _known(body, {"amount", "gone"})
        amount = body.get("amount")
        if isinstance(amount, str):
            try:
                amount = parse_decimal(amount)
            except ValueError:
                raise invalid("amount: must be a number") from None
        tx = _sandbox(request).change_return(
            request.path_params["tx_id"],
            _number({"amount": amount}, "amount"),
            gone=_flag(body, "gone", False),
        )
    except SandboxError as exc:
        return _error(exc)
    return _json(tx.record())


async def override_answer(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/answer {"fields": {..}, "answer_of": id}``: see docs."""
    try:
        body = await _body(request)
        _known(body, {"fields", "answer_of"})
        fields = body.get("fields")
        if fields is not None and not isinstance(fields, dict):
            raise invalid("fields: must be a JSON object of answer fields")
        tx = _sandbox(request).override_answer(
            request.path_params["tx_id"], fields, _text(body, "answer_of")
        )
    except SandboxError as exc:
        return _error(exc)
    answer = jsonparse.loads(tx.answer())
    return _json({"record": tx.record(), "answer": answer})


async def refuse(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/refuse [{"status": 403}]``: transaction.get of this id
    answers 401 or 403 to its merchant (``{"status": null}``: answers again)."""
    try:
        body = await _body(request)
        _known(body, {"status"})
        status = body.get("status", 403)
        if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
            raise invalid("status: must be 401, 403 or null (answer again)")
        tx = _sandbox(request).refuse(request.path_params["tx_id"], status)
    except SandboxError as exc:
        return _error(exc)
    return _json({"id": tx.id, "refused_status": tx.refused_status})


async def notify(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/notify [{"state": n, "url": u}]``: a 6.3 notification."""
    sandbox = _sandbox(request)
    try:
        body = await _body(request)
        _known(body, {"state", "url"})
        state = body.get("state")
        if state is not None and (isinstance(state, bool) or not isinstance(state, int)):
            raise invalid("state: must be an integer")
        urls = sandbox.notify_transaction(request.path_params["tx_id"], state, _text(body, "url"))
    except SandboxError as exc:
        return _error(exc)
    await sandbox.process_due()
    return _json({"urls": urls})


async def session_for(request: Request) -> Response:
    """``POST /sandbox/transactions/{id}/session``: a completed session naming this payout."""
    try:
        session = _sandbox(request).session_for(request.path_params["tx_id"])
    except SandboxError as exc:
        return _error(exc)
    return _json(session.record())


ACCOUNT_FIELDS = {
    "name",
    "public_key",
    "secret",
    "returned_funds_url",
    "callback_url",
    "default_currency",
}


def _account_json(merchant: Merchant) -> dict[str, Any]:
    return {
        "name": merchant.merchant_id,
        "public_key": merchant.public_key,
        "returned_funds_url": merchant.returned_funds_url,
        "callback_url": merchant.callback_url,
        "default_currency": merchant.default_currency,
    }


async def accounts(request: Request) -> Response:
    """``GET /sandbox/accounts``: every account served (names and keys, never secrets)."""
    return _json({"accounts": [_account_json(m) for m in _sandbox(request).merchants]})


async def add_account(request: Request) -> Response:
    """``POST /sandbox/accounts {"name": ..}``: serve one more account; answers its keys (201)."""
    try:
        body = await _body(request)
        _known(body, ACCOUNT_FIELDS)
        name = _text(body, "name")
        if name is None or not ACCOUNT_NAME.fullmatch(name):
            raise invalid("name: letters, digits, '-' and '_' (at most 64), starting with one")
        public_key = _text(body, "public_key") or f"{name}-public-key"
        secret = _text(body, "secret") or secrets.token_urlsafe(24)
        try:
            merchant = Merchant(
                merchant_id=name,
                public_key=public_key,
                secret=SecretStr(secret),
                returned_funds_url=_text(body, "returned_funds_url"),
                callback_url=_text(body, "callback_url"),
                default_currency=_text(body, "default_currency") or "EUR",
            )
        except ValidationError as exc:
            raise invalid_from(exc) from None
        _sandbox(request).add_merchant(merchant)
    except SandboxError as exc:
        return _error(exc)
    return _json({**_account_json(merchant), "merchant_id": name, "secret": secret}, 201)


MOVEMENT_FIELDS = {"amount", "currency", "settled", "merchant_reference"}


async def book_movement(request: Request) -> Response:
    """``POST /sandbox/accounts/{name}/top_up`` or ``/merchant_withdrawal {"amount": a, ..}``:
    the merchant's own money in or out, settled at ``settled`` (epoch, default now)."""
    sandbox = _sandbox(request)
    try:
        merchant = sandbox.merchant(request.path_params["name"])
        body = await _body(request)
        _known(body, MOVEMENT_FIELDS)
        amount = _number(body, "amount")
        if amount is None or not amount > 0:
            raise invalid("amount: a number above 0 is required")
        try:
            currency = normalise_currency(_text(body, "currency") or merchant.default_currency)
        except ValueError as exc:
            raise invalid(f"currency: {exc}") from None
        try:
            amount = from_minor(to_minor(amount, currency), currency)  # 500 EUR is 500.00
        except ValueError:
            raise invalid(
                f"amount: {amount} has more than {minor_digits(currency)} decimals for {currency}"
            ) from None
        settled = _number(body, "settled")
        if settled is not None and settled < 0:
            raise invalid("settled: epoch seconds, 0 or more")
        movement = sandbox.book_movement(
            merchant,
            request.url.path.rsplit("/", 1)[-1],
            amount,
            currency,
            None if settled is None else float(settled),
            _text(body, "merchant_reference"),
        )
    except SandboxError as exc:
        return _error(exc)
    return _json(
        {
            "id": movement.id,
            "type": movement.kind,
            "state": int(TxState.SETTLED),
            "amount": movement.amount,
            "currency_id": movement.currency.lower(),
            "merchant_reference": movement.merchant_reference,
            "created": epoch(movement.created),
            "settled": epoch(movement.settled),
        }
    )


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
        Route("/sandbox/transactions/{tx_id}/reverse", reverse, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/answer", override_answer, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/change", change_return, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/notify", notify, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/session", session_for, methods=["POST"]),
        Route("/sandbox/transactions/{tx_id}/refuse", refuse, methods=["POST"]),
        Route("/sandbox/accounts", accounts, methods=["GET"]),
        Route("/sandbox/accounts", add_account, methods=["POST"]),
        *(
            Route(f"/sandbox/accounts/{{name}}/{kind}", book_movement, methods=["POST"])
            for kind in exports.MOVEMENTS
        ),
    ]
