"""JSON in and out without float: numbers with a fraction become ``Decimal``, and ``Decimal`` is
written back as a JSON number with exactly its digits (``11.01``, never ``11.0099999``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

_str = json.encoder.encode_basestring_ascii


def loads(data: bytes | str) -> Any:
    """Parse JSON; fractional numbers become ``Decimal``. Raises ``ValueError`` on bad JSON."""
    return json.loads(data, parse_float=Decimal)


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


_SIMPLE: dict[type, Callable[[Any, list[str]], None]] = {
    str: lambda o, out: out.append(_str(o)),
    int: lambda o, out: out.append(int.__repr__(o)),
    bool: lambda o, out: out.append("true" if o else "false"),
    type(None): lambda o, out: out.append("null"),
    Decimal: _enc_decimal,
    dict: _enc_dict,
    list: _enc_list,
    tuple: _enc_list,
}


def _encode(o: Any, out: list[str]) -> None:
    handler = _SIMPLE.get(type(o))
    if handler is not None:
        handler(o, out)
    elif isinstance(o, float):
        raise TypeError("refusing to encode a float: money must be Decimal")
    elif isinstance(o, datetime | date):
        out.append(_str(o.isoformat()))
    elif isinstance(o, str):
        out.append(_str(str(o)))
    elif isinstance(o, int):
        out.append(int.__repr__(o))
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
