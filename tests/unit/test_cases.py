"""A finding's life across runs: the pure rules of recon/reconcile/cases.py,
literal findings and cases in, a literal CaseDecision out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest

from recon import frames as fr
from recon.conform import conform
from recon.constants import CaseAction
from recon.decision import ActionRequest, CaseDecision, CaseStanding
from recon.reconcile.cases import follow_cases, plan_actions
from recon.run_frames import Cases

AS_OF = datetime(2026, 11, 20, 5, tzinfo=UTC)


def _facts(marker: str | list[str]) -> dict[str, Any]:
    """A marker as facts: a payout's state, or a group's members."""
    return {"members": marker} if isinstance(marker, list) else {"state": marker}


def _found(*rows: tuple[str, str, str | list[str] | None]) -> pd.DataFrame:
    """(item_id, flag, facts marker) findings on payouts; no marker: not answered tonight."""
    frame = pd.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "item_kind": ["payout"] * len(rows),
            "flag": [r[1] for r in rows],
            "facts": pd.Series([_facts(r[2] or "kept") for r in rows], dtype=object),
            "known": [r[2] is not None for r in rows],
        }
    )
    return conform(frame, fr.Findings, name="found")


def follow(
    found: pd.DataFrame,
    cases: pd.DataFrame,
    *,
    run_id: int | None,
    as_of: datetime = AS_OF,
    judged: tuple[str, ...] = ("tx-1", "tx-2"),
    answered: tuple[str, ...] = ("tx-1", "tx-2"),
) -> CaseDecision:
    """:func:`follow_cases` with the run having decided and answered ``tx-1`` and ``tx-2``."""
    return follow_cases(
        found,
        cases,
        judged=frozenset(("payout", i) for i in judged),
        answered=frozenset(answered),
        run_id=run_id,
        as_of=as_of,
    )


def _cases(*rows: dict[str, Any]) -> pd.DataFrame:
    base = fr.empty(Cases)
    records = [
        {
            "item_kind": "payout", "facts": '{"state": "f1"}', "detail": "d",
            "opened_at": AS_OF - timedelta(3),
            "owner": None, "note": None, "until": pd.NaT, "state_at": AS_OF - timedelta(1),
            "previous_resolution": None, "reported_run_id": pd.NA, "version": 1, **r,
        }
        for r in rows
    ]  # fmt: skip
    frame = pd.DataFrame(records, columns=list(base.columns))
    for c in ("opened_at", "until", "state_at"):
        frame[c] = pd.to_datetime(frame[c], utc=True)
    return frame.astype({"version": "Int64", "reported_run_id": "Int64"})


def _status(decision: Any) -> dict[str, str]:
    exc = decision.exceptions
    return dict(zip(exc["item_id"], exc["status"].astype(str), strict=True))


def test_a_finding_without_a_case_opens_one_named_after_the_run() -> None:
    """A new finding opens a case whose id names the run (E7-1, E7-2), listed as new."""
    decision = follow(
        _found(("tx-1", "stale", "f"), ("tx-2", "stale", "f")),
        fr.empty(Cases),
        run_id=7,
        as_of=AS_OF,
    )
    assert list(decision.exceptions["exception_id"]) == ["E7-1", "E7-2"]
    assert [c["exception_id"] for c in decision.opened] == ["E7-1", "E7-2"]
    assert _status(decision) == {"tx-1": "new", "tx-2": "new"}


def test_a_dry_run_names_no_new_case() -> None:
    """A dry run (no run id) lists a new finding without an exception id."""
    decision = follow(_found(("tx-1", "stale", "f")), fr.empty(Cases), run_id=None, as_of=AS_OF)
    assert list(decision.exceptions["exception_id"]) == [""]


@pytest.mark.parametrize("state", ["acknowledged", "resolved"])
def test_new_facts_reopen_a_persons_case_with_the_earlier_resolution(state: str) -> None:
    """Changed facts reopen a person's case and show what the person had decided."""
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "amount_mismatch",
                   "state": state, "owner": "anna", "note": "asked"})  # fmt: skip
    decision = follow(_found(("tx-1", "amount_mismatch", "f2")), case, run_id=2, as_of=AS_OF)
    row = decision.exceptions.iloc[0]
    assert (row["status"], row["exception_id"]) == ("new", "E1-1")
    assert row["previous_resolution"] == f"{state} by anna on 2026-11-19: asked"
    (change,) = decision.changed
    assert (change["state"], change["owner"], change["version"]) == ("open", None, 1)
    assert [a["action"] for a in decision.actions] == ["facts_changed"]


