"""Returned funds at the run's entry: literal RunInputs in, a literal Decision out.

Which answer speaks for a return (:func:`recon.reconcile.returns.best_evidence`, through
:func:`recon.reconcile.decide.decide`), a return confirmed or only claimed, and a confirmed return
the provider later answers smaller or not at all.
"""

from __future__ import annotations

from typing import Any

from recon.decision import Decision, KnownReturns
from tests.unit.decide_support import (
    AS_OF,
    DAY,
    cases,
    decide_at,
    findings,
    inputs,
    known,
    ok,
    payout,
    statuses,
)

CONFIRMED = AS_OF - 2 * DAY


def _returned(pid: str, amount: int = 1401) -> dict[str, Any]:
    """A payout of 14.01 EUR, returned in full, as an earlier run left it."""
    return payout(pid, amount_minor=amount, prev_outcome="returned", prev_state=6,
                  prev_returned_minor=amount, prev_outcome_since=CONFIRMED,
                  settled_since=CONFIRMED)  # fmt: skip


def _return_answer(rid: str, pid: str, minor: int, text: str) -> dict[str, Any]:
    return ok(rid, type=13, related_transaction_id=pid, amount_minor=minor, amount=text)


def _confirmed(
    *pairs: tuple[str, str], earlier: list[dict[str, Any]] | None = None
) -> KnownReturns:
    """Returns (return id, payout id) an earlier run confirmed at 14.01 EUR on CONFIRMED."""
    return known(
        earlier=earlier
        if earlier is not None
        else [
            {
                "transaction_id": r,
                "type": 13,
                "related_transaction_id": p,
                "original_transaction_id": p,
                "amount_minor": 1401,
                "currency": "EUR",
            }
            for r, p in pairs
        ],
        confirmations=dict(pairs),
        seen13={r for r, _ in pairs},
        watched=[
            {
                "return_id": r,
                "confirmed_at": CONFIRMED,
                "confirmed_amount_minor": 1401,
                "confirmed_currency": "EUR",
                "last_asked_at": CONFIRMED,
            }
            for r, _ in pairs
        ],
    )


def _returned_amounts(decision: Decision) -> dict[str, tuple[str, int]]:
    pay = decision.payouts
    return {
        str(t): (str(o), int(m))
        for t, o, m in zip(
            pay["transaction_id"], pay["outcome"], pay["returned_minor"], strict=True
        )
    }


def test_a_return_the_provider_confirms_makes_the_settled_payout_returned() -> None:
    """The payout's answer names r1, and r1's own answer is type 13 for it: the payout is
    returned by r1's amount, and r1 is confirmed and matched."""
    settled = payout("p1", prev_outcome="settled", prev_state=6, prev_outcome_since=CONFIRMED)
    decision = decide_at(
        inputs(settled, answered=[ok("p1", related_transaction_id="r1"),
                                  _return_answer("r1", "p1", 400, "4.00")])
    )  # fmt: skip
    assert _returned_amounts(decision) == {"p1": ("returned", 400)}
    ret = decision.returns.set_index("return_id").loc["r1"]
    assert (ret["original_id"], ret["confirmed"], ret["matched"]) == ("p1", True, True)
    assert statuses(decision) == {}


def test_a_claim_no_answer_confirms_is_unverified_and_leaves_the_outcome() -> None:
    """A notification says r9 returned p1's money; the provider does not know r9: p1 stays
    settled with nothing returned, and the claim is a new return_unverified."""
    settled = payout("p1", prev_outcome="settled", prev_state=6, prev_outcome_since=CONFIRMED)
    decision = decide_at(
        inputs(settled, answered=[{"transaction_id": "r9", "status": "not_found"}],
               returns=known([("r9", "p1")]))
    )  # fmt: skip
    assert _returned_amounts(decision) == {"p1": ("settled", 0)}
    assert statuses(decision) == {("r9", "return_unverified"): "new"}
    assert "does not know" in findings(decision)[("r9", "return_unverified")]["detail"]


def test_a_confirmed_return_whose_fetch_fails_tonight_keeps_the_earlier_answer() -> None:
    """The earlier run's ok answer stays the evidence when tonight's fetch fails: still
    confirmed, the payout still returned, no finding."""
    decision = decide_at(
        inputs(_returned("p1"), answered=[{"transaction_id": "r1", "status": "error"}],
               returns=_confirmed(("r1", "p1")))
    )  # fmt: skip
    assert _returned_amounts(decision) == {"p1": ("returned", 1401)}
    assert bool(decision.returns.set_index("return_id").loc["r1", "confirmed"])
    assert statuses(decision) == {}


