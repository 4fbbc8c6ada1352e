"""Findings and their cases at the run's entry: literal RunInputs in, a literal Decision out.

Cases opened, persisting and cleared; a snooze that ends; notifications recon cannot read; records
changed after reconciliation; ids only the provider knows; and a possible duplicate's life.
"""

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
    next_night,
    ok,
    opened_cases,
    payout,
    provider,
    row,
    statuses,
)


def test_each_new_finding_opens_a_case_named_after_the_run_in_order() -> None:
    """Two findings in run 7: cases E7-1 and E7-2, open, with the facts they were found with."""
    decision = decide_at(
        inputs(payout("p1"), payout("p2"), answered=[{"transaction_id": t, "status": "not_found"}
                                                     for t in ("p1", "p2")], run_id=7)
    )  # fmt: skip
    opened = [
        (c["exception_id"], c["item_id"], c["flag"], c["state"]) for c in decision.cases.opened
    ]
    assert opened == [
        ("E7-1", "p1", "unknown_transaction", "open"),
        ("E7-2", "p2", "unknown_transaction", "open"),
    ]
    assert all(c["facts"] for c in decision.cases.opened)


def test_a_dry_run_opens_its_cases_without_an_id() -> None:
    """No run id: the findings are new, and their cases are left unnamed (nothing is written)."""
    decision = decide_at(
        inputs(payout("p1"), answered=[{"transaction_id": "p1", "status": "not_found"}],
               run_id=None)
    )  # fmt: skip
    assert [c["exception_id"] for c in decision.cases.opened] == [""]
    assert statuses(decision) == {("p1", "unknown_transaction"): "new"}


def test_a_finding_whose_facts_went_away_is_cleared_once() -> None:
    """An open stale case on a pending payout now answered settled: cleared, its case closed."""
    pending = payout("p1", prev_outcome="pending", prev_state=1, prev_exceptions="stale",
                     created=AS_OF - 5 * DAY, prev_outcome_since=AS_OF - 5 * DAY)  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "stale"})
    decision = decide_at(inputs(pending, answered=[ok("p1")]))
    assert statuses(decision) == {}  # no case: nothing to clear
    cleared = decide_at(inputs(pending, answered=[ok("p1")], live=live))
    assert statuses(cleared) == {("p1", "stale"): "cleared"}
    assert [(c["exception_id"], c["state"]) for c in cleared.cases.changed] == [("E1-1", "cleared")]
    assert row(cleared, "p1")["exceptions"] == ""


def test_a_finding_the_run_did_not_judge_stays_open() -> None:
    """An open case on a payout outside tonight's scope is neither found nor gone: persisting."""
    live = cases({"exception_id": "E1-1", "item_id": "elsewhere", "flag": "amount_mismatch"})
    decision = decide_at(inputs(live=live))
    assert statuses(decision) == {("elsewhere", "amount_mismatch"): "persisting"}
    assert decision.cases.changed == []


def test_a_snoozed_finding_returns_to_needs_action_when_its_date_comes() -> None:
    """Snoozed until yesterday and still found: back to open (persisting), by recon's action."""
    stale = payout("p1", prev_outcome="pending", prev_state=1, created=AS_OF - 5 * DAY,
                   prev_exceptions="stale", prev_outcome_since=AS_OF - 5 * DAY)  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "stale", "state": "snoozed",
                  "owner": "anna", "until": AS_OF - DAY,
                  "facts": "pending|state=1|returned=0"})  # fmt: skip
    decision = decide_at(inputs(stale, answered=[ok("p1", 1)], live=live))
    assert statuses(decision) == {("p1", "stale"): "persisting"}
    assert [(a["action"], a["by"]) for a in decision.cases.actions] == [("snooze_ended", "recon")]
    [update] = decision.cases.changed
    assert (update["state"], update["owner"]) == ("open", None)


