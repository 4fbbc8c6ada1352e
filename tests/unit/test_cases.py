"""Each exception's case across runs (issue 14): pure rules of recon/reconcile/cases.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest

from recon import frames as fr
from recon.decision import empty_cases
from recon.reconcile.cases import follow_cases

AS_OF = datetime(2026, 11, 20, 5, tzinfo=UTC)


def _compared(*rows: tuple[str, str, str, str | None]) -> pd.DataFrame:
    """(item_id, flag, status, facts) rows on payouts."""
    frame = pd.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "item_kind": ["payout"] * len(rows),
            "flag": [r[1] for r in rows],
            "detail": [f"detail of {r[0]}" for r in rows],
            "status": [r[2] for r in rows],
        }
    )
    out = fr.conform(frame, fr.COMPARED, name="compared")
    return out.assign(facts=pd.Series([r[3] for r in rows], dtype="string"))


def _cases(*rows: dict[str, Any]) -> pd.DataFrame:
    base = empty_cases()
    records = [
        {
            "item_kind": "payout", "facts": "f1", "detail": "d", "opened_at": AS_OF - timedelta(3),
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
    decision = follow_cases(
        _compared(("tx-1", "stale", "new", "f"), ("tx-2", "stale", "new", "f")),
        empty_cases(),
        run_id=7,
        as_of=AS_OF,
    )
    assert list(decision.exceptions["exception_id"]) == ["E7-1", "E7-2"]
    assert [c["exception_id"] for c in decision.opened] == ["E7-1", "E7-2"]
    assert _status(decision) == {"tx-1": "new", "tx-2": "new"}


def test_a_dry_run_names_no_new_case() -> None:
    decision = follow_cases(
        _compared(("tx-1", "stale", "new", "f")), empty_cases(), run_id=None, as_of=AS_OF
    )
    assert list(decision.exceptions["exception_id"]) == [""]


@pytest.mark.parametrize("state", ["acknowledged", "resolved"])
def test_new_facts_reopen_a_persons_case_with_the_earlier_resolution(state: str) -> None:
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "amount_mismatch",
                   "state": state, "owner": "anna", "note": "asked"})  # fmt: skip
    decision = follow_cases(
        _compared(("tx-1", "amount_mismatch", "persisting", "f2")), case, run_id=2, as_of=AS_OF
    )
    row = decision.exceptions.iloc[0]
    assert (row["status"], row["exception_id"]) == ("new", "E1-1")
    assert row["previous_resolution"] == f"{state} by anna on 2026-11-19: asked"
    (change,) = decision.changed
    assert (change["state"], change["owner"], change["version"]) == ("open", None, 1)
    assert [a["action"] for a in decision.actions] == ["facts_changed"]


def test_unchanged_or_unknown_facts_keep_an_acknowledgement_and_write_nothing() -> None:
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale",
                   "state": "acknowledged", "owner": "anna"})  # fmt: skip
    for facts in ("f1", None):
        decision = follow_cases(
            _compared(("tx-1", "stale", "persisting", facts)), case, run_id=2, as_of=AS_OF
        )
        assert _status(decision) == {"tx-1": "acknowledged"}
        assert decision.changed == []


def test_a_snooze_ends_on_its_date_and_not_before() -> None:
    case = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale",
                   "state": "snoozed", "owner": "maria", "until": AS_OF})  # fmt: skip
    before = follow_cases(
        _compared(("tx-1", "stale", "persisting", "f1")), case, run_id=2,
        as_of=AS_OF - timedelta(seconds=1),
    )  # fmt: skip
    assert _status(before) == {"tx-1": "snoozed"}
    after = follow_cases(
        _compared(("tx-1", "stale", "persisting", "f1")), case, run_id=2, as_of=AS_OF
    )
    assert _status(after) == {"tx-1": "persisting"}
    assert after.exceptions.iloc[0]["previous_resolution"].startswith("snoozed by maria")
    assert [a["action"] for a in after.actions] == ["snooze_ended"]


def test_a_resolution_is_listed_once_then_hidden_while_the_finding_stands() -> None:
    fresh = _cases({"exception_id": "E1-1", "item_id": "tx-1", "flag": "not_a_payout",
                    "state": "resolved", "owner": "olof"})  # fmt: skip
    first = follow_cases(
        _compared(("tx-1", "not_a_payout", "persisting", "f1")), fresh, run_id=2, as_of=AS_OF
    )
    assert _status(first) == {"tx-1": "resolved"}
    assert first.changed[0]["reported_run_id"] == 2
    listed = fresh.assign(reported_run_id=pd.array([2], dtype="Int64"))
    later = follow_cases(
        _compared(("tx-1", "not_a_payout", "new", "f1")), listed, run_id=3, as_of=AS_OF
    )
    assert later.exceptions.empty
    assert later.changed == []


def test_a_condition_gone_clears_an_open_case_and_ends_a_resolved_one_quietly() -> None:
    cases = _cases(
        {"exception_id": "E1-1", "item_id": "tx-1", "flag": "stale", "state": "acknowledged"},
        {"exception_id": "E1-2", "item_id": "tx-2", "flag": "stale", "state": "resolved",
         "reported_run_id": 1},
    )  # fmt: skip
    decision = follow_cases(
        _compared(("tx-1", "stale", "cleared", None)), cases, run_id=2, as_of=AS_OF
    )
    assert _status(decision) == {"tx-1": "cleared"}
    ended = {c["exception_id"]: c for c in decision.changed}
    assert ended["E1-1"]["state"] == "cleared"
    assert ended["E1-1"]["ended_run_id"] == 2
    assert ended["E1-2"] == {"ended_run_id": 2, "exception_id": "E1-2", "version": 1}
