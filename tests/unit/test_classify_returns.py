"""Returned funds: only the provider confirms a return; a callback never changes an outcome."""

from __future__ import annotations

import pytest
from pandas.testing import assert_frame_equal

from tests.unit.classify_support import (
    NA,
    answer,
    expected,
    fetch_error,
    flag_rows,
    flags,
    not_found,
    notice,
    payout,
    pick,
    refused,
    returned_funds,
    run,
)

SETTLED = {"polled": False, "prev_outcome": "settled", "prev_state": 6}


def test_a_confirmed_return_turns_a_settled_payout_returned() -> None:
    """The return's own answer (type 13, related to the payout) confirms it."""
    result = run([payout("p", **SETTLED)], [returned_funds("r", "p")], [notice("r", "p")])
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)
    returns = expected(
        return_id=["r"],
        original_id=["p"],
        amount_minor=[400],
        currency=["EUR"],
        confirmed=[True],
        matched=[True],
        notified=[True],
    )
    assert_frame_equal(pick(result.returns, returns), returns)
    assert_frame_equal(flags(result), flag_rows())


def test_the_original_transaction_id_of_the_return_also_confirms() -> None:
    """A type-13 answer naming the payout in original_transaction_id links it as well."""
    answer13 = returned_funds("r", None, original_transaction_id="p")
    result = run([payout("p", **SETTLED)], [answer13], [notice("r", "p")])
    assert result.payouts.loc[0, "outcome"] == "returned"


def test_the_original_transaction_id_wins_over_a_related_id_naming_something_else() -> None:
    """Interface 3.3: a type-13 transaction is "linked by original_transaction_id". Its
    related_transaction_id (meaning unpublished) naming another id does not unlink it: the
    payout, which names the return too, is returned."""
    answer13 = returned_funds("r", "d-9", original_transaction_id="p")
    result = run(
        [payout("p", prev_outcome="settled", prev_state=6)],
        [answer("p", 6, related_transaction_id="r"), answer13],
        [notice("r", "p")],
    )
    assert result.payouts.loc[0, "outcome"] == "returned"
    assert result.returns.loc[0, "original_id"] == "p"


@pytest.mark.parametrize(
    ("provider", "reason"),
    [
        (not_found("r"), "does not know"),
        (answer("r", 6, type=1), "a payout, not returned funds"),
        (returned_funds("r", "other"), "links it to other"),
    ],
    ids=["not-found", "type-1", "linked-elsewhere"],
)
def test_a_forged_return_never_changes_the_outcome_and_is_flagged(
    provider: dict[str, object], reason: str
) -> None:
    """Notified, but the provider does not confirm it for that payout: settled, flagged."""
    result = run(
        [payout("p", **SETTLED), payout("other", **SETTLED)], [provider], [notice("r", "p")]
    )
    want = expected(transaction_id=["p"], outcome=["settled"], returned_minor=[0])
    assert_frame_equal(pick(result.payouts.head(1), want), want)
    unverified = result.exceptions[result.exceptions["flag"] == "return_unverified"]
    assert unverified["item_id"].tolist() == ["r"]
    assert reason in unverified["detail"].iloc[0]


def test_a_return_confirmed_from_the_payout_side_only() -> None:
    """The payout's answer names a type-13 transaction that names no payout: confirmed."""
    result = run(
        [payout("p", prev_outcome="settled", prev_state=6)],
        [answer("p", 6, related_transaction_id="r"), returned_funds("r", None)],
    )
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)
    returns = expected(return_id=["r"], original_id=["p"], confirmed=[True], notified=[False])
    assert_frame_equal(pick(result.returns, returns), returns)


def test_the_same_return_announced_twice_counts_once() -> None:
    """Two notifications for one return: one return row, its amount summed once."""
    result = run(
        [payout("p", **SETTLED)],
        [returned_funds("r", "p")],
        [notice("r", "p"), notice("r", "p")],
    )
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)
    assert result.returns["return_id"].tolist() == ["r"]


def test_two_confirmed_partial_returns_sum() -> None:
    """returned_minor is the sum of the confirmed returns' provider amounts."""
    result = run(
        [payout("p", **SETTLED)],
        [returned_funds("r1", "p", amount_minor=300), returned_funds("r2", "p", amount_minor=250)],
        [notice("r1", "p"), notice("r2", "p")],
    )
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[550])
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_confirmed_return_on_a_payout_not_settled_leaves_its_outcome() -> None:
    """Returned is reached only from settled; the amount is still reported."""
    result = run([payout("p")], [answer("p", 5), returned_funds("r", "p")])
    want = expected(transaction_id=["p"], outcome=["pending"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_confirmation_from_an_earlier_run_holds() -> None:
    """A return confirmed before (confirmed_original_id) stays confirmed without a new answer."""
    earlier = notice(
        "r", NA, notified=False, confirmed_original_id="p", obs_amount_minor=400, obs_currency="EUR"
    )
    result = run([payout("p", **SETTLED)], [], [earlier | {"obs_status": "ok", "obs_type": 13}])
    want = expected(transaction_id=["p"], outcome=["returned"], returned_minor=[400])
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_return_for_a_payout_not_in_the_store_is_flagged() -> None:
    """A notified return naming an unknown payout is return_without_payout."""
    result = run([payout("p", **SETTLED)], [returned_funds("r", "ghost")], [notice("r", "ghost")])
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_without_payout")))
    assert result.exceptions.loc[0, "detail"] == "original payout ghost is not in the store"
    assert not result.returns.loc[0, "matched"]


def test_a_return_that_could_not_be_fetched_is_fetch_failed() -> None:
    """No answer and no earlier confirmation: fetch_failed, and the payout stays settled."""
    result = run([payout("p", **SETTLED)], [fetch_error("r")], [notice("r", "p")])
    assert_frame_equal(flags(result), flag_rows(("r", "return", "fetch_failed")))
    assert result.payouts.loc[0, "outcome"] == "settled"


def test_a_return_the_provider_refuses_is_fetch_failed_saying_so() -> None:
    """A refused return id is fetch_failed (not unverified), naming the refusal."""
    result = run([payout("p", **SETTLED)], [refused("r")], [notice("r", "p")])
    assert_frame_equal(flags(result), flag_rows(("r", "return", "fetch_failed")))
    assert result.exceptions.loc[0, "detail"] == (
        "the provider refuses this id to this merchant account"
    )
    assert result.payouts.loc[0, "outcome"] == "settled"


def test_notifications_naming_different_payouts_are_never_verified() -> None:
    """Two claims for one return: the provider's link decides, and the conflict is flagged."""
    result = run(
        [payout("p", **SETTLED), payout("q", **SETTLED)],
        [returned_funds("r", "p")],
        [notice("r", "p"), notice("r", "q")],
    )
    want = expected(transaction_id=["p", "q"], outcome=["returned", "settled"])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("r", "return", "return_unverified")))
    assert result.exceptions.loc[0, "detail"] == "notifications name different payouts: p;q"