def test_unchanged_or_unknown_facts_keep_an_acknowledgement_and_write_nothing() -> None:
    """Same or unknown facts leave an acknowledged case acknowledged and change no row."""
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale",
                   "state": "acknowledged", "owner": "anna"})  # fmt: skip
    for facts in ("f1", None):
        decision = follow(_found(("tx-1", "stale", facts)), case, run_id=2, as_of=AS_OF)
        assert _status(decision) == {"tx-1": "acknowledged"}
        assert decision.changed == []


def test_a_snooze_ends_on_its_date_and_not_before() -> None:
    """A snoozed case stays snoozed until its date, then is listed again as persisting."""
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale",
                   "state": "snoozed", "owner": "maria", "until": AS_OF})  # fmt: skip
    before = follow(
        _found(("tx-1", "stale", "f1")), case, run_id=2,
        as_of=AS_OF - timedelta(seconds=1),
    )  # fmt: skip
    assert _status(before) == {"tx-1": "snoozed"}
    after = follow(_found(("tx-1", "stale", "f1")), case, run_id=2, as_of=AS_OF)
    assert _status(after) == {"tx-1": "persisting"}
    assert after.exceptions.iloc[0]["previous_resolution"].startswith("snoozed by maria")
    assert [a["action"] for a in after.actions] == ["snooze_ended"]


def test_a_resolution_is_listed_once_then_hidden_while_the_finding_stands() -> None:
    """A resolved case is reported on the next run once, then hidden while its finding stands."""
    fresh = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "not_a_payout",
                    "state": "resolved", "owner": "olof"})  # fmt: skip
    first = follow(_found(("tx-1", "not_a_payout", "f1")), fresh, run_id=2, as_of=AS_OF)
    assert _status(first) == {"tx-1": "resolved"}
    assert first.changed[0]["reported_run_id"] == 2
    listed = fresh.assign(reported_run_id=pd.array([2], dtype="Int64"))
    later = follow(_found(("tx-1", "not_a_payout", "f1")), listed, run_id=3, as_of=AS_OF)
    assert later.exceptions.empty
    assert later.changed == []


def test_a_condition_gone_clears_an_open_case_and_ends_a_resolved_one_quietly() -> None:
    """When the finding is gone an open case is cleared and listed; a resolved one ends unlisted."""
    cases = _cases(
        {"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale", "state": "acknowledged"},
        {"exception_id": "E1-2", "item_id": "tx-2", "flag": "stale", "state": "resolved",
         "reported_run_id": 1},
    )  # fmt: skip
    decision = follow(_found(), cases, run_id=2)
    assert _status(decision) == {"tx-1": "cleared"}
    ended = {c["exception_id"]: c for c in decision.changed}
    assert ended["E1-1"]["state"] == "cleared"
    assert ended["E1-1"]["ended_run_id"] == 2
    assert ended["E1-2"] == {"ended_run_id": 2, "exception_id": "E1-2", "version": 1}


def test_an_open_finding_the_run_did_not_judge_stays_in_needs_action_unwritten() -> None:
    """A claim recon no longer asks about, an unreadable notification: not found, not judged,
    still open (persisting), and nothing is written for it."""
    cases = _cases(
        {"exception_id": "E1-1", "item_kind": "return", "item_id": "forged", "flag":
         "return_unverified", "state": "open"},
        {"exception_id": "E1-2", "item_kind": "notification", "item_id": "7", "flag":
         "notification_unreadable", "state": "acknowledged", "owner": "anna"},
    )  # fmt: skip
    decision = follow(_found(), cases, run_id=5)
    assert _status(decision) == {"forged": "persisting", "7": "acknowledged"}
    assert decision.changed == []
    assert decision.opened == []


def test_a_fetch_failure_is_cleared_by_an_answer_and_never_by_not_being_asked() -> None:
    """tx-1 was decided but not answered: its fetch_failed stands; tx-2 was answered: cleared."""
    cases = _cases(
        {"exception_id": "E1-1", "item_id": "tx-1", "flag": "fetch_failed", "state": "open"},
        {"exception_id": "E1-2", "item_id": "tx-2", "flag": "fetch_failed", "state": "open"},
    )  # fmt: skip
    decision = follow(_found(), cases, run_id=2, answered=("tx-2",))
    assert _status(decision) == {"tx-1": "persisting", "tx-2": "cleared"}
    assert [c["exception_id"] for c in decision.changed] == ["E1-2"]


