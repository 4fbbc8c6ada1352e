"""Provider notifications (interface section 6) in: read a body into a record (the receiver and the
JSONL import, :mod:`recon.ingest.notification_file`, both use it).

Every JSON object is kept. A body is decoded with :func:`recon.jsonparse.loads` (amounts
stay ``Decimal``) and then read field by field, leniently, for what recon uses:

=====================  ============================================================================
field                  read as
=====================  ============================================================================
kind                   ``notification_type`` ``RETURNED_TRANSACTION`` (returned funds), else
                       ``session_id``/``session_state`` (session), else ``transaction_id``/
                       ``transaction_state`` (transaction)
ids                    a non-empty string of at most 255 characters, or an integer (its digits)
``*_state``            an integer, a numeric string (``"3"``), an integral number (``3.0``) or a
                       state name (``"STATE_FAILED"``), within a 32-bit integer
``amount``             a number or a numeric string, exactly (``Decimal``), at most 30 digits
                       either side of the point
``merchant_id``,       not used by recon: kept when readable, else left empty, never a problem
``country_id``
=====================  ============================================================================

What cannot be read is recorded, never refused: the row's ``parse_status``
(:class:`~recon.constants.ParseStatus`) says how far it was read and ``parse_problem`` why
("field: reason; ..."). A body whose kind or ids cannot be read is stored as kind ``unknown`` with
no ids, so no run mistakes it for a claim; a known kind with an unreadable state or amount keeps
its ids and leaves the value empty. Only bodies that are not UTF-8 JSON (:class:`NotJSON`) or not
a JSON object (:class:`NotAnObject`) raise :class:`BodyError`.

The dedupe key is the SHA-256 of the body's canonical JSON: keys sorted, no whitespace, numbers
written as digits and exponent with trailing zeros removed (``11.10``, ``11.1`` and ``1.11e1`` are
the same amount; nothing passes through float). So the same notification delivered twice, even
re-serialised with other whitespace, key order or number formatting, is stored once. The merchant's
query string is *not* part of the key: the provider may deliver one event to several subscribed
urls, and that is still one event (the first delivery's query string is kept). A body nested
deeper than ``MAX_DEPTH`` is keyed by its exact text instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from recon.constants import (
    DEFAULT_ACCOUNT,
    NotificationKind,
    NotificationSource,
    ParseStatus,
    SessionState,
    TxState,
)
from recon.jsonparse import loads
from recon.provider.states import read_state
from recon.store.notifications import NotificationRecord

MAX_DEPTH = 32  # notification bodies are flat; deeper nesting is keyed by its text, not read
MAX_ID_CHARS = 255  # the id columns
MAX_AMOUNT_DIGITS = 30  # integer and fraction digits each; keeps the stored text short
MAX_NUMBER_TEXT = 64  # a numeric string longer than this is not read as a number
MAX_COUNTRY_CHARS = 16  # the country_id column
MAX_PROBLEM_CHARS = 1000
RETURNED_TRANSACTION = "RETURNED_TRANSACTION"


class BodyError(ValueError):
    """A body recon refuses to store; ``problems`` are "field: reason" lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class NotJSON(BodyError):
    """The body is not UTF-8 JSON at all."""


class NotAnObject(BodyError):
    """The body is JSON, but not an object (an array, a string, a number...)."""


# --- canonical form and key -----------------------------------------------------------------------


class _TooDeep(Exception):
    pass


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _number(value: Decimal) -> str:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite: NaN and Infinity never reach here
    all_digits = "".join(map(str, digits))
    text = all_digits.rstrip("0")
    if not text:
        return "0"
    exponent += len(all_digits) - len(text)
    return f"{'-' if sign else ''}{text}e{exponent}"


