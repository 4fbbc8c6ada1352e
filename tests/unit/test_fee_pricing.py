"""The agreed price of a payout, with literal data: each rounding mode on an exact half (in a
currency of 0, 2 and 3 decimals), min and max, which entry prices a payout, and overlaps."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pandas as pd
import pytest

from recon.reconcile.pricing import (
    FeeEntry,
    Rounding,
    entry_for,
    fee_minor,
    local_day,
    overlapping,
)

NOV = date(2026, 11, 1)


def entry(currency: str = "EUR", **fields: object) -> FeeEntry:
    values: dict[str, object] = {"currency": currency, "valid_from": NOV, **fields}
    for name in ("fixed", "percent", "min", "max"):
        if isinstance(values.get(name), str):
            values[name] = Decimal(str(values[name]))
    return FeeEntry(**values)  # type: ignore[arg-type]


def test_fixed_plus_percent_of_the_amount() -> None:
    """0.25 + 0.50 % of 100.00 EUR is 0.75 EUR."""
    assert fee_minor(entry(fixed="0.25", percent="0.5"), 10000) == 75


@pytest.mark.parametrize(
    ("currency", "amount_minor", "percent", "expected"),
    [
        # 0.50 % of 1.00 EUR is 0.005 EUR: exactly half a cent.
        ("EUR", 100, "0.5", {"half_even": 0, "half_up": 1, "down": 0, "up": 1}),
        # 0.1 % of 1,500 JPY is 1.5 JPY, and of 2,500 JPY 2.5 JPY (no minor unit).
        ("JPY", 1500, "0.1", {"half_even": 2, "half_up": 2, "down": 1, "up": 2}),
        ("JPY", 2500, "0.1", {"half_even": 2, "half_up": 3, "down": 2, "up": 3}),
        # 0.25 % of 1.000 KWD is 0.0025 KWD, and 0.015 % of 10.000 BHD 0.0015 BHD (3 decimals).
        ("KWD", 1000, "0.25", {"half_even": 2, "half_up": 3, "down": 2, "up": 3}),
        ("BHD", 10000, "0.015", {"half_even": 2, "half_up": 2, "down": 1, "up": 2}),
    ],
)
def test_each_rounding_mode_on_an_exact_half(
    currency: str, amount_minor: int, percent: str, expected: dict[str, int]
) -> None:
    """Half a minor unit: half_even to the even unit, half_up and up away from 0, down toward it."""
    got = {
        mode.value: fee_minor(entry(currency, percent=percent, rounding=mode), amount_minor)
        for mode in Rounding
    }
    assert got == expected


def test_down_and_up_round_a_fee_that_is_no_half() -> None:
    """0.3 % of 1.01 EUR is 0.00303: down 0.00, up 0.01, the halves 0.00."""
    got = {m.value: fee_minor(entry(percent="0.3", rounding=m), 101) for m in Rounding}
    assert got == {"half_even": 0, "half_up": 0, "down": 0, "up": 1}


def test_min_and_max_hold_the_rounded_fee() -> None:
    """0.10 + 1 %, between 0.50 and 2.00 EUR."""
    priced = entry(fixed="0.10", percent="1", min="0.50", max="2.00")
    assert fee_minor(priced, 1000) == 50  # 0.20, raised to the minimum
    assert fee_minor(priced, 10000) == 110  # 1.10, within
    assert fee_minor(priced, 100000) == 200  # 10.10, held at the maximum


def test_the_entry_whose_dates_cover_the_creation_day_prices_the_payout() -> None:
    """valid_to is the last day priced; the next entry takes over the day after."""
    early = entry(valid_to=date(2026, 11, 15), fixed="0.25")
    late = entry(valid_from=date(2026, 11, 16), fixed="0.30")
    other = entry("DKK", fixed="1.00")
    entries = (early, late, other)
    assert entry_for(entries, "EUR", "default", date(2026, 11, 15)) is early
    assert entry_for(entries, "EUR", "default", date(2026, 11, 16)) is late
    assert entry_for(entries, "EUR", "default", date(2026, 10, 31)) is None
    assert entry_for(entries, "SEK", "default", date(2026, 11, 20)) is None


def test_an_entry_of_another_account_does_not_price_the_payout() -> None:
    """An entry naming an account prices that account's payouts only."""
    mine = entry(account="default", fixed="0.25")
    theirs = entry("DKK", account="nordic", fixed="1.00")
    assert entry_for((mine, theirs), "EUR", "default", NOV) is mine
    assert entry_for((mine, theirs), "DKK", "default", NOV) is None


def test_the_creation_day_is_the_local_date() -> None:
    """23:30 UTC on 15 November is 16 November in Copenhagen: the later entry's day."""
    moment = pd.Timestamp("2026-11-15 23:30", tz="UTC")
    assert local_day(moment, "Europe/Copenhagen") == date(2026, 11, 16)
    assert local_day(moment, "UTC") == date(2026, 11, 15)


def test_entries_overlap_when_currency_accounts_and_dates_meet() -> None:
    """A shared day is an overlap; another currency, account or day is not."""
    a = entry(valid_to=date(2026, 11, 15))
    b = entry(valid_from=date(2026, 11, 15))
    c = entry(valid_from=date(2026, 11, 16), account="default")
    d = entry("DKK")
    assert overlapping((a, b)) == [(a, b)]
    assert overlapping((a, c, d)) == []
    assert overlapping((entry(), c)) == [(entry(), c)]  # every account meets "default"
