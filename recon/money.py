"""Exact money: ``Decimal`` in, integer minor units in columns, fixed-digit strings out.

Never float, and never rounded. Conversions work under an explicit context whose precision holds
any amount and which traps ``Inexact``, never under the default 28-digit context: an amount that is
not a whole number of minor units, or does not fit the BIGINT columns, raises ``ValueError``, and
so does a huge exponent such as ``1e999999999`` (refused from its digit count, never computed).
Currency codes are checked against ISO 4217 (:mod:`recon.iso4217`).
"""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal, Inexact, InvalidOperation

from recon.iso4217 import MINOR_DIGITS, WITHOUT_MINOR_UNIT

MAX_MINOR = 2**63 - 1  # the BIGINT columns of amounts in minor units
_MAX_MINOR_DIGITS = len(str(MAX_MINOR))
_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
_SHOWN_CHARS = 60
# Amount arithmetic happens under this context only. Its precision holds any Decimal's digits, so
# scaleb cannot round, and Inexact is trapped: dropping a non-zero digit raises instead of rounding.
# (Rounded is not trapped: to_integral_exact signals it for dropped zeros, which are exact.)
_EXACT = Context(
    prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact, InvalidOperation], clamp=0
)


def normalise_currency(code: str) -> str:
    """Upper-case a currency code; ``ValueError`` unless it is an ISO 4217 currency with a minor
    unit (``XYZ`` is unknown; ``XAU``, gold, has none)."""
    upper = code.strip().upper()
    if not _CURRENCY_RE.match(upper):
        raise ValueError(f"malformed currency code {code!r} (expected three letters, e.g. EUR)")
    if upper in WITHOUT_MINOR_UNIT:
        raise ValueError(f"currency code {code!r} has no minor unit in ISO 4217 (not money)")
    if upper not in MINOR_DIGITS:
        raise ValueError(f"unknown currency code {code!r} (not an ISO 4217 currency)")
    return upper


def minor_digits(currency: str) -> int:
    """Number of minor-unit digits of a currency code (2 for a code ISO 4217 does not list)."""
    return MINOR_DIGITS.get(currency.upper(), 2)


def parse_decimal(text: str) -> Decimal:
    """Parse a plain decimal number (no exponent, no thousands separators) exactly."""
    stripped = text.strip()
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", stripped):
        raise ValueError(f"not a decimal number: {_short(text)!r}")
    try:
        return Decimal(stripped)  # exact: a constructor never rounds to the context
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid literals
        raise ValueError(f"not a decimal number: {_short(text)!r}") from exc


def to_minor(amount: Decimal, currency: str) -> int:
    """Exact amount to integer minor units.

    ``ValueError`` if it has non-zero digits beyond the currency's minor unit (trailing zeros are
    exact and accepted: ``1500.00`` JPY is 1500), does not fit a BIGINT, or is not finite.
    """
    digits = minor_digits(currency)
    if not amount.is_finite():
        raise ValueError(f"{amount} is not a finite amount")
    if not amount:
        return 0
    # Refused from the digit count, before any arithmetic: 1e999999999 is never computed.
    if amount.adjusted() + digits >= _MAX_MINOR_DIGITS:
        raise ValueError(f"{shown(amount)} is too large ({_largest(currency)} at most)")
    try:
        minor = int(_EXACT.to_integral_exact(_EXACT.scaleb(amount, digits)))
    except Inexact:
        raise ValueError(
            f"{shown(amount)} has more than {digits} decimals for {currency}"
        ) from None
    if abs(minor) > MAX_MINOR:
        raise ValueError(f"{shown(amount)} is too large ({_largest(currency)} at most)")
    return minor


def from_minor(minor: int, currency: str) -> Decimal:
    """Integer minor units back to an exact ``Decimal`` with the currency's digits."""
    sign, coefficient, _ = Decimal(minor).as_tuple()
    return Decimal((sign, coefficient, -minor_digits(currency)))  # built from digits: exact


def format_minor(minor: int, currency: str) -> str:
    """Minor units as the text finance expects: ``10010`` EUR is ``100.10``."""
    return str(from_minor(minor, currency))


def shown(amount: Decimal) -> str:
    """An amount as plain digits for a message, cut short when it is very long."""
    exponent = amount.as_tuple().exponent
    plain = isinstance(exponent, int) and -_SHOWN_CHARS < exponent < _SHOWN_CHARS
    return _short(format(amount, "f") if plain else str(amount))


def _short(text: str) -> str:
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[: _SHOWN_CHARS - 20]}... ({len(text)} characters)"


def _largest(currency: str) -> str:
    return f"{from_minor(MAX_MINOR, currency)} {currency}"
