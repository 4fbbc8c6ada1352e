"""The provider's value types, read leniently and normalised on the way in (interface 3, 4).

States (:func:`recon.provider.states.read_state`), epoch timestamps, exact amounts, upper-case
codes and ids, as pydantic ``Annotated`` types the payload models of :mod:`recon.provider.models`
are built from; and the checks that an answer's text and amount fit the store.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer, StringConstraints

from recon.constants import SessionState, TxState
from recon.provider.states import read_state

# Amounts of an answer must fit integer minor units in a BIGINT (3-decimal currencies included).
AMOUNT_LIMIT = 10**15
AMOUNT_DECIMALS = 18


def storable_text(value: str, name: str) -> None:
    if "\x00" in value:
        raise ValueError(f"{name} contains a NUL character")
    if value.isascii():  # the usual id or reference: no surrogate, no need to encode it
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} contains an unpaired surrogate") from None


# --- normalising types -----------------------------------------------------------------------

# States and types are INTEGER columns. Magnitude is checked before any conversion: int() of
# Decimal("1e999999999") would build a billion-digit integer, holding the GIL all the while.
_WHOLE_DIGITS = 18


def _whole(value: Decimal) -> Decimal | int:
    """A whole Decimal of sane magnitude as an int; a fraction is left for validation to refuse."""
    if not value.is_finite() or value.adjusted() >= _WHOLE_DIGITS:
        raise ValueError("expected an integer of at most 18 digits")
    if value != value.to_integral_value():
        return value  # a fraction: refused by the int field with pydantic's own message
    return int(value)


def _whole_text(text: str) -> int:
    if len(text.lstrip("-")) > _WHOLE_DIGITS:
        raise ValueError("expected an integer of at most 18 digits")
    return int(text)


def _state_from(names: type[TxState] | type[SessionState]) -> Any:
    def convert(value: Any) -> Any:
        return read_state(value, names)

    return convert


def upper_code(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().upper()
    return value


def _epoch(value: Any) -> Any:
    if type(value) is int:  # the usual answer, first: whole epoch seconds (no float of them)
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"timestamp out of range: {value!r}") from None
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, bool):
        raise ValueError("timestamp must be epoch seconds, not a boolean")
    if isinstance(value, int | float | Decimal):
        seconds = value
    elif isinstance(value, str):
        try:
            seconds = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"timestamp is not epoch seconds: {value!r}") from None
    else:
        raise ValueError(f"timestamp must be epoch seconds, got {type(value).__name__}")
    try:
        # Timestamps are not money; microsecond precision of a float is plenty here.
        return datetime.fromtimestamp(float(seconds), tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"timestamp out of range: {value!r}") from None


def money_value(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("amount must be a number, not a boolean")
    if isinstance(value, float):
        raise ValueError("amount arrived as a float; parse JSON with parse_float=Decimal")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"amount is not a number: {value!r}") from None
    if isinstance(value, Decimal) and not value.is_finite():
        raise ValueError("amount must be finite")
    return value


def int_like(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected an integer, not a boolean")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return _whole_text(value.strip())
    if isinstance(value, Decimal):
        return _whole(value)
    return value


def _epoch_out(value: datetime) -> int | float:
    ts = value.timestamp()
    return int(ts) if ts == int(ts) else ts


# States and types are stored in INTEGER columns: a number beyond 32 bits is malformed, not a state.
Int32 = Field(ge=-(2**31), le=2**31 - 1)
TxStateValue = Annotated[int, BeforeValidator(_state_from(TxState)), Int32]
SessionStateValue = Annotated[int, BeforeValidator(_state_from(SessionState)), Int32]
Code = Annotated[str, StringConstraints(min_length=2, max_length=8), BeforeValidator(upper_code)]
Epoch = Annotated[datetime, BeforeValidator(_epoch), PlainSerializer(_epoch_out, when_used="json")]
Money = Annotated[Decimal, BeforeValidator(money_value)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=255)]


def _blank_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


# An answer's optional id or code sent as "" is not sent (provider notes: parse loosely).
MaybeId = Annotated[Id | None, BeforeValidator(_blank_none)]
MaybeCode = Annotated[Code | None, BeforeValidator(_blank_none)]
