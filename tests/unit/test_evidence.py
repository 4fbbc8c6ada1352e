"""Evidence is spent only by an answer, and a finding is cleared only by facts the run learnt:
the rules at the core's entry, with literal data."""

from __future__ import annotations

import pandas as pd

from recon.reconcile.cases import facts_gone
from recon.reconcile.record import with_record
from recon.reconcile.watch import WatchParams
from tests.unit.classify_support import AS_OF, DAY, payout, run
from tests.unit.decide_support import cases, decide_at, inputs, known, statuses

WATCH = WatchParams((1, 2, 3), (1, 2, 3), watch_days=30, return_watch_days=30)


def test_a_due_check_without_an_answer_stays_due_when_the_outcome_moves_without_one() -> None:
    """A settled payout's return-watch check fell due; tonight its fetch failed, yet its outcome
    moved (a return confirmed for it): the check stays due instead of starting over."""
    due = AS_OF - DAY
    result = run([payout("p1", prev_outcome="settled", prev_state=6,
                         prev_outcome_since=AS_OF - 5 * DAY)])  # fmt: skip
    moved = result.payouts.assign(
        outcome_changed=True,
        outcome_since=AS_OF,
        prev_next_check_at=pd.Series([due]).astype("datetime64[us, UTC]").to_numpy(),
    )
    record = moved.copy()
    unanswered = with_record(moved, record, pd.Series([False]), as_of=AS_OF, watch=WATCH)
    assert unanswered["next_check_at"].iloc[0] == due
    answered = with_record(moved, record, pd.Series([True]), as_of=AS_OF, watch=WATCH)
    assert answered["next_check_at"].iloc[0] > AS_OF


def test_a_finding_on_an_item_asked_in_vain_is_not_gone() -> None:
    """Judged, not found, but asked tonight without an answer: nothing was learnt about it."""
    judged = frozenset({("return", "r1")})
    assert facts_gone("return", "r1", "return_unverified", judged=judged, answered=frozenset())
    assert not facts_gone(
        "return", "r1", "return_unverified", judged=judged, answered=frozenset(),
        unanswered=frozenset({"r1"}),
    )  # fmt: skip


def test_a_claim_whose_fetch_fails_stays_unverified_beside_the_fetch_failure() -> None:
    """An open return_unverified claim asked about again: the fetch fails. The claim's case is
    not cleared by that (no answer came); the fetch failure is a finding of its own."""
    live = cases({"exception_id": "E1-1", "item_kind": "return", "item_id": "claimed",
                  "flag": "return_unverified"})  # fmt: skip
    settled = payout("p9", prev_outcome="settled", prev_state=6, prev_outcome_since=AS_OF - DAY)
    decision = decide_at(
        inputs(
            settled,
            answered=[{"transaction_id": "claimed", "status": "error"}],
            poll=(),
            returns=known([("claimed", "p9")]),
            live=live,
        )
    )
    assert statuses(decision) == {
        ("claimed", "return_unverified"): "persisting",
        ("claimed", "fetch_failed"): "new",
    }


def test_an_export_finding_ends_only_when_the_export_was_read_about_its_payout() -> None:
    """A payout decided tonight (judged) whose settlement lies beyond the export rows the night
    reads keeps its missing_from_export, and a fee_mismatch the export found (its fee row named
    in the facts); read and not found again, they end by the facts."""
    judged = frozenset({("payout", "p1")})
    for flag, facts in (("missing_from_export", None), ("fee_mismatch", {"fee_row_id": "F1"})):
        assert not facts_gone(
            "payout", "p1", flag, judged=judged, answered=frozenset({"p1"}), facts=facts
        )
        assert facts_gone(
            "payout",
            "p1",
            flag,
            judged=judged,
            answered=frozenset(),
            exported=frozenset({"p1"}),
            facts=facts,
        )


def test_a_fee_mismatch_against_the_price_alone_ends_when_its_payout_is_judged() -> None:
    """No fee row in its facts: the price check judged it, the export need not have read it."""
    facts = {"fee_row_id": None, "expected_minor": 30}
    judged = frozenset({("payout", "p1")})
    assert facts_gone(
        "payout", "p1", "fee_mismatch", judged=judged, answered=frozenset(), facts=facts
    )
