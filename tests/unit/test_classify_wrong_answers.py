"""An answer about another id than the one asked is never an outcome, and its finding says what
happened: ``wrong_transaction`` naming the id answered about, for payouts and returns alike."""

from __future__ import annotations

from pandas.testing import assert_frame_equal

from recon.reconcile.cases import facts_gone
from recon.report.actions import flag_action
from tests.unit.classify_support import (
    answer,
    expected,
    flag_rows,
    flags,
    notice,
    payout,
    pick,
    run,
    wrong_answer,
)


def test_an_answer_about_another_id_is_a_wrong_transaction_and_keeps_the_outcome() -> None:
    """Not fetch_failed: the finding names the id the provider answered about."""
    store = [payout("p", prev_outcome="pending", prev_state=1), payout("other", polled=False)]
    result = run(store, [wrong_answer("p", "other")])
    want = expected(transaction_id=["p"], outcome=["pending"], state=[1])
    assert_frame_equal(pick(result.payouts.head(1), want), want)
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "wrong_transaction")))
    assert str(result.exceptions.loc[0, "detail"]) == (
        "the provider answered about other; kept outcome pending"
    )


def test_a_wrong_answer_for_a_payout_never_checked_leaves_it_unchecked() -> None:
    """Never an outcome: a first answer about another id does not settle the payout."""
    result = run([payout("p")], [wrong_answer("p", "x")])
    assert result.payouts.loc[0, "outcome"] == "unchecked"
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "wrong_transaction")))


def test_an_answer_about_another_id_for_a_return_is_a_wrong_transaction() -> None:
    """A return asked about and answered about another id: wrong_transaction, not unverified."""
    store = [payout("p", polled=False, prev_outcome="settled", prev_state=6)]
    result = run(store, [wrong_answer("r", "zz")], [notice("r", "p")])
    assert_frame_equal(flags(result), flag_rows(("r", "return", "wrong_transaction")))
    assert str(result.exceptions.loc[0, "detail"]) == "the provider answered about zz"
    assert result.payouts.loc[0, "outcome"] == "settled"


def test_a_right_answer_the_next_night_ends_the_wrong_transaction() -> None:
    """The usual answer about the payout: no finding."""
    result = run([payout("p", prev_outcome="pending", prev_state=1)], [answer("p", 6)])
    assert flags(result).empty


def test_a_wrong_transaction_is_cleared_by_an_answer_never_by_a_failed_fetch() -> None:
    """Judged without an answer (the next fetch failed) it stays; with an answer it goes."""
    judged = frozenset({("payout", "p")})
    args = ("payout", "p", "wrong_transaction")
    assert not facts_gone(*args, judged=judged, answered=frozenset())
    assert facts_gone(*args, judged=judged, answered=frozenset({"p"}))


def test_a_wrong_transaction_tells_a_person_to_ask_the_provider() -> None:
    """The report's action for the finding: ask the provider why, and do not act on the answer."""
    assert "ask the provider why" in flag_action("wrong_transaction")
