"""A confirmed return that changes: ``return_changed``, and the payout's
returned amount follows the provider's latest answer."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from tests.unit.classify_support import (
    NA,
    expected,
    flag_rows,
    flags,
    not_found,
    notice,
    payout,
    pick,
    returned_funds,
    run,
)

# A payout an earlier run saw settled and returned, not polled tonight.
RETURNED = {"polled": False, "prev_outcome": "returned", "prev_state": 6}
# Return r as the store knows it: confirmed for p at 4.00 EUR by the run of 2024-03-01.
CONFIRMED = notice(
    "r",
    NA,
    notified=False,
    confirmed_original_id="p",
    confirmed_at=pd.Timestamp("2024-03-01 06:00", tz="UTC"),
    confirmed_amount_minor=400,
    confirmed_currency="EUR",
    obs_status="ok",
    obs_type=13,
    obs_related_transaction_id="p",
    obs_amount_minor=400,
    obs_currency="EUR",
)


def test_a_confirmed_return_answering_a_smaller_amount_is_return_changed() -> None:
    """The provider now says 3.00: the payout's returned amount is 3.00, and the finding says
    what was confirmed and what the provider says now."""
    result = run(
        [payout("p", **RETURNED)], [returned_funds("r", "p", amount_minor=300)], [CONFIRMED]
    )
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[300])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_changed")))
    assert result.exceptions.loc[0, "detail"] == "confirmed 4.00 EUR on 2024-03-01, now 3.00 EUR"


def test_a_confirmed_return_the_provider_no_longer_knows_is_not_counted() -> None:
    """A 404 un-confirms it: the payout is settled with nothing returned, the return still names
    it, and the finding says the return is gone (no other finding about it)."""
    result = run([payout("p", **RETURNED)], [not_found("r")], [CONFIRMED])
    want = expected(transaction_id=["p"], outcome=["settled"], returned_minor=[0])
    assert_frame_equal(pick(result.payouts, want), want)
    returns = expected(return_id=["r"], original_id=["p"], confirmed=[False], matched=[True])
    assert_frame_equal(pick(result.returns, returns), returns)
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_changed")))
    assert result.exceptions.loc[0, "detail"] == (
        "confirmed 4.00 EUR on 2024-03-01, now 404 not found"
    )


def test_an_earlier_404_keeps_the_return_unconfirmed_on_a_night_that_does_not_ask() -> None:
    """The latest answer (a 404 of an earlier run) wins over the earlier confirmation."""
    gone = CONFIRMED | {
        "obs_status": "not_found", "obs_type": NA, "obs_related_transaction_id": NA,
        "obs_amount_minor": NA, "obs_currency": NA,
    }  # fmt: skip
    result = run([payout("p", **RETURNED)], [], [gone])
    assert result.payouts.loc[0, "outcome"] == "settled"
    assert result.payouts.loc[0, "returned_minor"] == 0
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_changed")))


def test_a_notified_return_that_is_gone_is_return_changed_not_unverified() -> None:
    """A return recon confirmed and the provider now denies is one finding: return_changed."""
    result = run([payout("p", **RETURNED)], [not_found("r")], [CONFIRMED | {"notified": True}])
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_changed")))


def test_a_confirmed_return_answering_as_before_is_not_changed() -> None:
    """Same amount and currency as confirmed: no finding, still returned."""
    result = run([payout("p", **RETURNED)], [returned_funds("r", "p")], [CONFIRMED])
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows())


def test_a_return_that_comes_back_after_a_404_is_confirmed_again() -> None:
    """The provider knows it again at the confirmed amount: confirmed, returned, no finding."""
    gone = CONFIRMED | {"obs_status": "not_found", "obs_type": NA, "obs_amount_minor": NA}
    result = run([payout("p", **RETURNED)], [returned_funds("r", "p")], [gone])
    assert result.payouts.loc[0, "outcome"] == "returned"
    assert result.returns.loc[0, "confirmed"]
    assert_frame_equal(flags(result), flag_rows())
