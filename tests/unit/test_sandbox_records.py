"""Pure parts of the sandbox: masking, currencies, generated IBANs, amounts, the hosted page."""

from __future__ import annotations

from decimal import Decimal

import pytest

from recon.constants import TxState
from recon.sandbox import hosted
from recon.sandbox.records import (
    currency_for_country,
    epoch,
    fake_iban,
    mask_bban,
    mask_iban,
)
from recon.sandbox.scenarios import ORDINARY, payout_behaviour


def test_an_iban_keeps_only_its_country_and_last_four() -> None:
    """Masked IBAN: country code, stars, last 4 characters; BBAN: stars and last 4."""
    assert mask_iban("SE4550000000058398257466") == "SE" + "*" * 18 + "7466"
    assert mask_bban("50000000058398257466") == "*" * 16 + "7466"


@pytest.mark.parametrize(
    ("country", "currency"),
    [("SE", "SEK"), ("FI", "EUR"), ("DK", "DKK"), ("NO", "NOK"), ("GB", "GBP"), ("PL", "PLN"),
     ("AT", "EUR"), ("US", "USD"), (None, "USD")],
)  # fmt: skip
def test_the_currency_of_a_country(country: str | None, currency: str) -> None:
    """Known countries have their currency; others get the merchant's default."""
    assert currency_for_country(country, "USD") == currency


@pytest.mark.parametrize("country", ["SE", "FI", "GB", "XX"])
def test_a_generated_iban_passes_the_mod_97_check(country: str) -> None:
    """IBANs made for accounts chosen on the hosted page are well formed."""
    iban = fake_iban(country)
    rearranged = iban[4:] + iban[:4]
    assert iban.startswith(country)
    assert int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def test_epoch_seconds_are_written_to_the_millisecond() -> None:
    """Timestamps become Decimal with three decimals, so JSON never carries a float."""
    assert epoch(1741903012.0) == Decimal("1741903012.000")
    assert epoch(1741903012.12345) == Decimal("1741903012.123")
    assert epoch(None) is None


def test_magic_amounts_are_recognised_whatever_their_trailing_zeros() -> None:
    """11.010 behaves as 11.01; 11.011 is an ordinary amount."""
    assert payout_behaviour(Decimal("11.010")).initial_state == TxState.ABORTED
    assert payout_behaviour(Decimal("11.011")) is ORDINARY


def test_the_redirect_keeps_the_merchants_query_and_adds_the_session_id() -> None:
    """redirect_uri query parameters survive and session_id is appended."""
    target = hosted.redirect_target("https://shop.test/back?a=1&b=", "S-1")
    assert target == "https://shop.test/back?a=1&b=&session_id=S-1"


def test_the_scenario_is_read_from_the_form() -> None:
    """The urlencoded form's scenario field is the choice; a missing field is empty."""
    assert hosted.scenario_from_form(b"scenario=no_funds&x=1") == "no_funds"
    assert hosted.scenario_from_form(b"") == ""
