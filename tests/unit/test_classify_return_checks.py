"""Returns are checked, per currency: too much, another currency, an unsettled payout, another
amount in the notification. Each is a finding; none is summed blindly."""

from __future__ import annotations

from pandas.testing import assert_frame_equal

from tests.unit.classify_support import (
    answer,
    expected,
    flag_rows,
    flags,
    notice,
    payout,
    pick,
    returned_funds,
    run,
)

SETTLED = {"polled": False, "prev_outcome": "settled", "prev_state": 6}


def test_a_return_larger_than_its_payout_is_flagged_on_the_payout() -> None:
    """EUR 10.00 paid, EUR 12.00 returned: return_exceeds_payout, the sum is still reported."""
    result = run([payout("p", **SETTLED)], [returned_funds("r", "p", amount_minor=1200)])
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[1200])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "return_exceeds_payout")))
    assert "12.00 EUR" in result.exceptions["detail"].iloc[0]


def test_two_returns_adding_up_to_more_than_the_payout_are_flagged() -> None:
    """Two EUR 6.00 returns on a EUR 10.00 payout: each fits, together they do not."""
    returns = [returned_funds(r, "p", amount_minor=600) for r in ("r1", "r2")]
    result = run([payout("p", **SETTLED)], returns)
    want = expected(transaction_id=["p"], returned_minor=[1200])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "return_exceeds_payout")))


def test_returns_in_full_are_not_flagged() -> None:
    """A EUR 4.00 and a EUR 6.00 return on a EUR 10.00 payout: returned, no finding."""
    returns = [
        returned_funds("r1", "p", amount_minor=400),
        returned_funds("r2", "p", amount_minor=600),
    ]
    result = run([payout("p", **SETTLED)], returns)
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[1000])
    assert_frame_equal(pick(result.payouts, want), want)
    assert flags(result).empty


def test_a_return_in_another_currency_is_flagged_and_never_added() -> None:
    """SEK 4.00 on a EUR payout is not EUR 4.00; JPY 1000 is not EUR 10.00."""
    returns = [
        returned_funds("r-sek", "p", currency="SEK"),
        returned_funds("r-jpy", "q", amount_minor=1000, currency="jpy"),
    ]
    result = run([payout("p", **SETTLED), payout("q", **SETTLED)], returns)
    want = expected(transaction_id=["p", "q"], outcome=["settled", "settled"],
                    returned_minor=[0, 0])  # fmt: skip
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(
        flags(result),
        flag_rows(
            ("r-jpy", "return", "return_currency_mismatch"),
            ("r-sek", "return", "return_currency_mismatch"),
        ),
    )
    details = dict(zip(result.exceptions["item_id"], result.exceptions["detail"], strict=True))
    assert "1,000 JPY" in details["r-jpy"]
    assert "in EUR" in details["r-jpy"]


def test_a_confirmed_return_on_a_failed_or_pending_payout_is_flagged() -> None:
    """The money did leave: return_on_unsettled; the payout's outcome does not change."""
    result = run(
        [payout("f", polled=False, prev_outcome="failed", prev_state=3), payout("w")],
        [answer("w", 4), returned_funds("r-f", "f"), returned_funds("r-w", "w")],
    )
    want = expected(transaction_id=["f", "w"], outcome=["failed", "pending"])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(
        flags(result),
        flag_rows(
            ("r-f", "return", "return_on_unsettled"), ("r-w", "return", "return_on_unsettled")
        ),
    )


def test_a_notification_whose_amount_differs_from_the_provider_is_flagged() -> None:
    """The notification says 5.00, the provider's type-13 answer 4.00: return_amount_mismatch."""
    result = run(
        [payout("p", **SETTLED)],
        [returned_funds("r", "p")],
        [notice("r", "p", claimed_amount="5.00")],
    )
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_amount_mismatch")))
    assert "provider 4.00 EUR" in result.exceptions["detail"].iloc[0]


def test_a_notification_with_the_provider_amount_is_not_flagged() -> None:
    """4.00 and 4 are the same amount."""
    for claimed in ("4.00", "4", "4.0"):
        result = run(
            [payout("p", **SETTLED)],
            [returned_funds("r", "p")],
            [notice("r", "p", claimed_amount=claimed)],
        )
        assert flags(result).empty, claimed
