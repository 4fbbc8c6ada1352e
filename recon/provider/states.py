"""The one reading of a state the provider sent, in an answer or in a notification.

Interface sections 3 and 6 send a state as a number; the provider notes add that a state has been
seen as numeric text (``"6"``) and as its name (``"STATE_SETTLED"``, ``"STATE_CREDITED"`` for
CREDIT). Answers (:mod:`recon.provider.models`) and notifications
(:mod:`recon.ingest.notifications`) read it here, so one value means one state everywhere.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from recon.constants import SessionState, TxState

STATE_LIMIT = 2**31  # states are INTEGER columns
_MAX_TEXT = 64  # longer text is no number
_ALIASES = {"CREDITED": "CREDIT"}


def read_state(value: Any, names: type[TxState] | type[SessionState]) -> int:
    """The state number ``value`` stands for: an int, a whole number (``6.0``), numeric text
    (``" 6 "``) or a name in any case, with or without ``STATE_`` (``names`` tells transaction
    from session names). ``ValueError`` says why otherwise, quoting at most a short value."""
    if type(value) is int and -STATE_LIMIT <= value < STATE_LIMIT:  # the usual answer, first
        return value
    if isinstance(value, bool):
        raise ValueError("a boolean, not a state")
    if isinstance(value, str):
        number = _number_text(value)
        if number is None:
            name = value.strip().upper().removeprefix("STATE_")
            try:
                return int(names[_ALIASES.get(name, name)])
            except KeyError:
                raise ValueError(f"unknown state {_shown(value)}") from None
    elif isinstance(value, int | Decimal):
        number = Decimal(value)
    else:
        raise ValueError(f"not a number: {_shown(value)}")
    # The magnitude is checked before any conversion: int(Decimal("1e999999999")) never ends.
    if not number.is_finite() or number.adjusted() > 10 or number != number.to_integral_value():
        raise ValueError(f"not a state number: {_shown(value)}")
    state = int(number)
    if not -STATE_LIMIT <= state < STATE_LIMIT:
        raise ValueError("out of range for a state")
    return state


def _number_text(value: str) -> Decimal | None:
    text = value.strip()
    digits = text.lstrip("+-").replace(".", "", 1)
    # ASCII only: isdigit() also takes "²", which Decimal refuses with no ValueError.
    if len(text) > _MAX_TEXT or not (digits.isascii() and digits.isdigit()):
        return None
    return Decimal(text)  # ASCII digits with at most one dot: always a number


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"
