"""Every answer is checked against the record: reference, account, undocumented states, and the
provider's own created and eta where the record has none."""

from __future__ import annotations

from pandas.testing import assert_frame_equal

from tests.unit.classify_support import (
    AS_OF,
    DAY,
    NA,
    answer,
    expected,
    flag_rows,
    flags,
    payout,
    pick,
    run,
)


def test_an_answer_with_another_reference_is_a_reference_mismatch() -> None:
    """The provider holds m-other for the id we recorded as m-p: flagged, outcome as answered."""
    result = run([payout("p")], [answer("p", 6, merchant_reference="m-other")])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "reference_mismatch")))
    assert result.exceptions.loc[0, "detail"] == "record m-p, provider m-other"
    assert result.payouts.loc[0, "outcome"] == "settled"


def test_an_answer_paid_to_another_account_is_an_account_mismatch() -> None:
    """to_bank_account_id differs from the record's bank_account_id."""
    result = run([payout("p")], [answer("p", 6, to_bank_account_id="b-elsewhere")])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "account_mismatch")))
    assert "record bank account b-p, provider b-elsewhere" in result.exceptions.loc[0, "detail"]


def test_reference_and_account_are_compared_only_when_both_sides_know_them() -> None:
    """An answer without them, or a record without an account, is not a finding."""
    result = run(
        [payout("p"), payout("q", bank_account_id=NA)],
        [answer("p", 6), answer("q", 6, merchant_reference="m-q", to_bank_account_id="b-x")],
    )
    assert flags(result).empty


def test_an_undocumented_state_name_is_pending_and_flagged_with_the_raw_value() -> None:
    """state STATE_REFUNDED: pending (never settled, never malformed), unrecognised_state."""
    result = run([payout("p")], [answer("p", NA, state_raw="STATE_REFUNDED")])
    want = expected(transaction_id=["p"], outcome=["pending"])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "unrecognised_state")))
    assert "STATE_REFUNDED" in result.exceptions.loc[0, "detail"]


def test_an_undocumented_state_number_is_treated_like_a_name() -> None:
    """state 9: pending and flagged the same way, the number in the detail."""
    result = run([payout("p")], [answer("p", 9)])
    assert result.payouts.loc[0, "outcome"] == "pending"
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "unrecognised_state")))
    assert "an undocumented state (9)" in result.exceptions.loc[0, "detail"]


def test_the_providers_eta_makes_a_payout_without_one_delayed() -> None:
    """State 4, no eta in the record, the provider's eta two days ago: delayed, and the eta is
    kept in the result."""
    eta = AS_OF - 2 * DAY
    result = run([payout("p", eta=NA)], [answer("p", 4, eta=eta)])
    want = expected(transaction_id=["p"], outcome=["delayed"], eta=[eta])
    assert_frame_equal(pick(result.payouts, want), want)


def test_the_records_eta_wins_over_the_providers() -> None:
    """A record with an eta keeps it: tomorrow's eta, so state 4 is still pending."""
    result = run([payout("p")], [answer("p", 4, eta=AS_OF - 2 * DAY)])
    assert result.payouts.loc[0, "outcome"] == "pending"


def test_the_providers_created_counts_for_stale() -> None:
    """No created in the record, the provider says five days ago: pending and stale."""
    result = run([payout("p", created=NA)], [answer("p", 1, created=AS_OF - 5 * DAY)])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "stale")))


def test_a_session_id_recorded_as_a_payout_is_flagged_never_unknown() -> None:
    """status session: the finding names the session's transaction; the outcome is not unknown
    and the payout is not a fetch failure."""
    session = dict.fromkeys(answer("s"), NA) | {
        "transaction_id": "s",
        "status": "session",
        "related_transaction_id": "tx-real",
    }
    result = run([payout("s")], [session])
    assert result.payouts.loc[0, "outcome"] == "unchecked"
    assert_frame_equal(flags(result), flag_rows(("s", "payout", "session_id_recorded")))
    assert "its transaction is tx-real" in result.exceptions.loc[0, "detail"]
