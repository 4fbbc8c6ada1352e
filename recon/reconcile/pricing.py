"""The agreed price of a payout: which fee entry prices it, and the fee it sets. Pure.

An entry (``[[fees]]`` in the configuration) prices the payouts in its currency, of its account
(every account when it names none), created on a day from ``valid_from`` to ``valid_to`` (both
included; no ``valid_to``: from then on) in the configured time zone. Its fee is ``fixed`` plus
``percent`` of the amount, rounded to the currency's minor unit by its ``rounding``, then held
between ``min`` and ``max``. Amounts are exact (``Decimal``); the fee comes back in minor units.
Two entries that could price one payout are a configuration error (:func:`overlapping`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_DOWN,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    ROUND_UP,
    Context,
    Decimal,
)
from enum import StrEnum
from zoneinfo import ZoneInfo

from recon.constants import DEFAULT_ACCOUNT as DEFAULT_ACCOUNT
from recon.money import minor_digits


class Rounding(StrEnum):
    """How a fee between two minor units is rounded."""

    HALF_EVEN = "half_even"
    HALF_UP = "half_up"
    DOWN = "down"  # toward zero
    UP = "up"  # away from zero


_DECIMAL_ROUNDING = {
    Rounding.HALF_EVEN: ROUND_HALF_EVEN,
    Rounding.HALF_UP: ROUND_HALF_UP,
    Rounding.DOWN: ROUND_DOWN,
    Rounding.UP: ROUND_UP,
}
# Pricing is read with the settings (the command line's start): no pandas or numpy here.
# Products of amounts and percentages are exact under this precision (no BIGINT amount times a
# percent of a few digits comes near it); rounding happens only where a rounding mode says.
_WIDE = Context(prec=80, Emax=MAX_EMAX, Emin=MIN_EMIN)


@dataclass(frozen=True)
class FeeEntry:
    """One agreed price, as the configuration states it (amounts in the currency's units)."""

    currency: str
    valid_from: date
    valid_to: date | None = None
    account: str | None = None  # None: every account
    fixed: Decimal = Decimal(0)
    percent: Decimal = Decimal(0)
    min: Decimal | None = None
    max: Decimal | None = None
    rounding: Rounding = Rounding.HALF_EVEN

    def covers(self, day: date) -> bool:
        """Whether a payout created on ``day`` (local date) falls in the entry's dates."""
        return self.valid_from <= day and (self.valid_to is None or day <= self.valid_to)

    def name(self) -> str:
        """How people find the entry: its ``valid_from``, currency and account."""
        return f"{self.valid_from.isoformat()} {self.currency} {self.account or 'all accounts'}"


def fee_minor(entry: FeeEntry, amount_minor: int) -> int:
    """The fee ``entry`` sets on a payout of ``amount_minor`` (minor units of its currency)."""
    digits = minor_digits(entry.currency)
    unit = Decimal(1).scaleb(-digits)
    amount = Decimal(amount_minor).scaleb(-digits)
    raw = _WIDE.add(entry.fixed, _WIDE.divide(_WIDE.multiply(amount, entry.percent), 100))
    fee = raw.quantize(unit, rounding=_DECIMAL_ROUNDING[entry.rounding], context=_WIDE)
    if entry.min is not None:
        fee = max(fee, entry.min)
    if entry.max is not None:
        fee = min(fee, entry.max)
    return int(fee.scaleb(digits, context=_WIDE))


def entry_for(
    entries: tuple[FeeEntry, ...], currency: str, account: str, day: date
) -> FeeEntry | None:
    """The entry pricing a payout in ``currency`` of ``account`` created on ``day``, or None."""
    for entry in entries:
        if entry.currency == currency and entry.account in (None, account) and entry.covers(day):
            return entry
    return None


def overlapping(entries: tuple[FeeEntry, ...]) -> list[tuple[FeeEntry, FeeEntry]]:
    """Pairs of entries that could both price one payout: same currency, accounts that meet,
    dates that meet."""
    pairs = []
    for a, b in itertools.combinations(entries, 2):
        if a.currency != b.currency:
            continue
        if a.account is not None and b.account is not None and a.account != b.account:
            continue
        a_to, b_to = a.valid_to or date.max, b.valid_to or date.max
        if a.valid_from <= b_to and b.valid_from <= a_to:
            pairs.append((a, b))
    return pairs


def local_day(moment: datetime, zone: str) -> date:
    """The date of an aware moment in the time zone ``zone`` (a payout's creation date)."""
    return moment.astimezone(ZoneInfo(zone)).date()


@dataclass(frozen=True)
class FeeRules:
    """The night's fee rules: the agreed prices (none: fees are reported, never checked), how far
    a charged fee may differ (an amount in the payout's currency), how long after settling a fee
    may still come, and the time zone whose dates the entries' dates are."""

    entries: tuple[FeeEntry, ...] = ()
    tolerance: Decimal = Decimal(0)
    grace: timedelta = timedelta(days=2)
    zone: str = "UTC"
    account: str = (
        DEFAULT_ACCOUNT  # the provider account whose night it is: whose payouts these are
    )
