"""The run's decision at its entry: literal RunInputs in, a literal Decision out.

The same rules the multi-night tests drive through processes, checked here with plain data: a
finding leaves Needs action only by a person or by the facts, and only an answer spends evidence.
"""

from __future__ import annotations

from recon.decision import Decision
from tests.unit.decide_support import (
    AS_OF,
    DAY,
    cases,
    decide_at,
    inputs,
    known,
    ok,
    opened_cases,
    payout,
    row,
    statuses,
)


def test_a_fetch_that_fails_keeps_the_finding_open_and_spends_no_evidence() -> None:
    """A failed payout asked about (a callback hint) gets no answer: fetch_failed is new, and the
    payout is not marked answered, so the store keeps its hint for the next run."""
    failed = payout("p1", prev_outcome="failed", prev_state=3, ever_failed=True,
                    prev_outcome_since=AS_OF - 3 * DAY)  # fmt: skip
    decision = decide_at(inputs(failed, answered=[{"transaction_id": "p1", "status": "error"}]))
    assert statuses(decision) == {("p1", "fetch_failed"): "new"}
    assert (row(decision, "p1")["outcome"], row(decision, "p1")["answered"]) == ("failed", False)


def test_an_answer_clears_the_fetch_failure_and_finds_the_late_settlement() -> None:
    """The next run gets the answer (settled): the open fetch_failed case is cleared by it, and
    the late settlement is a new finding; the payout is answered (its evidence spent)."""
    failed = payout("p1", prev_outcome="failed", prev_state=3, ever_failed=True,
                    prev_outcome_since=AS_OF - 3 * DAY, prev_exceptions="fetch_failed")  # fmt: skip
    live = cases({"exception_id": "E2-1", "item_id": "p1", "flag": "fetch_failed",
                  "facts": "|state=3|returned="})  # fmt: skip
    decision = decide_at(inputs(failed, answered=[ok("p1")], live=live, run_id=3))
    assert statuses(decision) == {
        ("p1", "fetch_failed"): "cleared",
        ("p1", "late_settlement"): "new",
    }
    assert [(c["exception_id"], c["state"]) for c in decision.cases.changed] == [
        ("E2-1", "cleared")
    ]
    settled = row(decision, "p1")
    assert (settled["outcome"], settled["answered"], settled["exceptions"]) == (
        "settled", True, "late_settlement"
    )  # fmt: skip


def test_a_claim_no_run_asks_about_again_stays_in_needs_action() -> None:
    """A claim an earlier run already saw (quiet: no new notification, not confirmed) is not
    judged tonight: its open case persists, unchanged, and nothing is written for it."""
    live = cases({"exception_id": "E1-1", "item_kind": "return", "item_id": "forged",
                  "flag": "return_unverified"})  # fmt: skip
    decision = decide_at(
        inputs(returns=known([("forged", "p9")], started=AS_OF - DAY), live=live, run_id=4)
    )
    assert statuses(decision) == {("forged", "return_unverified"): "persisting"}
    assert decision.cases.changed == []
    assert decision.cases.opened == []


def test_a_resolved_finding_on_a_payout_not_fetched_tonight_stays_resolved_and_in_its_cell() -> (
    None
):
    """A person resolved an unknown id; tonight the payout is not asked about: the finding is
    carried, its case stays resolved (hidden, nothing written), and the payout's cell keeps it, so
    the next fetch finds the same case rather than opening a new one."""
    unknown = payout("p1", prev_outcome="unknown", prev_exceptions="unknown_transaction",
                     prev_outcome_since=AS_OF - 3 * DAY)  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "unknown_transaction",
                  "state": "resolved", "reported_run_id": 2})  # fmt: skip
    decision = decide_at(inputs(unknown, live=live, run_id=3))
    assert statuses(decision) == {}
    assert decision.cases.changed == []
    assert row(decision, "p1")["exceptions"] == "unknown_transaction"


def test_claims_nobody_acts_on_persist_each_night_until_a_person_resolves_one() -> None:
    """A claim the provider does not confirm and a claim on a payout we lack are new, then
    persisting night after night in the same cases; the one a person resolves is listed resolved
    on the next night, then no more, while the others persist."""
    settled = payout("p1", prev_outcome="settled", prev_state=6, prev_outcome_since=AS_OF - DAY)
    unknown = [{"transaction_id": r, "status": "not_found"} for r in ("forged", "orphan")]
    orphan = ("orphan", "return_without_payout")
    others = {("forged", "return_unverified"), ("orphan", "return_unverified")}

    first = decide_at(
        inputs(settled, answered=unknown, returns=known([("forged", "p1"), ("orphan", "nope")]),
               run_id=1)
    )  # fmt: skip
    assert statuses(first) == dict.fromkeys({orphan, *others}, "new")
    opened = {(c["item_id"], c["flag"]): c["exception_id"] for c in first.cases.opened}
    live = opened_cases(first)
    quiet = known([("forged", "p1"), ("orphan", "nope")], started=AS_OF - DAY)
    for run_id in (2, 3):
        night = decide_at(inputs(settled, returns=quiet, live=live, run_id=run_id))
        assert statuses(night) == dict.fromkeys({orphan, *others}, "persisting")
        assert night.cases.opened == []
        assert _case_ids(night) == opened

    mine = (live["item_id"] == orphan[0]) & (live["flag"] == orphan[1])
    resolved = live.assign(state=live["state"].mask(mine, "resolved"))
    fourth = decide_at(inputs(settled, returns=quiet, live=resolved, run_id=4))
    assert statuses(fourth) == {orphan: "resolved", **dict.fromkeys(others, "persisting")}
    ended = [(c["exception_id"], c.get("ended_run_id")) for c in fourth.cases.changed]
    assert ended == [(opened[orphan], 4)]  # the store keeps it no more among the live cases
    fifth = decide_at(inputs(settled, returns=quiet, live=resolved[~mine], run_id=5))
    assert statuses(fifth) == dict.fromkeys(others, "persisting")


def _case_ids(decision: Decision) -> dict[tuple[str, str], str]:
    exc = decision.exceptions
    return {
        (str(i), str(f)): str(e)
        for i, f, e in zip(exc["item_id"], exc["flag"], exc["exception_id"], strict=True)
    }
