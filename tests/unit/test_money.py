"""Exact money: amounts become minor units exactly or are refused; ISO 4217 codes only."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.money import (
    MAX_MINOR,
    from_minor,
    minor_digits,
    normalise_currency,
    parse_decimal,
    to_minor,
)


def test_an_amount_beyond_28_digits_is_refused_not_rounded() -> None:
    """The issue's amount: 34 significant digits, a non-zero 18th decimal: refused."""
    amount = parse_decimal("100000000000000.010000000000000001")
    with pytest.raises(ValueError, match="more than 2 decimals for EUR"):
        to_minor(amount, "EUR")


def test_a_long_exact_amount_is_converted_exactly() -> None:
    """Trailing zeros beyond the minor unit are exact (a NUMERIC(18,4) column): accepted."""
    assert to_minor(parse_decimal("92233720368547758.07" + "0" * 60), "EUR") == MAX_MINOR
    assert to_minor(Decimal("1500.00"), "JPY") == 1500


@pytest.mark.parametrize(
    ("amount", "currency", "message"),
    [
        ("100.101", "EUR", "more than 2 decimals for EUR"),
        ("10.5", "JPY", "more than 0 decimals for JPY"),
        ("1.0001", "KWD", "more than 3 decimals for KWD"),
        ("92233720368547758.08", "EUR", "too large"),
        ("1e999999999", "EUR", "too large"),
        ("1e-999999999", "EUR", "more than 2 decimals for EUR"),
        ("NaN", "EUR", "not a finite"),
        ("-Infinity", "EUR", "not a finite"),
    ],
)
def test_an_amount_that_cannot_be_exact_minor_units_is_refused(
    amount: str, currency: str, message: str
) -> None:
    """Too many decimals, beyond a BIGINT, huge exponents and non-numbers raise ValueError."""
    with pytest.raises(ValueError, match=message):
        to_minor(Decimal(amount), currency)


def test_a_refusal_of_a_huge_amount_quotes_it_briefly() -> None:
    """A million-digit amount is named by its first digits, not printed whole."""
    with pytest.raises(ValueError, match="too large") as caught:
        to_minor(Decimal("1" * 1_000_000 + ".5"), "EUR")
    assert len(str(caught.value)) < 200


def exact_minor(amount: Decimal, digits: int) -> int | None:
    """The oracle: minor units by exact rational arithmetic, or None when not whole or too big."""
    value = Fraction(amount) * 10**digits
    if value.denominator != 1 or abs(value) > MAX_MINOR:
        return None
    return int(value)


coefficients = st.integers(min_value=0, max_value=10**40) | st.text(
    alphabet="0123456789", min_size=1, max_size=3000
).map(int)
moderate = st.builds(
    lambda sign, coefficient, exponent: Decimal(f"{'-' if sign else ''}{coefficient}E{exponent}"),
    st.booleans(),
    coefficients,
    st.integers(min_value=-3100, max_value=40),
)
extreme = st.builds(
    lambda coefficient, exponent: Decimal(f"{coefficient}E{exponent}"),
    st.integers(min_value=1, max_value=10**30),
    st.integers(min_value=10**6, max_value=999_999_999) | st.integers(-999_999_999, -(10**6)),
)


@settings(max_examples=300, deadline=None)
@given(moderate, st.sampled_from(["EUR", "JPY", "KWD", "CLF"]))
def test_to_minor_is_exact_or_refuses_over_long_inputs(amount: Decimal, currency: str) -> None:
    """Long digit strings and fractions: the exact minor units, or ValueError, never rounded."""
    expected = exact_minor(amount, minor_digits(currency))
    if expected is None:
        with pytest.raises(ValueError, match=r"decimals|too large"):
            to_minor(amount, currency)
    else:
        assert to_minor(amount, currency) == expected
        assert from_minor(expected, currency) == amount


@settings(max_examples=200, deadline=None)
@given(extreme)
def test_huge_exponents_are_refused_without_being_computed(amount: Decimal) -> None:
    """`1e999999999` and `1e-999999999` are refused at once (computing them would never end)."""
    with pytest.raises(ValueError, match=r"decimals|too large"):
        to_minor(amount, "EUR")


def test_from_minor_gives_the_currency_digits() -> None:
    """Minor units back to a Decimal with exactly the currency's digits, even beyond 28."""
    assert str(from_minor(10010, "EUR")) == "100.10"
    assert str(from_minor(1500, "JPY")) == "1500"
    assert str(from_minor(MAX_MINOR, "KWD")) == "9223372036854775.807"
    assert str(from_minor(0, "BHD")) == "0.000"


@pytest.mark.parametrize(
    ("code", "digits"),
    [("JPY", 0), ("EUR", 2), ("SEK", 2), ("BHD", 3), ("KWD", 3), ("CLF", 4), ("ISK", 0)],
)
def test_iso_4217_codes_have_their_minor_unit_digits(code: str, digits: int) -> None:
    """The ISO 4217 table gives each currency its minor-unit digits."""
    assert normalise_currency(code.lower()) == code
    assert minor_digits(code) == digits


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("XYZ", "not an ISO 4217 currency"),
        ("HRK", "not an ISO 4217 currency"),  # withdrawn in 2023
        ("XAU", "has no minor unit"),
        ("XXX", "has no minor unit"),
        ("EURO", "malformed currency code"),
        ("€", "malformed currency code"),
    ],
)
def test_a_code_outside_iso_4217_is_refused(code: str, message: str) -> None:
    """Three letters are not enough: the code must be an ISO 4217 currency with a minor unit."""
    with pytest.raises(ValueError, match=message):
        normalise_currency(code)
