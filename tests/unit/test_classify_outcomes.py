"""Every payout gets exactly one outcome from this run's answer or its kept previous one."""

from __future__ import annotations

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from recon.errors import InputError
from recon.reconcile.classify import ClassifyParams
from tests.unit.classify_support import (
    AS_OF,
    DAY,
    NA,
    answer,
    expected,
    fetch_error,
    not_found,
    payout,
    pick,
    run,
)


def test_settled_failed_and_aborted_follow_states_6_3_and_2() -> None:
    """State 6 is settled, 3 failed, 2 aborted with its error code kept."""
    result = run(
        [payout("s"), payout("f"), payout("a")],
        [answer("s", 6), answer("f", 3), answer("a", 2, error_code="bank_rejected_transaction")],
    )
    want = expected(
        transaction_id=["s", "f", "a"],
        outcome=["settled", "failed", "aborted"],
        state=[6, 3, 2],
        error_code=[NA, NA, "bank_rejected_transaction"],
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_in_flight_states_are_pending() -> None:
    """States 0, 1, 5, 7, and 4 before its eta, are pending."""
    ids = ["s0", "s1", "s5", "s7", "s4"]
    result = run([payout(i) for i in ids], [answer(i, int(i[1])) for i in ids])
    want = expected(transaction_id=ids, outcome=["pending"] * 5, state=[0, 1, 5, 7, 4])
    assert_frame_equal(pick(result.payouts, want), want)


def test_completed_is_delayed_by_the_bank_error_code_even_before_its_eta() -> None:
    """State 4 with transaction_is_delayed_in_bank is delayed although the eta is a day away."""
    result = run(
        [payout("d", eta=AS_OF + DAY)],
        [answer("d", 4, error_code="transaction_is_delayed_in_bank")],
    )
    want = expected(
        transaction_id=["d"], outcome=["delayed"], error_code=["transaction_is_delayed_in_bank"]
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_completed_is_delayed_only_once_past_eta_plus_the_grace() -> None:
    """State 4 without a code is delayed past eta + grace; pending within it or with no eta."""
    grace = ClassifyParams(delay_grace=pd.Timedelta(hours=1))
    result = run(
        [
            payout("late", eta=AS_OF - pd.Timedelta(minutes=61)),
            payout("grace", eta=AS_OF - pd.Timedelta(minutes=59)),
            payout("no-eta", eta=NA),
        ],
        [answer("late", 4), answer("grace", 4), answer("no-eta", 4)],
        params=grace,
    )
    want = expected(
        transaction_id=["late", "grace", "no-eta"], outcome=["delayed", "pending", "pending"]
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_an_undocumented_state_is_pending_so_it_stays_polled() -> None:
    """A state outside 0-7 is never final: pending, kept in the polling set."""
    result = run([payout("x")], [answer("x", 9)])
    want = expected(transaction_id=["x"], outcome=["pending"], state=[9])
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_transaction_the_provider_does_not_know_is_unknown() -> None:
    """not_found gives unknown, with no state."""
    result = run([payout("n", prev_outcome="pending", prev_state=1)], [not_found("n")])
    want = expected(transaction_id=["n"], outcome=["unknown"], state=[NA])
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_fetch_failure_keeps_the_previous_outcome_state_and_error_code() -> None:
    """A payout that could not be fetched keeps what the last run knew, even failed."""
    result = run(
        [
            payout("p", prev_outcome="pending", prev_state=1),
            payout("a", prev_outcome="aborted", prev_state=2, prev_error_code="expired_session"),
        ],
        [fetch_error("p"), fetch_error("a")],
    )
    want = expected(
        transaction_id=["p", "a"],
        outcome=["pending", "aborted"],
        state=[1, 2],
        error_code=[NA, "expired_session"],
        exceptions=["fetch_failed", "fetch_failed"],
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_payout_never_fetched_successfully_is_unchecked() -> None:
    """No answer now and no previous outcome: unchecked, whether polled or not."""
    result = run([payout("e"), payout("q", polled=False)], [fetch_error("e")])
    want = expected(
        transaction_id=["e", "q"],
        outcome=["unchecked", "unchecked"],
        exceptions=["fetch_failed", ""],
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_a_final_payout_not_polled_keeps_its_outcome_without_a_flag() -> None:
    """Settled payouts are not polled again; they stay settled and are not fetch failures."""
    result = run([payout("s", polled=False, prev_outcome="settled", prev_state=6)])
    want = expected(transaction_id=["s"], outcome=["settled"], state=[6], exceptions=[""])
    assert_frame_equal(pick(result.payouts, want), want)


def test_outcome_since_moves_only_when_the_outcome_changes() -> None:
    """An unchanged outcome keeps its date; a changed or first one gets as_of."""
    since = AS_OF - 2 * DAY
    result = run(
        [
            payout("same", prev_outcome="pending", prev_outcome_since=since),
            payout("moved", prev_outcome="pending", prev_outcome_since=since),
            payout("first"),
        ],
        [answer("same", 1), answer("moved", 6), answer("first", 1)],
    )
    want = expected(
        transaction_id=["same", "moved", "first"],
        outcome_changed=[False, True, True],
        outcome_since=[since, AS_OF, AS_OF],
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_an_unknown_previous_outcome_is_rejected_with_its_value() -> None:
    """A prev_outcome that is not an outcome is bad input, named in the error."""
    with pytest.raises(InputError, match="paid"):
        run([payout("p", prev_outcome="paid")])


def test_repeated_payout_ids_are_rejected() -> None:
    """Two store rows for one id cannot both get an outcome."""
    with pytest.raises(InputError, match="unique"):
        run([payout("p"), payout("p")])


def test_a_missing_column_is_named() -> None:
    """The error says which frame lacks which column."""
    row = payout("p")
    del row["polled"]
    with pytest.raises(InputError, match="payouts frame lacks required columns: polled"):
        run([row])


def test_a_naive_as_of_is_rejected() -> None:
    """Every time rule needs an aware 'now'."""
    with pytest.raises(InputError, match="timezone-aware"):
        run([payout("p")], as_of=pd.Timestamp("2024-03-10"))