def canonical_json(value: Any, depth: int = 0) -> str:
    """The canonical JSON of a decoded body: sorted keys, no spaces, numbers normalised exactly."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, dict):
        parts = (json.dumps(k) + ":" + canonical_json(value[k], depth + 1) for k in sorted(value))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(item, depth + 1) for item in value) + "]"
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return json.dumps(value)  # ASCII: lone surrogates and NUL are escaped
    if isinstance(value, int):
        return _number(Decimal(value))
    if isinstance(value, Decimal):
        return _number(value)
    # json.loads turns the non-standard literals NaN and Infinity into floats
    raise NotJSON(["body: NaN and Infinity are not JSON numbers"])


def dedupe_key(decoded: Any) -> str:
    """SHA-256 hex of the canonical JSON of a decoded body (at most ``MAX_DEPTH`` deep)."""
    try:
        canonical = canonical_json(decoded)
    except _TooDeep:
        raise NotJSON([f"body: nested more than {MAX_DEPTH} levels deep"]) from None
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


# --- reading fields -------------------------------------------------------------------------------


class _Unreadable(Exception):
    """One field's value cannot be read; the message says why (never the whole value)."""


def _shown(value: Any) -> str:
    return _short(repr(value), 40)


def _storable(text: str) -> str:
    if "\x00" in text:
        raise _Unreadable("contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Unreadable("contains an unpaired surrogate") from None
    return text


def _read_id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Unreadable(f"not an id: {_shown(value)}")
    text = str(value) if isinstance(value, int) else value
    if isinstance(value, int) and len(text) > MAX_ID_CHARS:
        raise _Unreadable(f"longer than {MAX_ID_CHARS} characters")
    if not 1 <= len(text) <= MAX_ID_CHARS:
        raise _Unreadable(f"must be 1 to {MAX_ID_CHARS} characters")
    return _storable(text)


def _decimal(value: Any) -> Decimal:
    """A JSON number or numeric string as an exact, finite Decimal."""
    if isinstance(value, bool):
        raise _Unreadable("a boolean, not a number")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, str) and len(value) <= MAX_NUMBER_TEXT:
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise _Unreadable(f"not a number: {_shown(value)}") from None
    else:
        raise _Unreadable(f"not a number: {_shown(value)}")
    if not number.is_finite():
        raise _Unreadable("not a finite number")
    return number


def _read_state(value: Any, names: type[TxState] | type[SessionState]) -> int:
    try:
        return read_state(value, names)
    except ValueError as exc:
        raise _Unreadable(str(exc)) from None


def _read_amount(value: Any) -> str:
    amount = _decimal(value)
    exponent = amount.as_tuple().exponent
    assert isinstance(exponent, int)
    if amount.adjusted() >= MAX_AMOUNT_DIGITS or exponent < -MAX_AMOUNT_DIGITS:
        raise _Unreadable(f"out of range ({MAX_AMOUNT_DIGITS} digits at most)")
    return format(amount, "f")