def test_a_notification_recon_cannot_read_is_a_finding_that_stays_until_closed() -> None:
    """An unreadable claim received since the previous run is a new finding naming what recon
    kept of it; on the next night (no longer listed as received since) its case persists."""
    unreadable = [(41, "unparsed", "not JSON", '{"claim": "money"')]
    decision = decide_at(inputs(unreadable=unreadable))
    finding = findings(decision)[("41", "notification_unreadable")]
    assert (finding["item_kind"], finding["status"]) == ("notification", "new")
    assert finding["detail"] == 'unparsed: not JSON; the body starts {"claim": "money"'
    live = cases({"exception_id": "E2-1", "item_kind": "notification", "item_id": "41",
                  "flag": "notification_unreadable"})  # fmt: skip
    later = decide_at(inputs(live=live, run_id=3))
    assert statuses(later) == {("41", "notification_unreadable"): "persisting"}


def test_a_callback_for_an_account_not_configured_is_a_finding_naming_the_account() -> None:
    """A callback for an account not configured is a finding naming the account."""
    unreadable = [(42, "parsed", "", '{"transaction_id": "tx-1"', "brand_c")]
    finding = findings(decide_at(inputs(unreadable=unreadable)))[("42", "notification_unreadable")]
    assert finding["facts"]["account"] == "brand_c"
    assert finding["detail"] == (
        "a callback for the account brand_c, which is not configured (parsed); "
        'the body starts {"transaction_id": "tx-1"'
    )


def _changed_amount(answered: bool = False) -> dict[str, Any]:
    return {"id": 5, "transaction_id": "p1", "field": "amount", "before": "10.00 EUR",
            "after": "12.00 EUR", "imported_at": AS_OF - DAY, "answered": answered}  # fmt: skip


def test_a_record_changed_after_reconciliation_is_a_finding_and_kept_until_answered() -> None:
    """The import changed a settled payout's amount: record_changed names both values; without
    an answer tonight the change stays asked about and the record seen is written with it."""
    settled = payout("p1", amount_minor=1200, prev_outcome="settled", prev_state=6,
                     prev_outcome_since=AS_OF - 3 * DAY)  # fmt: skip
    unanswered = decide_at(inputs(settled, record_changes=[_changed_amount()]))
    assert statuses(unanswered) == {("p1", "record_changed"): "new"}
    assert (
        "amount: 10.00 EUR -> 12.00 EUR" in findings(unanswered)[("p1", "record_changed")]["detail"]
    )
    assert unanswered.changes_answered == ()
    assert (row(unanswered, "p1")["record_changed"], row(unanswered, "p1")["write"]) == (True, True)
    answered = decide_at(
        inputs(settled, answered=[ok("p1", amount_minor=1200, amount="12.00")],
               record_changes=[_changed_amount()])
    )  # fmt: skip
    assert answered.changes_answered == (5,)
    assert statuses(answered) == {("p1", "record_changed"): "new"}


def test_an_answer_is_compared_with_the_changed_record() -> None:
    """The import changed p1 to 12.00 EUR and the provider still pays 10.00 EUR: record_changed
    and amount_mismatch are both new; p2, unchanged and answered the same, has no finding."""
    settled = {"prev_outcome": "settled", "prev_state": 6, "prev_outcome_since": AS_OF - 3 * DAY}
    decision = decide_at(
        inputs(payout("p1", amount_minor=1200, **settled), payout("p2", **settled),
               answered=[ok("p1"), ok("p2")], record_changes=[_changed_amount()])
    )  # fmt: skip
    assert statuses(decision) == {
        ("p1", "record_changed"): "new",
        ("p1", "amount_mismatch"): "new",
    }


