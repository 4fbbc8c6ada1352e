"""A payout's outcome and flags at the run's entry: literal RunInputs in, a literal Decision out.

Outcomes from answers, pending and stale, failed after settled and settled after failed, an
answer about another id, flags carried while a payout is not fetched, and what the run counts.
"""

from __future__ import annotations

import json

from tests.unit.decide_support import (
    AS_OF,
    DAY,
    cases,
    decide_at,
    findings,
    inputs,
    next_night,
    ok,
    opened_cases,
    payout,
    row,
    statuses,
)


def test_a_settled_answer_about_a_new_payout_is_settled_answered_and_written() -> None:
    """Never reconciled, answered state 6: settled since this run, changed, answered, written."""
    decision = decide_at(inputs(payout("p1"), answered=[ok("p1")]))
    settled = row(decision, "p1")
    assert (settled["outcome"], settled["state"], settled["outcome_since"]) == ("settled", 6, AS_OF)
    assert (settled["outcome_changed"], settled["answered"], settled["write"]) == (True, True, True)
    assert settled["exceptions"] == ""
    assert statuses(decision) == {}


def test_the_outcomes_count_the_decided_payouts_and_those_the_run_did_not_read() -> None:
    """Five settled payouts outside the run's scope keep their outcome: six settled, one failed."""
    decision = decide_at(
        inputs(payout("p1"), payout("p2"), answered=[ok("p1"), ok("p2", 3)],
               other_outcomes={"settled": 5})
    )  # fmt: skip
    assert decision.outcomes == {"settled": 6, "failed": 1}


def test_a_not_found_answer_is_unknown_and_the_finding_unknown_transaction() -> None:
    """The provider does not know the id: outcome unknown, a new unknown_transaction finding."""
    decision = decide_at(
        inputs(payout("p1"), answered=[{"transaction_id": "p1", "status": "not_found"}])
    )
    assert row(decision, "p1")["outcome"] == "unknown"
    assert statuses(decision) == {("p1", "unknown_transaction"): "new"}
    assert decision.flags == {"unknown_transaction": 1}


def test_a_payout_imported_while_the_run_polled_waits_for_the_next_run() -> None:
    """Never reconciled and not among the ids the run set out to poll: it is not decided (no
    fetch_failed for a payout nobody asked about)."""
    decision = decide_at(inputs(payout("p1"), payout("late"), answered=[ok("p1")]))
    assert list(decision.payouts["transaction_id"]) == ["p1"]
    assert statuses(decision) == {}


def test_a_pending_payout_older_than_the_stale_age_is_stale() -> None:
    """State 1 and created five days ago (stale after three): pending, with a stale finding."""
    old = payout("p1", created=AS_OF - 5 * DAY, eta=AS_OF + DAY)
    young = payout("p2", created=AS_OF - DAY)
    decision = decide_at(inputs(old, young, answered=[ok("p1", 1), ok("p2", 1)]))
    assert (row(decision, "p1")["outcome"], row(decision, "p2")["outcome"]) == (
        "pending",
        "pending",
    )
    assert statuses(decision) == {("p1", "stale"): "new"}


def test_an_undocumented_state_name_is_pending_and_unrecognised_state() -> None:
    """An answer whose state is a name recon does not know: pending (asked again), flagged."""
    odd = ok("p1", state=None, state_raw="STATE_REFUNDED")
    decision = decide_at(inputs(payout("p1"), answered=[odd]))
    assert row(decision, "p1")["outcome"] == "pending"
    found = findings(decision)
    assert list(found) == [("p1", "unrecognised_state")]
    assert "STATE_REFUNDED" in found[("p1", "unrecognised_state")]["detail"]


def test_a_payout_settled_one_night_and_failed_on_a_later_check_is_a_reversal() -> None:
    """Settled on night 1; the watch's check on night 2 gets state 3: failed, with a new
    reversed_after_settlement naming when it was seen settled and the error code; night 3 gets
    the same answer and the finding persists in the same case."""
    night1 = decide_at(inputs(payout("p1"), answered=[ok("p1")], run_id=1), as_of=AS_OF - DAY)
    failed = ok("p1", 3, error_code="bank_rejected_transaction")
    night2 = decide_at(inputs(next_night(night1, "p1"), answered=[failed], run_id=2))
    reversed_ = row(night2, "p1")
    assert (reversed_["outcome"], reversed_["exceptions"]) == (
        "failed",
        "reversed_after_settlement",
    )
    finding = findings(night2)[("p1", "reversed_after_settlement")]
    assert finding["status"] == "new"
    assert finding["detail"] == (
        "seen settled on 2024-03-09 12:00 UTC, now failed, error code bank_rejected_transaction"
    )
    night3 = decide_at(
        inputs(next_night(night2, "p1"), answered=[failed], live=opened_cases(night2), run_id=3),
        as_of=AS_OF + DAY,
    )
    kept = findings(night3)[("p1", "reversed_after_settlement")]
    assert (kept["status"], kept["exception_id"]) == ("persisting", finding["exception_id"])