def _read_country(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    country = value.strip().upper()
    if not 1 <= len(country) <= MAX_COUNTRY_CHARS:
        return None
    try:
        return _storable(country)
    except _Unreadable:
        return None


Reader = Callable[[Any], Any]
Need = Literal["id", "value", "optional"]


@dataclass
class _Reading:
    """The fields read from one body so far, and the problems met."""

    body: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    ids_read: bool = True

    def take(self, name: str, reader: Reader, *, need: Need, column: str = "") -> None:
        """Read ``name`` into ``column``; without an ``id`` the body is no claim at all."""
        value = self.body.get(name)
        if value is None:
            if need != "optional":
                self.problems.append(f"{name}: missing")
                self.ids_read = self.ids_read and need != "id"
            return
        try:
            self.values[column or name] = reader(value)
        except _Unreadable as exc:
            self.problems.append(f"{name}: {exc}")
            self.ids_read = self.ids_read and need != "id"

    def unused(self, name: str, reader: Reader) -> None:
        """A field recon does not use: kept when readable, else empty, never a problem."""
        try:
            self.values[name] = reader(self.body.get(name))
        except _Unreadable:
            self.values[name] = None


def _kind(body: dict[str, Any]) -> tuple[NotificationKind, str | None]:
    """The kind a body's fields make it (interface 6.2-6.4): a key sent as null counts as absent,
    and a state says whose notification it is before an id does."""
    given = {key for key, value in body.items() if value is not None}
    if "notification_type" in given:
        if body["notification_type"] == RETURNED_TRANSACTION:
            return NotificationKind.RETURNED_FUNDS, None
        return NotificationKind.UNKNOWN, (
            f"notification_type: unknown value {_shown(body['notification_type'])}"
        )
    for key, kind in _KINDS:
        if key in given:
            return kind, None
    return NotificationKind.UNKNOWN, (
        "body: not a notification (no session_id, transaction_id or notification_type)"
    )


# In turn: a state names the kind first (a session id beside a transaction_state is extra), then
# an id.
_KINDS = (
    ("transaction_state", NotificationKind.TRANSACTION),
    ("session_state", NotificationKind.SESSION),
    ("transaction_id", NotificationKind.TRANSACTION),
    ("session_id", NotificationKind.SESSION),
)


def _merchant(value: Any) -> str | None:
    return None if value is None else _read_id(value)


def _session_state(value: Any) -> int:
    return _read_state(value, SessionState)


def _transaction_state(value: Any) -> int:
    return _read_state(value, TxState)


def read_fields(body: dict[str, Any]) -> tuple[NotificationKind, dict[str, Any], list[str]]:
    """What recon can read of a decoded body: its kind, the column values, and the problems.

    The kind is ``UNKNOWN`` (and no ids are given) when the body's kind or ids cannot be read.
    """
    kind, problem = _kind(body)
    reading = _Reading(body)
    reading.unused("merchant_id", _merchant)
    if kind is NotificationKind.SESSION:
        reading.take("session_id", _read_id, need="id")
        reading.take("session_state", _session_state, need="value", column="state")
    elif kind is NotificationKind.TRANSACTION:
        reading.take("transaction_id", _read_id, need="id")
        reading.take("transaction_state", _transaction_state, need="value", column="state")
    elif kind is NotificationKind.RETURNED_FUNDS:
        reading.take("transaction_id", _read_id, need="id")
        reading.take("original_transaction_id", _read_id, need="id")
        reading.take("amount", _read_amount, need="optional")
        reading.unused("country_id", _read_country)
    else:
        assert problem is not None
        reading.problems.append(problem)
    if not reading.ids_read or kind is NotificationKind.UNKNOWN:
        return (
            NotificationKind.UNKNOWN,
            {"merchant_id": reading.values["merchant_id"]},
            (reading.problems),
        )
    return kind, reading.values, reading.problems


def _status(kind: NotificationKind, problems: list[str]) -> ParseStatus:
    if kind is NotificationKind.UNKNOWN:
        return ParseStatus.UNPARSED
    return ParseStatus.PARTIAL if problems else ParseStatus.PARSED


def parse_body(
    raw: bytes | str,
    *,
    source: NotificationSource,
    query: str = "",
    received_at: datetime | None = None,
    account: str = DEFAULT_ACCOUNT,
) -> NotificationRecord:
    """Read one raw body into a record to store under ``account``; ``NotJSON`` / ``NotAnObject``
    if it is neither."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotJSON([f"body: not UTF-8 text (byte {exc.start})"]) from None
    else:
        text = raw
    try:
        decoded = loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and over-long integers; RecursionError deep nesting
        raise NotJSON([f"body: malformed JSON: {_short(str(exc))}"]) from None
    if not isinstance(decoded, dict):
        raise NotAnObject([f"body: a notification is a JSON object, got {_json_type(decoded)}"])
    try:
        canonical = canonical_json(decoded)
        kind, values, problems = read_fields(decoded)
    except _TooDeep:
        canonical = "raw:" + text
        kind, values = NotificationKind.UNKNOWN, {}
        problems = [f"body: nested more than {MAX_DEPTH} levels deep"]
    key = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    return NotificationRecord(
        dedupe_key=key,
        kind=kind,
        merchant_id=values.get("merchant_id"),
        transaction_id=values.get("transaction_id"),
        original_transaction_id=values.get("original_transaction_id"),
        session_id=values.get("session_id"),
        state=values.get("state"),
        amount=values.get("amount"),
        country_id=values.get("country_id"),
        body=text,
        query=query,
        source=source,
        received_at=received_at or datetime.now(UTC),
        parse_status=_status(kind, problems),
        parse_problem=_short("; ".join(problems), MAX_PROBLEM_CHARS) if problems else None,
        provider_account=account,
    )


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