def test_a_resolution_whose_finding_is_no_longer_judged_ends_so_a_repeat_opens_a_new_case() -> None:
    """A resolved claim recon stopped asking about ends (listed once if not yet); the same claim
    found again later has no live case, so it opens a new one."""
    cases = _cases(
        {"exception_id": "E1-1", "item_kind": "return", "item_id": "forged", "flag":
         "return_unverified", "state": "resolved", "owner": "olof"},
    )  # fmt: skip
    decision = follow(_found(), cases, run_id=3)
    assert _status(decision) == {"forged": "resolved"}
    (ended,) = decision.changed
    assert (ended["ended_run_id"], ended["reported_run_id"]) == (3, 3)


def test_a_persons_actions_are_planned_against_where_each_case_stands() -> None:
    """Acknowledge an open case, reopen a resolved one: owner and note go with the first only."""
    cases = {
        "E1-1": CaseStanding("E1-1", "open", None),
        "E1-2": CaseStanding("E1-2", "resolved", None),
    }
    requests = [
        ActionRequest("E1-1", CaseAction.ACKNOWLEDGE, "mine", "anna"),
        ActionRequest("E1-2", CaseAction.REOPEN, "not done", "olof"),
    ]
    changes, problems = plan_actions(requests, cases, now=AS_OF)
    assert problems == []
    assert [(c.previous_state, c.state, c.owner, c.note) for c in changes] == [
        ("open", "acknowledged", "anna", "mine"),
        ("resolved", "open", None, None),
    ]


def test_a_snoozed_case_sent_back_with_its_own_until_can_be_resolved() -> None:
    """The mailed workbook and exceptions.csv fill a snoozed case's until: resolving it with that
    date left in the row is a resolution; another date on a resolve is still refused."""
    until = AS_OF + timedelta(days=10)
    cases = {"E1-1": CaseStanding("E1-1", "snoozed", None, until=until)}
    done = ActionRequest("E1-1", CaseAction.RESOLVE, "paid", "anna", until=until)
    changes, problems = plan_actions([done], cases, now=AS_OF)
    assert problems == []
    assert [(c.state, c.until) for c in changes] == [("resolved", None)]
    other = ActionRequest("E1-1", CaseAction.RESOLVE, "paid", "anna", until=until + timedelta(1))
    _, problems = plan_actions([other], cases, now=AS_OF)
    assert [p for _, p in problems] == ["E1-1: a date (until) only goes with snooze, not resolve"]


def test_one_bad_request_plans_no_change_and_every_problem_is_named() -> None:
    """All or nothing: an unknown id, a snooze without a date, a closed case, a double order."""
    cases = {
        "E1-1": CaseStanding("E1-1", "open", None),
        "E1-2": CaseStanding("E1-2", "cleared", 4),
    }
    requests = [
        ActionRequest("E1-1", CaseAction.RESOLVE, "done", "olof", where="row 2"),
        ActionRequest("E9-9", CaseAction.ACKNOWLEDGE, None, "olof", where="row 3"),
        ActionRequest("E1-1", CaseAction.SNOOZE, None, "olof", where="row 4"),
        ActionRequest("E1-2", CaseAction.ACKNOWLEDGE, None, "olof", where="row 5"),
    ]
    changes, problems = plan_actions(requests, cases, now=AS_OF)
    assert changes == []
    assert [where for where, _ in problems] == ["row 3", "row 4", "row 5"]
    assert "no exception 'E9-9'" in problems[0][1]
    assert "also given resolve at row 2" in problems[1][1]
    assert "closed (cleared in run 4)" in problems[2][1]


@pytest.mark.parametrize(
    ("members", "status"),
    [(["tx-2", "tx-3"], "resolved"), (["tx-3"], "resolved"), (["tx-2", "tx-3", "tx-9"], "new")],
)
def test_a_resolved_possible_duplicate_reopens_only_when_a_member_joins(
    members: list[str], status: str
) -> None:
    """Resolved as intended: the same members (or fewer) keep it resolved, a new one reopens it."""
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "possible_duplicate",
                   "state": "resolved", "owner": "anna",
                   "facts": '{"members": ["tx-2", "tx-3"]}'})  # fmt: skip
    found = _found(("tx-1", "possible_duplicate", members))
    decision = follow(found, case, run_id=3, as_of=AS_OF)
    assert _status(decision) == {"tx-1": status}
