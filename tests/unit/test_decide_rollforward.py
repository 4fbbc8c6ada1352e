"""The roll-forward at the run's entry: the lines are part of the decision, measured from the rows
as read plus the rows the decision writes; a line that does not close is a finding whose case
opens after the night's."""

from __future__ import annotations

import pandas as pd

from recon.decision import Decision
from tests.unit.decide_support import (
    cases,
    decide_at,
    findings,
    inputs,
    ok,
    payout,
    rollforward,
    statuses,
)

PENDING = {"prev_outcome": "pending", "prev_state": 1}


def _lines(decision: Decision) -> dict[tuple[str, str, str], tuple[int, int | None]]:
    rolled = decision.rollforward
    assert rolled is not None
    return {
        (str(c), str(o), str(ln)): (int(n), None if pd.isna(a) else int(a))
        for c, o, ln, n, a in rolled.lines.astype(object).itertuples(index=False)
    }


def test_a_payout_that_settles_moves_out_of_pending_into_settled_and_every_line_closes() -> None:
    """Run 1 left one pending payout; it settles tonight."""
    decision = decide_at(
        inputs(
            payout("p1", **PENDING),
            answered=[ok("p1")],
            rolled=rollforward([("EUR", "pending", 1, 1000), ("", "findings", 0, None)]),
        )
    )
    lines = _lines(decision)
    assert lines[("EUR", "pending", "previous")] == (1, 1000)
    assert lines[("EUR", "pending", "moved_out")] == (1, 1000)
    assert lines[("EUR", "settled", "moved_in")] == (1, 1000)
    assert lines[("EUR", "settled", "now")] == (1, 1000)
    assert lines[("EUR", "pending", "now")] == (0, 0)
    assert decision.rollforward is not None
    assert decision.rollforward.breaks == ()
    assert "rollforward_break" not in decision.flags


def test_a_payout_row_removed_behind_recons_back_opens_breaks_numbered_after_the_nights() -> None:
    """Run 1 left two pending payouts; the store holds one now. The night's own finding (p1
    unknown to the provider) is E2-1; the breaks follow in the order found: the outcome's line,
    then the currency's count over every outcome."""
    decision = decide_at(
        inputs(
            payout("p1", **PENDING),
            answered=[{"transaction_id": "p1", "status": "not_found"}],
            rolled=rollforward(
                [("EUR", "pending", 2, 2000), ("", "findings", 0, None)],
                stored=[("EUR", "pending", 1, 1000)],
            ),
        )
    )
    found = findings(decision)
    brk = found[("EUR/pending/now", "rollforward_break")]
    assert (brk["exception_id"], brk["status"]) == ("E2-2", "new")
    assert brk["detail"] == (
        "roll-forward break: EUR pending: line now differs from what the other lines add up to "
        "by -1, -10.00 EUR"
    )
    assert found[("p1", "unknown_transaction")]["exception_id"] == "E2-1"
    assert found[("EUR/all outcomes/now", "rollforward_break")]["exception_id"] == "E2-3"
    assert decision.flags["rollforward_break"] == 2
    assert _lines(decision)[("", "findings", "opened")] == (3, None)
    assert _lines(decision)[("", "findings", "now")] == (3, None)


def test_a_record_edited_behind_recons_back_breaks_the_moves_when_the_payout_moves() -> None:
    """p1's latest history row kept 10.00; the payout says 10.01 now (no import): it moves out of
    pending as it was and into settled as it is."""
    decision = decide_at(
        inputs(
            payout("p1", amount_minor=1001, **PENDING),
            answered=[ok("p1", amount_minor=1001, amount="10.01")],
            rolled=rollforward(
                [("EUR", "pending", 1, 1000), ("", "findings", 0, None)],
                stored=[("EUR", "pending", 1, 1001)],
                records=[("p1", "EUR", 1000)],
            ),
        )
    )
    assert decision.rollforward is not None
    items = [b.item_id for b in decision.rollforward.breaks]
    assert "EUR/all outcomes/moved_in" in items
    assert statuses(decision)[("EUR/all outcomes/moved_in", "rollforward_break")] == "new"


def test_a_break_whose_case_stands_is_listed_as_it_stands_and_not_opened_again() -> None:
    """Run 1 left two live cases; one was deleted behind recon's back: the findings' line breaks
    again, and its open case is reported as it stands."""
    live = cases(
        {"exception_id": "E1-1", "item_kind": "rollforward", "item_id": "/findings/now",
         "flag": "rollforward_break", "detail": "as found on run 1"}
    )  # fmt: skip
    decision = decide_at(
        inputs(
            payout("p1", **PENDING),
            answered=[ok("p1", state=1)],
            live=live,
            rolled=rollforward([("EUR", "pending", 1, 1000), ("", "findings", 2, None)]),
        )
    )
    row = findings(decision)[("/findings/now", "rollforward_break")]
    assert (row["exception_id"], row["status"], row["detail"]) == (
        "E1-1",
        "persisting",
        "as found on run 1",
    )
    assert decision.cases.opened == []
    assert decision.flags["rollforward_break"] == 1


def test_a_break_found_again_after_a_person_resolved_it_stays_resolved() -> None:
    """The resolution is listed once (not yet reported), and no second case opens."""
    live = cases(
        {"exception_id": "E1-1", "item_kind": "rollforward", "item_id": "/findings/now",
         "flag": "rollforward_break", "state": "resolved", "owner": "anna"}
    )  # fmt: skip
    decision = decide_at(
        inputs(
            payout("p1", **PENDING),
            answered=[ok("p1", state=1)],
            live=live,
            rolled=rollforward([("EUR", "pending", 1, 1000), ("", "findings", 1, None)]),
        )
    )
    assert statuses(decision)[("/findings/now", "rollforward_break")] == "resolved"
    assert decision.cases.opened == []
    assert decision.rollforward is not None
    assert decision.rollforward.opened == 0