def test_a_payout_the_provider_made_and_the_record_lacks_is_an_unrecorded_payout() -> None:
    """A callback named gh1; the provider answers it is a payout the record lacks: a new
    unrecorded_payout on the provider's side; a forged id answered 404 is counted, no finding."""
    side = provider([{"transaction_id": "gh1"}, {"transaction_id": "forged"}])
    decision = decide_at(
        inputs(answered=[ok("gh1", merchant_reference="R1", to_bank_account_id="acc"),
                         {"transaction_id": "forged", "status": "not_found"}],
               provider=side)
    )  # fmt: skip
    assert statuses(decision) == {("gh1", "unrecorded_payout"): "new"}
    assert findings(decision)[("gh1", "unrecorded_payout")]["item_kind"] == "provider"
    assert decision.provider is not None
    items = decision.provider.items.set_index("transaction_id")
    assert items["answered_at"].notna().to_dict() == {"gh1": True, "forged": True}


def _dup(pid: str, minutes: int, **fields: Any) -> dict[str, Any]:
    """A 10.00 EUR payout to account ``acct``, created ``minutes`` after two days ago."""
    return payout(pid, bank_account_id="acct", customer_id=f"c-{pid}",
                  created=AS_OF - 2 * DAY + pd.Timedelta(minutes=minutes), **fields)  # fmt: skip


def _members(decision: Any) -> dict[str, tuple[str, str, str]]:
    """Per group finding: (status, exception id, the members it names)."""
    return {
        k[0]: (v["status"], v["exception_id"], ",".join(v["facts"]["members"]))
        for k, v in findings(decision).items()
        if k[1] == "possible_duplicate"
    }


def test_a_possible_duplicate_is_one_finding_stays_resolved_and_reopens_when_a_member_joins() -> (
    None
):
    """Two settled payouts to one account, same amount, ten minutes apart: one finding on the
    first, naming both. Resolved as intended, it stays resolved (listed once, then hidden) while
    nobody asks about them; a third joining reopens the same case, naming all three."""
    night1 = decide_at(inputs(_dup("a", 0), _dup("b", 10), answered=[ok("a"), ok("b")], run_id=1))
    assert _members(night1) == {"a": ("new", "E1-1", "a,b")}
    resolved = cases(
        *(
            {k: c[k] for k in ("exception_id", "item_kind", "item_id", "flag", "facts", "detail")}
            | {"state": "resolved", "owner": "anna", "note": "intended: two instalments"}
            for c in night1.cases.opened
        )
    )
    kept = [next_night(night1, "a"), next_night(night1, "b")]
    night2 = decide_at(inputs(*kept, live=resolved, run_id=2))
    assert set(statuses(night2).values()) == {"resolved"}
    listed_once = resolved.assign(reported_run_id=pd.array([2], dtype="Int64"))
    night3 = decide_at(inputs(*kept, live=listed_once, run_id=3))
    assert statuses(night3) == {}
    night4 = decide_at(inputs(*kept, _dup("c", 20), answered=[ok("c")], live=listed_once, run_id=4))
    assert _members(night4) == {"a": ("new", "E1-1", "a,b,c")}


def test_a_create_without_an_id_is_creation_unknown_each_night_until_its_payout_is_answered() -> (
    None
):
    """A create recorded without an id (R-2, 50.00 EUR) is creation_unknown, new then persisting;
    once a callback names the payout it made and the provider answers it with that reference and
    amount, the finding is cleared and that payout is an unrecorded_payout."""
    attempt = {"id": 1, "merchant_reference": "R-2", "amount_minor": 5000, "currency": "EUR"}
    first = decide_at(inputs(provider=provider(attempts=[attempt]), run_id=1))
    assert statuses(first) == {("1", "creation_unknown"): "new"}
    live = opened_cases(first)
    second = decide_at(inputs(provider=provider(attempts=[attempt]), live=live, run_id=2))
    assert statuses(second) == {("1", "creation_unknown"): "persisting"}
    assert second.cases.opened == []

    made = ok("made", amount_minor=5000, amount="50.00", merchant_reference="R-2")
    named = provider([{"transaction_id": "made"}], attempts=[attempt])
    third = decide_at(inputs(answered=[made], provider=named, live=live, run_id=3))
    assert statuses(third) == {
        ("1", "creation_unknown"): "cleared",
        ("made", "unrecorded_payout"): "new",
    }
