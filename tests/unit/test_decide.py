"""The run's decision at its entry (issue 24): literal RunInputs in, a literal Decision out.

The same rules the multi-night tests drive through processes, checked here with plain data: a
finding leaves Needs action only by a person or by the facts, and only an answer spends evidence.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.decision import ANSWER_COLUMNS, ANSWER_DTYPES, Decision, KnownReturns, RunInputs
from recon.reconcile.classify import ClassifyParams
from recon.reconcile.decide import decide
from recon.reconcile.watch import WatchParams
from tests.unit.classify_support import AS_OF, DAY, NA, payout
from tests.unit.test_cases import _cases

WATCH = WatchParams(
    schedule_days=(1, 2, 30), return_schedule_days=(6, 12), watch_days=90, return_watch_days=30
)


def _payouts(*rows: dict[str, Any]) -> pd.DataFrame:
    schema = {k: v for k, v in fr.PAYOUTS_IN.items() if k not in ("polled", "callback_failed")}
    frame = pd.DataFrame([{k: r.get(k, NA) for k in schema} for r in rows], columns=list(schema))
    return conform(frame, schema, name="payouts")


def _answers(*rows: dict[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame([{c: r.get(c, NA) for c in ANSWER_COLUMNS} for r in rows])
    frame = frame.reindex(columns=list(ANSWER_COLUMNS))
    for column, dtype in ANSWER_DTYPES.items():
        frame[column] = (
            pd.to_datetime(frame[column], utc=True).astype(dtype)
            if dtype.startswith("datetime")
            else frame[column].astype(dtype)
        )
    return frame


def _returns(notices: tuple[tuple[str, str], ...] = (), started: Any = None) -> KnownReturns:
    nothing = pd.DataFrame({"return_id": pd.Series(dtype="string")})
    claims = pd.DataFrame(
        {
            "return_id": pd.Series([r for r, _ in notices], dtype="string"),
            "last_notified_at": pd.Series([AS_OF - 2 * DAY] * len(notices)).astype(
                "datetime64[us, UTC]"
            ),
            "first_asked_at": pd.Series([AS_OF - DAY] * len(notices)).astype("datetime64[us, UTC]"),
            "last_asked_at": pd.Series([AS_OF - DAY] * len(notices)).astype("datetime64[us, UTC]"),
        }
    )
    return KnownReturns(
        notices=pd.DataFrame(
            {
                "return_id": pd.Series([r for r, _ in notices], dtype="string"),
                "claimed_original_id": pd.Series([o for _, o in notices], dtype="string"),
                "claimed_amount": pd.Series(["12.50"] * len(notices), dtype="string"),
            }
        ),
        earlier=pd.DataFrame(
            {
                "transaction_id": pd.Series(dtype="string"),
                "type": pd.Series(dtype="Int64"),
                "related_transaction_id": pd.Series(dtype="string"),
                "original_transaction_id": pd.Series(dtype="string"),
                "amount_minor": pd.Series(dtype="Int64"),
                "currency": pd.Series(dtype="string"),
            }
        ),
        confirmations=nothing.assign(confirmed_original_id=pd.Series(dtype="string")),
        claims=claims,
        previous_started_at=started,
    )


def _decide(inputs: RunInputs) -> Decision:
    return decide(inputs, as_of=AS_OF.to_pydatetime(), params=ClassifyParams(), watch=WATCH)


def _statuses(decision: Decision) -> dict[tuple[str, str], str]:
    exc = decision.exceptions
    return {
        (str(i), str(f)): str(s)
        for i, f, s in zip(exc["item_id"], exc["flag"], exc["status"], strict=True)
    }


def test_a_fetch_that_fails_keeps_the_finding_open_and_spends_no_evidence() -> None:
    """A failed payout asked about (a callback hint) gets no answer: fetch_failed is new, and the
    payout is not marked answered, so the store keeps its hint for the next run."""
    failed = payout("p1", prev_outcome="failed", prev_state=3, ever_failed=True,
                    prev_outcome_since=AS_OF - 3 * DAY)  # fmt: skip
    decision = _decide(
        RunInputs(
            payouts=_payouts(failed),
            poll_ids=frozenset({"p1"}),
            answers=_answers({"transaction_id": "p1", "status": "error"}),
            returns=_returns(),
            previous_run_id=1,
            run_id=2,
        )
    )
    assert _statuses(decision) == {("p1", "fetch_failed"): "new"}
    row = decision.payouts.set_index("transaction_id").loc["p1"]
    assert (row["outcome"], bool(row["answered"])) == ("failed", False)


def test_an_answer_clears_the_fetch_failure_and_finds_the_late_settlement() -> None:
    """The next run gets the answer (settled): the open fetch_failed case is cleared by it, and
    the late settlement is a new finding; the payout is answered (its evidence spent)."""
    failed = payout("p1", prev_outcome="failed", prev_state=3, ever_failed=True,
                    prev_outcome_since=AS_OF - 3 * DAY, prev_exceptions="fetch_failed")  # fmt: skip
    cases = _cases({"exception_id": "E2-1", "item_id": "p1", "flag": "fetch_failed",
                    "state": "open", "facts": "|state=3|returned="})  # fmt: skip
    decision = _decide(
        RunInputs(
            payouts=_payouts(failed),
            poll_ids=frozenset({"p1"}),
            answers=_answers(
                {
                    "transaction_id": "p1",
                    "status": "ok",
                    "state": 6,
                    "type": 1,
                    "amount_minor": 1000,
                    "amount": "10.00",
                    "currency": "EUR",
                }
            ),
            returns=_returns(),
            previous_run_id=2,
            run_id=3,
            cases=cases,
        )
    )
    assert _statuses(decision) == {
        ("p1", "fetch_failed"): "cleared",
        ("p1", "late_settlement"): "new",
    }
    assert [(c["exception_id"], c["state"]) for c in decision.cases.changed] == [
        ("E2-1", "cleared")
    ]
    row = decision.payouts.set_index("transaction_id").loc["p1"]
    assert (row["outcome"], bool(row["answered"]), row["exceptions"]) == (
        "settled", True, "late_settlement"
    )  # fmt: skip


def test_a_claim_no_run_asks_about_again_stays_in_needs_action() -> None:
    """A claim an earlier run already saw (quiet: no new notification, not confirmed) is not
    judged tonight: its open case persists, unchanged, and nothing is written for it."""
    cases = _cases({"exception_id": "E1-1", "item_kind": "return", "item_id": "forged",
                    "flag": "return_unverified", "state": "open"})  # fmt: skip
    decision = _decide(
        RunInputs(
            payouts=_payouts(),
            poll_ids=frozenset(),
            answers=_answers(),
            returns=_returns((("forged", "p9"),), started=AS_OF - DAY),
            previous_run_id=3,
            run_id=4,
            cases=cases,
        )
    )
    assert _statuses(decision) == {("forged", "return_unverified"): "persisting"}
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
    cases = _cases({"exception_id": "E1-1", "item_id": "p1", "flag": "unknown_transaction",
                    "state": "resolved", "reported_run_id": 2})  # fmt: skip
    decision = _decide(
        RunInputs(
            payouts=_payouts(unknown),
            poll_ids=frozenset(),
            answers=_answers(),
            returns=_returns(),
            previous_run_id=2,
            run_id=3,
            cases=cases,
        )
    )
    assert _statuses(decision) == {}
    assert decision.cases.changed == []
    row = decision.payouts.set_index("transaction_id").loc["p1"]
    assert row["exceptions"] == "unknown_transaction"
