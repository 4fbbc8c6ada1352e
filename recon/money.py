"""Exact money: ``Decimal`` in, integer minor units in columns, fixed-digit strings out.

Never float. The minor-unit table covers ISO 4217 currencies whose exponent is not 2; every other
well-formed three-letter code has two minor digits.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")

# ISO 4217 exponents other than 2.
_MINOR_DIGITS: dict[str, int] = {
    "BHD": 3, "BIF": 0, "CLF": 4, "CLP": 0, "DJF": 0, "GNF": 0, "IQD": 3, "ISK": 0, "JOD": 3,
    "JPY": 0, "KMF": 0, "KRW": 0, "KWD": 3, "LYD": 3, "OMR": 3, "PYG": 0, "RWF": 0, "TND": 3,
    "UGX": 0, "UYI": 0, "UYW": 4, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
}  # fmt: skip


def normalise_currency(code: str) -> str:
    """Upper-case a currency code; raise ``ValueError`` unless it is three letters."""
    upper = code.strip().upper()
    if not _CURRENCY_RE.match(upper):
        raise ValueError(f"malformed currency code {code!r} (expected three letters, e.g. EUR)")
    return upper


def minor_digits(currency: str) -> int:
    """Number of minor-unit digits of a (normalised) currency code."""
    return _MINOR_DIGITS.get(currency.upper(), 2)


def parse_decimal(text: str) -> Decimal:
    """Parse a plain decimal number (no exponent, no thousands separators) exactly."""
    stripped = text.strip()
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", stripped):
        raise ValueError(f"not a decimal number: {text!r}")
    try:
        return Decimal(stripped)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid literals
        raise ValueError(f"not a decimal number: {text!r}") from exc


def to_minor(amount: Decimal, currency: str) -> int:
    """Exact amount to integer minor units; ``ValueError`` if it has too many decimals."""
    digits = minor_digits(currency)
    scaled = amount.scaleb(digits)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{amount} has more than {digits} decimals for {currency}")
    return int(scaled)


def from_minor(minor: int, currency: str) -> Decimal:
    """Integer minor units back to an exact ``Decimal`` with the currency's digits."""
    digits = minor_digits(currency)
    return Decimal(minor).scaleb(-digits).quantize(Decimal(1).scaleb(-digits))


def format_minor(minor: int, currency: str) -> str:
    """Minor units as the text finance expects: ``10010`` EUR is ``100.10``."""
    return str(from_minor(minor, currency))