def test_a_failure_told_by_a_callback_then_answered_settled_is_a_late_settlement() -> None:
    """A callback said failed (state 3) before the run; its answer says settled: the merchant
    may have paid again, so late_settlement, whose detail names the callback."""
    decision = decide_at(
        inputs(payout("p1"), answered=[ok("p1")],
               failure_callbacks=[("p1", 3, AS_OF - 2 * DAY)])
    )  # fmt: skip
    assert row(decision, "p1")["outcome"] == "settled"
    finding = findings(decision)[("p1", "late_settlement")]
    assert finding["status"] == "new"
    assert "a callback said failed on 2024-03-08 12:00 UTC" in finding["detail"]


def test_a_settled_payout_nobody_said_failed_is_no_late_settlement() -> None:
    """Without a callback, a failed outcome or ever_failed, settling is no finding."""
    decision = decide_at(inputs(payout("p1"), answered=[ok("p1")]))
    assert statuses(decision) == {}


def test_an_answer_about_another_id_is_a_wrong_transaction_until_a_right_answer_comes() -> None:
    """Asked about A, the provider answers about B: A stays unchecked, not answered, with
    wrong_transaction naming B (not fetch_failed); the next night's right answer settles A and
    clears the finding."""
    wrong = {"transaction_id": "pa", "status": "wrong_id", "related_transaction_id": "pb"}
    night1 = decide_at(inputs(payout("pa"), payout("pb"), answered=[wrong, ok("pb")], run_id=1))
    a = row(night1, "pa")
    assert (a["outcome"], a["exceptions"], a["answered"]) == (
        "unchecked",
        "wrong_transaction",
        False,
    )
    assert row(night1, "pb")["outcome"] == "settled"
    finding = findings(night1)[("pa", "wrong_transaction")]
    assert finding["detail"] == "the provider answered about pb; kept outcome unchecked"
    assert statuses(night1) == {("pa", "wrong_transaction"): "new"}
    night2 = decide_at(
        inputs(next_night(night1, "pa"), answered=[ok("pa")], live=opened_cases(night1), run_id=2)
    )
    assert row(night2, "pa")["outcome"] == "settled"
    assert statuses(night2) == {("pa", "wrong_transaction"): "cleared"}


def test_a_carried_finding_keeps_its_money_at_stake_and_says_what_it_last_was() -> None:
    """An amount mismatch seen last night, not asked about tonight: its row keeps the money at
    stake, the members and the last facts' sentence, marked kept; the case is not changed."""
    kept = payout("p1", prev_outcome="pending", prev_state=1, prev_exceptions="amount_mismatch",
                  amount_minor=24563, currency="DKK")  # fmt: skip
    last = json.dumps(
        {"amount_minor": 24563, "currency": "DKK", "provider_amount_minor": 24000,
         "provider_currency": "DKK", "provider_amount_text": None, "state": 1,
         "returned_minor": None, "members": ["p1"], "at_stake_minor": 24563}
    )  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "amount_mismatch",
                  "facts": last, "last_facts": last})  # fmt: skip
    decision = decide_at(inputs(kept, live=live))
    finding = findings(decision)[("p1", "amount_mismatch")]
    assert finding["status"] == "persisting"
    assert (finding["facts"]["at_stake_minor"], finding["facts"]["members"]) == (24563, ["p1"])
    assert finding["detail"].startswith("kept from the previous run (not fetched this run): ")
    assert "240.00 DKK" in finding["detail"]
    assert decision.cases.changed == []  # the case stands as it was


def test_a_flag_that_needs_an_answer_is_carried_while_the_payout_is_not_fetched() -> None:
    """A settled late settlement is not asked about tonight: the flag is carried from the
    payout's cell, its case persists, and the outcome and state stay as they were."""
    kept = payout("p1", prev_outcome="settled", prev_state=6, ever_failed=True,
                  prev_outcome_since=AS_OF - 2 * DAY,
                  prev_exceptions="late_settlement")  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "late_settlement"})
    decision = decide_at(inputs(kept, live=live))
    carried = row(decision, "p1")
    assert (carried["outcome"], carried["state"], carried["exceptions"]) == (
        "settled", 6, "late_settlement"
    )  # fmt: skip
    assert (carried["answered"], carried["outcome_changed"]) == (False, False)
    assert statuses(decision) == {("p1", "late_settlement"): "persisting"}
