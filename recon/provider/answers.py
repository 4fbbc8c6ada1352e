"""Reading the provider's answers: a 2xx body as its model, loose error bodies, status -> exception.

A 2xx body is JSON parsed with bounded numbers (:func:`recon.jsonparse.loads_answer`) and validated
as the operation's model; anything else is malformed, in a message without the input.

Error answers have no documented shape (interface 7.2); integrations read ``error_name`` and
``error_message``, others ``error_code``, ``message`` or ``error``. Whatever arrives, the raw text
is kept (truncated) for the report, with every secret masked first (:mod:`recon.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from recon import jsonparse
from recon.errors import (
    MalformedResponse,
    ProviderAuthError,
    ProviderClientError,
    ProviderHTTPError,
    ProviderRateLimited,
    ProviderServerError,
    ReferenceConflict,
    SessionIdGiven,
    TransactionNotFound,
    WrongTransaction,
)
from recon.redact import Scrubber

RAW_LIMIT = 2048

_NAME_KEYS = ("error_name", "error_code", "code", "error", "name", "type")
_MESSAGE_KEYS = ("error_message", "message", "error_description", "detail", "description")

# "a session was found with that id" (provider notes): the id is a session's, not a transaction's.
_SESSION_FOUND = re.compile(r"\bsession\b.{0,40}\bfound\b|\bfound\b.{0,40}\bsession\b", re.I)


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """What could be read from an error answer: a name, a message, and the raw text."""

    name: str | None
    message: str | None
    raw: str


def _text(value: Any) -> str | None:
    """The value as one line of text (a provider's message may hold line breaks)."""
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _first(doc: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = _text(doc.get(key))
        if found is not None:
            return found
    return None


def read_error_body(content: bytes, redact: Scrubber) -> ErrorBody:
    """Read an error answer loosely. Never raises: a body that is not JSON is kept as raw text."""
    raw = redact(content.decode("utf-8", errors="replace"))
    if len(raw) > RAW_LIMIT:
        raw = raw[:RAW_LIMIT] + "…"
    try:
        doc = jsonparse.loads_answer(content)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if not isinstance(doc, dict):
        first_line = raw[:200].splitlines()[0] if raw.strip() else ""
        return ErrorBody(name=None, message=_text(first_line), raw=raw)
    nested = doc.get("error")
    if isinstance(nested, dict):  # {"error": {"code": ..., "message": ...}}
        doc = {**doc, **nested, "error": None}
    name = _first(doc, _NAME_KEYS)
    message = _first(doc, _MESSAGE_KEYS)
    return ErrorBody(
        name=redact(name) if name else None,
        message=redact(message) if message else None,
        raw=raw,
    )


def error_for(
    status: int,
    body: ErrorBody,
    *,
    operation: str,
    retry_after: float | None = None,
    not_found_names: Iterable[str] = (),
    session_names: Iterable[str] = (),
    refused: type[ProviderAuthError] = ProviderAuthError,
) -> ProviderHTTPError:
    """The project's exception for an answer with status >= 400 (``refused``: the class of a
    401/403, :class:`~recon.errors.KeysRefused` for ``merchant.authorize``)."""
    text = body.message or body.name or "no error text in the answer"
    if body.name and body.message:
        text = f"{body.name}: {body.message}"
    common: dict[str, Any] = {
        "operation": operation,
        "error_name": body.name,
        "raw": body.raw,
        "retry_after": retry_after,
    }
    name = (body.name or "").lower()
    if status in (401, 403):
        return refused(text, status=status, **common)
    if status == 429:
        wait = f" (retry after {retry_after:g} s)" if retry_after is not None else ""
        return ProviderRateLimited(text + wait, status=status, **common)
    if status >= 500:
        return ProviderServerError(text, status=status, **common)
    if 400 <= status < 500 and (
        name in {n.lower() for n in session_names} or _SESSION_FOUND.search(text)
    ):
        return SessionIdGiven(text, status=status, **common)
    if status == 404 or name in {n.lower() for n in not_found_names}:
        return TransactionNotFound(text, status=status, **common)
    if status == 409 or "merchant_reference" in name:
        return ReferenceConflict(text, status=status, **common)
    return ProviderClientError(text, status=status, **common)


# --- a 2xx answer's body -------------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def parse_answer(model: type[M], content: bytes, redact: Scrubber, operation: str) -> M:
    """The answer's JSON object (Decimal amounts, bounded numbers) validated as ``model``; any
    other answer is :class:`~recon.errors.MalformedResponse`, its message scrubbed by ``redact``."""
    try:
        body = jsonparse.loads_answer(content)
    except (ValueError, UnicodeDecodeError) as exc:
        where = f" ({exc})" if not isinstance(exc, UnicodeDecodeError) else ""
        raise MalformedResponse(
            f"the answer is not JSON recon accepts{redact(where)}", operation=operation
        ) from None
    if not isinstance(body, dict):
        raise MalformedResponse(
            f"the answer is JSON {type(body).__name__}, not an object", operation=operation
        )
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        # Field paths and messages only: pydantic's own text repeats the input (tokens).
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(body)'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        )
        raise MalformedResponse(
            f"{model.__name__} answer not as documented: {redact(problems)}",
            operation=operation,
        ) from None


def same_id(asked: str, answered: str, operation: str, redact: Scrubber) -> None:
    """Ids are opaque, case-sensitive strings (provider notes): compared exactly; another id is
    :class:`~recon.errors.WrongTransaction`."""
    if answered != asked:
        shown = redact(answered[:80])
        raise WrongTransaction(
            asked,
            answered,
            f"asked about {asked!r}, the answer is about {shown!r}",
            operation=operation,
        )
