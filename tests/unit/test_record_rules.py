"""What a re-import does to a stored record: kept provider fields, each change both ways."""

from __future__ import annotations

from datetime import UTC, datetime

from recon.records import FieldChange, field_changes, merged
from recon.store.tables import PAYOUT_RECORD_COLUMNS

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
STORED = {
    "transaction_id": "tx-1",
    "merchant_reference": "ref-1",
    "amount_minor": 10000,
    "currency": "SEK",
    "bank_account_id": "ba-1",
    "customer_id": "c-1",
    "country_id": "SE",
    "created": T0,
    "eta": T0,  # filled in by a run from the provider's answer
}


def test_an_empty_eta_in_a_reimport_keeps_the_one_a_run_filled_in() -> None:
    """The merchant's export has no eta; the one the provider gave stays, so nothing changed."""
    again = merged(STORED, {**STORED, "eta": None, "created": None})
    assert again == STORED
    assert field_changes(STORED, again, PAYOUT_RECORD_COLUMNS) == []


def test_a_new_eta_in_a_reimport_replaces_the_stored_one() -> None:
    """A value the merchant does send wins over the stored one."""
    later = datetime(2026, 11, 21, tzinfo=UTC)
    assert merged(STORED, {**STORED, "eta": later})["eta"] == later


def test_a_changed_amount_and_currency_are_kept_with_both_values() -> None:
    """100.00 SEK re-imported as 50.00 EUR: the amount with each side's currency, and the code."""
    record = merged(STORED, {**STORED, "amount_minor": 5000, "currency": "EUR"})
    assert field_changes(STORED, record, PAYOUT_RECORD_COLUMNS) == [
        FieldChange("tx-1", "amount", "100.00 SEK", "50.00 EUR"),
        FieldChange("tx-1", "currency", "SEK", "EUR"),
    ]


def test_a_currency_change_alone_is_one_change() -> None:
    """The same minor units in another currency: the currency is what changed."""
    record = merged(STORED, {**STORED, "currency": "NOK"})
    assert field_changes(STORED, record, PAYOUT_RECORD_COLUMNS) == [
        FieldChange("tx-1", "currency", "SEK", "NOK")
    ]


def test_a_cleared_bank_account_is_a_change_to_nothing() -> None:
    """An account the record no longer names is a change with an empty after value."""
    record = merged(STORED, {**STORED, "bank_account_id": None})
    assert field_changes(STORED, record, PAYOUT_RECORD_COLUMNS) == [
        FieldChange("tx-1", "bank_account_id", "ba-1", None)
    ]
