"""Words for people: amounts with their currency, states and types by name, findings labelled."""

from __future__ import annotations

import pandas as pd
import pytest

from recon.reconcile.kinds import KINDS
from recon.words import flag_words, money, money_text, state_name, state_names, type_name


@pytest.mark.parametrize(
    ("minor", "currency", "text"),
    [(5000, "DKK", "50.00 DKK"), (1500, "jpy", "1,500 JPY"), (211477, "DKK", "2,114.77 DKK"),
     (12345, "KWD", "12.345 KWD"),
     (None, "EUR", "no amount"), (5, None, "no amount")],
)  # fmt: skip
def test_an_amount_reads_with_its_currency_digits_and_code(
    minor: int | None, currency: str | None, text: str
) -> None:
    """The money formatter's digits, then the code; never minor units."""
    assert money(minor, currency) == text


def test_a_column_of_amounts_reads_the_same_as_one_amount() -> None:
    """The vectorised form agrees with the scalar one; a missing amount stays missing."""
    minor = pd.Series([5000, None, 1500], dtype="Int64")
    text = money_text(minor, pd.Series(["DKK", "EUR", "JPY"]))
    assert text.tolist()[0] == "50.00 DKK"
    assert text.isna().tolist() == [False, True, False]
    assert text.tolist()[2] == "1,500 JPY"


def test_states_and_types_read_as_the_providers_names() -> None:
    """6 is settled, STATE_FAILED failed, 9 undocumented with its number; 13 returned funds."""
    assert state_name(6) == "settled"
    assert state_name("STATE_FAILED") == "failed"
    assert state_name(9) == "an undocumented state (9)"
    assert state_names(pd.Series([2, None], dtype="Int64")).tolist()[0] == "aborted"
    assert type_name(13) == "returned funds"
    assert type_name(0) == "payment"


def test_every_finding_has_a_short_label_beside_its_name() -> None:
    """One label per kind, short, and shown after the code name."""
    assert all(0 < len(kind.label) <= 45 for kind in KINDS)
    assert flag_words("late_settlement") == "Paid after a failure"  # the code name: the CSVs
