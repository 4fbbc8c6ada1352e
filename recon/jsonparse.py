"""JSON in and out without float: numbers with a fraction become ``Decimal``, and ``Decimal`` is
written back as a JSON number with exactly its digits (``11.01``, never ``11.0099999``).
That is why the writer below is hand-written: ``json.dumps`` cannot write a ``Decimal`` as a
number (its ``default`` hook can only hand back another object, a string or a float). It is not
there for speed: against ``json.dumps`` it buys next to nothing of a run's CPU (docs/decisions.md,
"Machinery measured against the plain way").

Reading is bounded, because bodies come from the provider and the open internet:

- nesting deeper than :data:`MAX_DEPTH` is refused before parsing (the C parser recurses, and
  50,000 ``[`` end in ``RecursionError``). Counting ``[`` and ``{`` bytes is the quick test: a
  body with no more openers than the limit cannot be deeper, which is every ordinary answer, so
  only an odd body pays for the exact scan (brackets outside strings);
- in a provider's answer (:func:`loads_answer`), a number longer than :data:`MAX_NUMBER_CHARS`
  characters, or whose magnitude is beyond ``10**±MAX_EXPONENT``, is refused while parsing,
  before anything converts it (``int(Decimal("1e999999999"))`` would run without end holding the
  GIL). Notification bodies keep such numbers, so that the receiver can name the field.

Every refusal is a ``ValueError``, like any other bad JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

_str = json.encoder.encode_basestring_ascii

# Interface answers nest three levels deep; notifications one. 64 leaves room for any extra field
# while staying far below the interpreter's recursion limit (for us and for whoever walks it).
MAX_DEPTH = 64
# No field of the interface needs more: amounts stay below 10**15 with at most 18 decimals,
# timestamps below 10**11. The limits only keep absurd numbers from ever being converted.
MAX_NUMBER_CHARS = 64
MAX_EXPONENT = 64

# A JSON string (or an unterminated one, to the end), else one bracket. Linear: the alternatives
# inside a string cannot overlap, so nothing is tried twice.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|[\[\]{}]', re.DOTALL)
_OPEN = frozenset("[{")


def _too_deep(data: bytes | str) -> bool:
    """Whether ``data`` nests deeper than MAX_DEPTH (brackets inside strings do not count)."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= MAX_DEPTH:
            return False
        text = data
    else:
        if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
            return False
        text = data.decode(json.detect_encoding(data), errors="replace")
    depth = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif len(mark) == 1 and mark != '"':
            depth -= 1
    return False


def _number_text(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")


def _bounded_int(text: str) -> int:
    _number_text(text)
    return int(text)


def _bounded_decimal(text: str) -> Decimal:
    _number_text(text)
    value = Decimal(text)
    if abs(value.adjusted()) > MAX_EXPONENT:
        raise ValueError(f"a number of absurd magnitude ({text[:24]})")
    return value


def _parse(
    data: bytes | str,
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any] | None = None,
) -> Any:
    if _too_deep(data):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data, parse_float=parse_float, parse_int=parse_int)
    except RecursionError:  # only with a recursion limit lowered far below MAX_DEPTH's needs
        raise ValueError("JSON nested too deeply for this interpreter") from None


def loads(data: bytes | str) -> Any:
    """Parse JSON; fractional numbers become ``Decimal``. Raises ``ValueError`` on bad JSON and
    on nesting deeper than :data:`MAX_DEPTH`."""
    return _parse(data, Decimal)


def loads_answer(data: bytes | str) -> Any:
    """:func:`loads` for a provider's answer: numbers beyond :data:`MAX_NUMBER_CHARS` characters
    or ``10**±MAX_EXPONENT`` are refused too (``ValueError``), before any conversion."""
    return _parse(data, _bounded_decimal, _bounded_int)


def _enc_decimal(o: Decimal, out: list[str]) -> None:
    if not o.is_finite():
        raise ValueError("cannot encode a non-finite Decimal as JSON")
    out.append(format(o, "f"))


def _enc_dict(o: dict[Any, Any], out: list[str]) -> None:
    out.append("{")
    first = True
    for key, value in o.items():
        if not first:
            out.append(",")
        first = False
        out.append(_str(str(key)))
        out.append(":")
        _encode(value, out)
    out.append("}")


def _enc_list(o: list[Any] | tuple[Any, ...], out: list[str]) -> None:
    out.append("[")
    for i, value in enumerate(o):
        if i:
            out.append(",")
        _encode(value, out)
    out.append("]")


def _encode(o: Any, out: list[str]) -> None:
    if o is None:
        out.append("null")
    elif isinstance(o, bool):
        out.append("true" if o else "false")
    elif isinstance(o, str):
        out.append(_str(str(o)))  # str() gives a StrEnum's value
    elif isinstance(o, int):
        out.append(int.__repr__(o))  # an IntEnum's number
    elif isinstance(o, Decimal):
        _enc_decimal(o, out)
    elif isinstance(o, float):
        raise TypeError("refusing to encode a float: money must be Decimal")
    elif isinstance(o, datetime | date):
        out.append(_str(o.isoformat()))
    elif isinstance(o, dict):
        _enc_dict(o, out)
    elif isinstance(o, list | tuple):
        _enc_list(o, out)
    else:
        raise TypeError(f"cannot encode {type(o).__name__} as JSON")


def dumps(obj: Any) -> str:
    """Serialise to compact JSON; ``Decimal`` is written as a number with exactly its digits."""
    out: list[str] = []
    _encode(obj, out)
    return "".join(out)


def dumpb(obj: Any) -> bytes:
    return dumps(obj).encode()
