"""What a change of a finding is measured against (recon.reconcile.cases.finding_facts), called
directly: literal findings and payouts in, the facts out."""

from __future__ import annotations

import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.reconcile.cases import finding_facts

PAYOUTS = pd.DataFrame(
    {
        "transaction_id": pd.Series(["p1", "p2"], dtype="string"),
        "state": pd.array([1, 6], dtype="Int64"),
        "returned_minor": pd.array([0, 400], dtype="Int64"),
        "outcome": pd.Series(["pending", "returned"], dtype="string"),
    }
)


def _facts(rows: list[tuple[str, str, str]], answered: list[bool]) -> list[str | None]:
    found = conform(
        pd.DataFrame(rows, columns=["item_id", "flag", "detail"]).assign(item_kind="payout"),
        fr.EXCEPTIONS,
        name="found",
    )
    facts = finding_facts(found, PAYOUTS, pd.Series(answered))
    return list(facts.astype(object).where(facts.notna(), None))


def test_a_stale_payouts_facts_are_its_outcome_and_state_not_its_age() -> None:
    """Another night's age in the detail is no new fact: only the outcome and state count."""
    day4 = _facts([("p1", "stale", "open for 4 days")], [True, True])
    day5 = _facts([("p1", "stale", "open for 5 days")], [True, True])
    assert day4 == day5 == ["pending|state=1|returned=0"]


def test_a_fetch_failures_error_text_is_no_fact_but_the_payouts_state_is() -> None:
    """fetch_failed's detail (the night's error) is left out; state and returned amount stay."""
    assert _facts([("p2", "fetch_failed", "HTTP 503")], [True, True]) == ["|state=6|returned=400"]


def test_a_payout_finding_without_an_answer_tonight_has_no_new_facts() -> None:
    """Not answered: the facts are unknown (<NA>), so a person's case is not reopened by them."""
    assert _facts([("p2", "amount_mismatch", "local 1, provider 2")], [True, False]) == [None]
    assert _facts([("p2", "amount_mismatch", "local 1, provider 2")], [False, True]) == [
        "local 1, provider 2|state=6|returned=400"
    ]
