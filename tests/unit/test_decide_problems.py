"""One problem, one finding, at ``decide``'s entry: each names every payout in it and the money at
stake, and people's actions on the findings it merges carry over."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tests.unit.decide_support import (
    AS_OF,
    DAY,
    cases,
    decide_at,
    findings,
    inputs,
    ok,
    payout,
    provider,
    statuses,
)

T0 = AS_OF - 2 * DAY


def _to(pid: str, minutes: int, **fields: Any) -> dict[str, Any]:
    """A 10.00 EUR payout to account ``acct``, created ``minutes`` after T0."""
    return payout(pid, bank_account_id="acct", customer_id=f"c-{pid}",
                  created=T0 + pd.Timedelta(minutes=minutes), **fields)  # fmt: skip


def _only(decision: Any) -> tuple[tuple[str, str], dict[str, Any]]:
    """The decision's one finding: (item, kind) and its report row."""
    found = findings(decision)
    assert len(found) == 1, sorted(found)
    return next(iter(found.items()))


def test_a_pair_is_one_finding_naming_both_with_one_payout_at_stake() -> None:
    """Two settled 10.00 EUR payouts to one account: one finding, 10.00 EUR at stake."""
    decision = decide_at(inputs(_to("a", 0), _to("b", 10), answered=[ok("a"), ok("b")]))
    (key, row) = _only(decision)
    assert key == ("a", "possible_duplicate")
    assert (row["facts"]["members"], row["facts"]["at_stake_minor"]) == (["a", "b"], 1000)
    assert row["facts"]["currency"] == "EUR"


def test_a_group_of_three_is_one_finding_with_two_payouts_at_stake() -> None:
    """Three, each pairing with the next: one group (they pair through each other)."""
    rows = [_to("a", 0), _to("b", 10), _to("c", 20)]
    decision = decide_at(inputs(*rows, answered=[ok("a"), ok("b"), ok("c")]))
    (key, row) = _only(decision)
    assert key == ("a", "possible_duplicate")
    assert (row["facts"]["members"], row["facts"]["at_stake_minor"]) == (["a", "b", "c"], 2000)
    assert row["detail"].startswith("3 payouts settled or in flight: a, b, c (")


def test_a_double_payment_takes_in_its_late_settlement_and_its_duplicate() -> None:
    """Reported failed by a callback, settled after all, and re-paid: one double payment naming
    both payouts, 10.00 EUR paid too much; no late settlement or duplicate of its own."""
    said = [("late", 3, T0 + pd.Timedelta(minutes=5))]
    rows = [_to("late", 0), _to("again", 60)]
    decision = decide_at(inputs(*rows, answered=[ok("late"), ok("again")], failure_callbacks=said))
    (key, row) = _only(decision)
    assert key == ("late", "double_payment")
    assert (row["facts"]["members"], row["facts"]["at_stake_minor"]) == (["again", "late"], 1000)
    assert row["detail"].startswith("10.00 EUR paid twice")


def test_a_lost_create_paid_three_times_is_one_double_payment() -> None:
    """The record holds a payout and the merchant's retry; the provider also made one the record
    lacks (its create's answer was lost); all three settled to one account: paid 3 times, two
    payouts too many, one finding on the provider's payout."""
    recorded = [
        {"transaction_id": i, "merchant_reference": r, "amount_minor": 1000, "currency": "EUR",
         "bank_account_id": "acct", "created": T0, "outcome": "settled"}
        for i, r in (("first", "ord-1"), ("retry", "ord-1-retry"))
    ]  # fmt: skip
    side = provider([{"transaction_id": "lost"}], recorded=recorded)
    answer = ok("lost", merchant_reference="ord-1", to_bank_account_id="acct", created=T0)
    decision = decide_at(
        inputs(
            _to("first", 0, merchant_reference="ord-1"),
            _to("retry", 30, merchant_reference="ord-1-retry"),
            answered=[ok("first"), ok("retry"), answer],
            provider=side,
        )
    )
    (key, row) = _only(decision)
    assert key == ("lost", "double_payment")
    assert row["item_kind"] == "provider"
    assert row["facts"]["members"] == ["first", "lost", "retry"]
    assert row["facts"]["at_stake_minor"] == 2000
    assert row["detail"].startswith("paid 3 times: the provider made payout lost of 10.00 EUR")


def test_pairs_acted_on_before_become_one_finding_keeping_peoples_actions() -> None:
    """A store from before groups holds one case per payout of a pair, each acknowledged by a
    person: the night files the group under the first, which keeps its owner and note; the other
    ends, merged into it, and both histories say so."""
    live = cases(
        {"exception_id": "E1-1", "item_id": "a", "flag": "possible_duplicate",
         "state": "acknowledged", "owner": "anna", "note": "asked the customer",
         "facts": '{"members": ["a", "b"]}'},
        {"exception_id": "E1-2", "item_id": "b", "flag": "possible_duplicate",
         "state": "acknowledged", "owner": "bob", "note": "same as E1-1",
         "facts": '{"members": ["a", "b"]}'},
    )  # fmt: skip
    decision = decide_at(
        inputs(_to("a", 0), _to("b", 10), answered=[ok("a"), ok("b")], live=live, run_id=3)
    )
    assert statuses(decision) == {("a", "possible_duplicate"): "acknowledged"}
    row = findings(decision)[("a", "possible_duplicate")]
    assert (row["exception_id"], row["owner"], row["note"]) == (
        "E1-1",
        "anna",
        "asked the customer",
    )
    ended = {c["exception_id"]: c for c in decision.cases.changed}
    assert (ended["E1-2"]["state"], ended["E1-2"]["ended_run_id"]) == ("cleared", 3)
    merges = {(a["exception_id"], a["action"]): a["note"] for a in decision.cases.actions}
    assert merges[("E1-2", "merged")] == "merged into E1-1"
    assert "took in E1-2" in merges[("E1-1", "merged")]
    assert "acknowledged by bob" in merges[("E1-1", "merged")]
    assert "same as E1-1" in merges[("E1-1", "merged")]


def test_a_new_double_payment_takes_the_owner_of_the_late_settlement_it_absorbs() -> None:
    """Anna acknowledged the late settlement; the next night the re-payment settles too: the
    double payment is new (paid twice needs action), carries her name and note, and the late
    settlement's case ends merged into it."""
    said = [("late", 3, T0 + pd.Timedelta(minutes=5))]
    live = cases(
        {"exception_id": "E1-1", "item_id": "late", "flag": "late_settlement",
         "state": "acknowledged", "owner": "anna", "note": "checking", "facts": '{"state": 6}'},
    )  # fmt: skip
    decision = decide_at(
        inputs(_to("late", 0, prev_outcome="settled", prev_state=6, ever_failed=True),
               _to("again", 60), answered=[ok("late"), ok("again")], failure_callbacks=said,
               live=live, run_id=2)
    )  # fmt: skip
    assert statuses(decision) == {("late", "double_payment"): "new"}
    row = findings(decision)[("late", "double_payment")]
    assert (row["owner"], row["note"]) == ("anna", "checking")
    ended = {c["exception_id"]: c for c in decision.cases.changed}
    assert ended["E1-1"]["state"] == "cleared"
