"""Validating one payout row, parsing its timestamps, and vetting a source query: pure functions."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from recon.ingest.payouts import row_digest, validate_row


def row(**cells: object) -> dict[str, object]:
    base: dict[str, object] = {
        "transaction_id": "tx-1",
        "merchant_reference": "ref-1",
        "amount": "100.10",
        "currency": "EUR",
    }
    return {**base, **cells}


def problems(**cells: object) -> list[str]:
    record, found = validate_row(row(**cells))
    assert record is None
    return found


def test_a_good_row_becomes_a_record_in_minor_units() -> None:
    """Amount becomes integer minor units, currency upper case, empty optional cells NULL."""
    record, found = validate_row(row(currency="eur", bank_account_id=" ", created="1740830400"))
    assert found == []
    assert record == {
        "transaction_id": "tx-1",
        "merchant_reference": "ref-1",
        "bank_account_id": None,
        "customer_id": None,
        "country_id": None,
        "currency": "EUR",
        "amount_minor": 10010,
        "created": datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
        "eta": None,
    }


@pytest.mark.parametrize(
    ("amount", "currency", "minor"),
    [("0.10", "EUR", 10), ("1500", "JPY", 1500), ("12.345", "KWD", 12345), ("7.50", "EUR", 750)],
)
def test_amounts_use_the_currency_digits(amount: str, currency: str, minor: int) -> None:
    """JPY has no minor digits, KWD three, EUR two."""
    record, _ = validate_row(row(amount=amount, currency=currency))
    assert record is not None
    assert record["amount_minor"] == minor


def test_ids_keep_their_case() -> None:
    """Ids are opaque: `AbC` stays `AbC`."""
    record, _ = validate_row(row(transaction_id="AbC"))
    assert record is not None
    assert record["transaction_id"] == "AbC"


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        ({"transaction_id": "", "merchant_reference": ""}, "merchant_reference is missing"),
        ({"transaction_id": None, "amount": None}, "amount is missing"),
        ({"transaction_id": None, "currency": ""}, "currency is missing"),
        ({"amount": "1,000.00"}, "is not a plain decimal number"),
        ({"amount": "1e3"}, "is not a plain decimal number"),
        ({"amount": "-5"}, "is not positive"),
        ({"amount": "0.00"}, "is not positive"),
        ({"amount": "100.101"}, "more than 2 decimals for EUR"),
        ({"amount": "10.5", "currency": "JPY"}, "more than 0 decimals for JPY"),
        ({"currency": "EURO"}, "malformed currency code"),
        ({"currency": "€"}, "malformed currency code"),
        ({"currency": "XYZ"}, "unknown currency code 'XYZ' (not an ISO 4217 currency)"),
        ({"amount": "100000000000000.010000000000000001"}, "more than 2 decimals for EUR"),
        ({"amount": "9" * 5000}, "is too large"),
        ({"created": "yesterday"}, "created: not an ISO 8601 time or epoch seconds"),
        ({"eta": "2025-13-01"}, "eta: not an ISO 8601 time"),
        ({"created": "9999-12-31T23:59:59-12:00"}, "created: out of range for a time"),
        ({"amount": 1.5}, "amount is a floating-point number"),
        ({"transaction_id": "x" * 256}, "longer than 255"),
        ({"transaction_id": "tx\x001"}, "transaction_id contains a NUL character"),
        ({"merchant_reference": "r\x00f"}, "merchant_reference contains a NUL character"),
        ({"bank_account_id": "b\x00"}, "bank_account_id contains a NUL character"),
        ({"customer_id": "c\x00"}, "customer_id contains a NUL character"),
    ],
)
def test_each_kind_of_bad_cell_is_reported(cells: dict[str, Any], expected: str) -> None:
    """A bad cell yields a problem that says which field and why."""
    assert any(expected in p for p in problems(**cells)), problems(**cells)


def test_every_problem_of_a_row_is_reported_at_once() -> None:
    """Several bad cells in one row give several problems, not just the first."""
    found = problems(transaction_id="", merchant_reference="", amount="abc", currency="12")
    assert len(found) == 3


def test_a_row_without_a_transaction_id_is_a_create_whose_outcome_is_unknown() -> None:
    """Reference, amount and currency without an id: a record with no id (an attempt)."""
    record, found = validate_row(row(transaction_id=""))
    assert found == []
    assert record is not None
    assert record["transaction_id"] is None
    assert record["amount_minor"] > 0


def test_database_values_are_converted_exactly() -> None:
    """Decimal and int cells from a database query are read without rounding."""
    record, found = validate_row(row(amount=Decimal("99999999999.99"), created=1740830400))
    assert found == []
    assert record is not None
    assert record["amount_minor"] == 9999999999999


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (Decimal("1E+999999999"), "amount 1E+999999999 is out of range"),
        (Decimal("1E-999999999"), "amount 1E-999999999 is out of range"),
        (Decimal("NaN"), "amount NaN is not a number"),
        (Decimal("100000000000000.010000000000000001"), "has more than 2 decimals for EUR"),
    ],
)
def test_a_database_decimal_that_cannot_be_exact_is_one_problem(
    amount: Decimal, expected: str
) -> None:
    """A DECIMAL from a query with a huge exponent or too many decimals is refused, once."""
    found = problems(amount=amount)
    assert len(found) == 1
    assert expected in found[0]


def test_a_very_long_amount_is_quoted_briefly() -> None:
    """A 100,000-character amount cell is named by its first characters, not echoed whole."""
    (found,) = problems(amount="1" * 100_000 + "x")
    assert len(found) < 200


def test_naive_times_are_read_in_the_given_zone() -> None:
    """`created` and `eta` without an offset are wall-clock times in the zone (RECON_TIMEZONE)."""
    cells = row(created="2025-03-01T12:00:00", eta="2025-03-01 14:00:00+00:00")
    record, found = validate_row(cells, zone=ZoneInfo("Europe/Helsinki"))
    assert found == []
    assert record is not None
    assert record["created"] == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
    assert record["eta"] == datetime(2025, 3, 1, 14, 0, tzinfo=UTC)


def test_naive_database_times_are_read_in_the_given_zone() -> None:
    """A naive datetime from the merchant's database is a wall-clock time in the zone as well."""
    cells = row(created=datetime(2025, 7, 1, 12, 0))  # noqa: DTZ001 - naive on purpose
    record, _ = validate_row(cells, zone=ZoneInfo("Europe/Helsinki"))
    assert record is not None
    assert record["created"] == datetime(2025, 7, 1, 9, 0, tzinfo=UTC)


def test_identical_rows_have_equal_digests_and_different_rows_do_not() -> None:
    """The duplicate check compares normalised data: `eur` 100.1 equals `EUR` 100.10."""
    a, _ = validate_row(row(currency="eur", amount="100.1"))
    b, _ = validate_row(row(currency="EUR", amount="100.10"))
    c, _ = validate_row(row(amount="100.11"))
    assert a is not None
    assert b is not None
    assert c is not None
    assert row_digest(a) == row_digest(b)
    assert row_digest(a) != row_digest(c)


def test_rows_that_differ_only_in_created_eta_or_customer_have_equal_digests() -> None:
    """A retry's row of one payout (its own created) is the same payout; another account is not."""
    a, _ = validate_row(row(created="2025-03-01T12:00:00Z"))
    b, _ = validate_row(row(created="2025-03-01T12:10:00Z", eta="2025-03-02T00:00:00Z"))
    c, _ = validate_row(row(bank_account_id="elsewhere"))
    assert a is not None
    assert b is not None
    assert c is not None
    assert row_digest(a) == row_digest(b)
    assert row_digest(a) != row_digest(c)