def test_a_confirmed_return_answered_smaller_or_gone_on_its_watch_day_is_return_changed() -> None:
    """Two 14.01 returns confirmed two days ago; asked again, one answers 10.00 and the other
    404: both are a new return_changed naming the first confirmation and what the provider says
    now, and the payouts' returned amounts follow the provider (the gone one is settled)."""
    decision = decide_at(
        inputs(
            _returned("ps"),
            _returned("pg"),
            answered=[_return_answer("rs", "ps", 1000, "10.00"),
                      {"transaction_id": "rg", "status": "not_found"}],
            returns=_confirmed(("rs", "ps"), ("rg", "pg")),
        )
    )  # fmt: skip
    found = findings(decision)
    assert {k: v["status"] for k, v in found.items()} == {
        ("rs", "return_changed"): "new",
        ("rg", "return_changed"): "new",
    }
    assert (
        found[("rs", "return_changed")]["detail"]
        == "confirmed 14.01 EUR on 2024-03-08, now 10.00 EUR"
    )
    assert found[("rg", "return_changed")]["detail"] == (
        "confirmed 14.01 EUR on 2024-03-08, now 404 not found"
    )
    assert _returned_amounts(decision) == {"pg": ("settled", 0), "ps": ("returned", 1000)}


def test_a_resolved_return_change_stands_until_the_provider_changes_it_again() -> None:
    """A person resolved the 10.00 answer; a night that does not ask keeps the resolution (and
    the 404 of the other return still counts); the next answer, 8.00, reopens the same case."""
    asked = decide_at(
        inputs(_returned("ps"), answered=[_return_answer("rs", "ps", 1000, "10.00")],
               returns=_confirmed(("rs", "ps")), run_id=3)
    )  # fmt: skip
    [opened] = asked.cases.opened
    resolved = cases(
        {k: opened[k] for k in ("exception_id", "item_kind", "item_id", "flag", "facts", "detail")}
        | {"state": "resolved", "owner": "anna", "note": "bank kept 4.01"}
    )
    answered_10 = [
        {
            "transaction_id": "rs",
            "type": 13,
            "related_transaction_id": "ps",
            "original_transaction_id": "ps",
            "amount_minor": 1000,
            "currency": "EUR",
        }
    ]
    after = _confirmed(("rs", "ps"), earlier=answered_10)
    was_returned = _returned("ps") | {"prev_returned_minor": 1000}
    quiet = decide_at(inputs(was_returned, returns=after, live=resolved, run_id=4))
    assert statuses(quiet) == {("rs", "return_changed"): "resolved"}
    assert _returned_amounts(quiet) == {"ps": ("returned", 1000)}
    again = decide_at(
        inputs(was_returned, answered=[_return_answer("rs", "ps", 800, "8.00")], returns=after,
               live=resolved, run_id=5)
    )  # fmt: skip
    reopened = findings(again)[("rs", "return_changed")]
    assert (reopened["status"], reopened["exception_id"]) == ("new", opened["exception_id"])
    assert reopened["detail"].endswith(", now 8.00 EUR")
    assert _returned_amounts(again) == {"ps": ("returned", 800)}
    assert [a["action"] for a in again.cases.actions] == ["facts_changed"]


def test_a_return_gone_earlier_stays_gone_on_a_night_that_does_not_ask() -> None:
    """The latest earlier answer about a confirmed return is a 404: on a night without an ask
    the payout stays settled with nothing returned, and the finding persists."""
    gone = [{"transaction_id": "rg", "status": "not_found"}]
    live = cases({"exception_id": "E3-1", "item_kind": "return", "item_id": "rg",
                  "flag": "return_changed"})  # fmt: skip
    settled = _returned("pg") | {"prev_outcome": "settled", "prev_returned_minor": 0}
    decision = decide_at(
        inputs(settled, returns=_confirmed(("rg", "pg"), earlier=gone), live=live, run_id=4)
    )
    assert statuses(decision) == {("rg", "return_changed"): "persisting"}
    assert _returned_amounts(decision) == {"pg": ("settled", 0)}
