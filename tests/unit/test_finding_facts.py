"""A finding's facts as values: what makes two sightings the same finding, at the classifier's
entry (literal payouts and answers in) and at the comparison (:func:`facts_differ`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon.reconcile.cases import basis
from recon.reconcile.finding import facts_differ
from recon.reconcile.kinds import BY_NAME, KINDS
from tests.unit.classify_support import AS_OF, DAY, answer, fetch_error, notice, payout, run


def _finding(result: Any, item: str, flag: str) -> dict[str, Any]:
    exc = result.exceptions
    rows = exc[(exc["item_id"] == item) & (exc["flag"] == flag)]
    assert len(rows) == 1, f"{flag} on {item}: {len(rows)} rows"
    return dict(rows.iloc[0])


def test_a_stale_payouts_facts_are_its_outcome_and_state_not_its_age() -> None:
    """Another night's age is no new fact: only the outcome, state and returned amount count."""
    old = payout("p", created=AS_OF - 5 * DAY)
    day5 = _finding(run([old], [answer("p", 1)]), "p", "stale")
    day6 = _finding(run([old], [answer("p", 1)], as_of=AS_OF + DAY), "p", "stale")
    assert day5["detail"] != day6["detail"]
    stale = BY_NAME["stale"]
    assert basis(stale, day5["facts"]) == basis(stale, day6["facts"])
    assert basis(stale, day5["facts"]) == {"outcome": "pending", "state": 1, "returned_minor": 0}


def test_a_fetch_failures_error_is_no_fact_but_the_payouts_state_is() -> None:
    """Refused or failed is the night's error, not the finding's facts."""
    found = _finding(run([payout("p", prev_outcome="pending", prev_state=1)], [fetch_error("p")]),
                     "p", "fetch_failed")  # fmt: skip
    assert basis(BY_NAME["fetch_failed"], found["facts"]) == {"state": 1, "returned_minor": 0}


def test_a_payout_finding_counts_its_facts_only_when_the_payout_was_answered() -> None:
    """Not answered tonight (a reversal kept on the stored outcome): its facts are not compared."""
    settled = {"prev_outcome": "failed", "prev_state": 3, "settled_since": AS_OF - 3 * DAY}
    unasked = _finding(run([payout("p", polled=False, **settled)]), "p",
                       "reversed_after_settlement")  # fmt: skip
    assert unasked["known"] is False or not unasked["known"]
    answered = _finding(run([payout("p", **settled)], [answer("p", 3)]), "p",
                        "reversed_after_settlement")  # fmt: skip
    assert answered["known"]


def test_a_possible_duplicates_facts_count_whether_or_not_it_was_answered() -> None:
    """Its members come from the record and this run's outcomes, not from an answer about it:
    an old settled payout nobody asked about tonight still learns of a new member."""
    pair = {"merchant_reference": "same", "prev_outcome": "settled", "prev_state": 6,
            "polled": False}  # fmt: skip
    result = run([payout("a", **pair), payout("b", **pair)])
    found = _finding(result, "a", "possible_duplicate")
    assert found["known"]
    assert basis(BY_NAME["possible_duplicate"], found["facts"]) == {"members": ["a", "b"]}


def test_a_returns_facts_count_whether_or_not_anything_was_answered() -> None:
    """A finding on a return stands on what is known of the return: always compared."""
    found = _finding(run([], [], [notice("r1", "ghost")]), "r1", "return_without_payout")
    assert found["known"]
    assert basis(BY_NAME["return_without_payout"], found["facts"]) == {
        "claims": None,
        "original_id": "ghost",
    }


def test_a_kept_finding_has_no_facts_and_says_so() -> None:
    """A finding that needs an answer, carried from the previous run without one."""
    kept = payout("p", prev_outcome="pending", prev_state=1, prev_exceptions="amount_mismatch",
                  polled=False)  # fmt: skip
    found = _finding(run([kept]), "p", "amount_mismatch")
    assert found["facts"] is None or pd.isna(found["facts"])
    assert found["detail"] == "kept from the previous run (not fetched this run)"


def test_facts_differ_by_the_kinds_facts_and_only_by_them() -> None:
    """``same_when`` facts change the finding; others (its age) do not; a fact missing on one
    side (stored by an older version) is not compared; ``grows`` lists reopen only on a new
    member."""
    stale, dup = BY_NAME["stale"], BY_NAME["possible_duplicate"]
    assert facts_differ(stale, {"outcome": "pending"}, {"outcome": "delayed"})
    assert not facts_differ(stale, {"outcome": "pending", "age_days": 4.0},
                            {"outcome": "pending", "age_days": 5.0})  # fmt: skip
    assert not facts_differ(stale, {"state": 1}, {"outcome": "pending", "state": 1})
    assert facts_differ(dup, {"members": ["b"]}, {"members": ["b", "c"]})
    assert not facts_differ(dup, {"members": ["b", "c"]}, {"members": ["c"]})


def test_every_kind_compares_only_facts_its_rule_can_give() -> None:
    """A kind's ``same_when`` and ``grows`` are names, and each kind is named once."""
    assert len({k.name for k in KINDS}) == len(KINDS)
    for kind in KINDS:
        assert set(kind.grows).isdisjoint(kind.same_when), kind.name
