"""The provider's side, at the core's entry with literal data: which ids are asked,
how an answer makes an item a finding or a count, which recorded payouts could be its twin, and
when a create without an id is matched."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from recon.conform import typed
from recon.constants import ItemStatus
from recon.decision import ProviderInputs, answers_frame
from recon.reconcile.decide import latest_answers
from recon.reconcile.unrecorded import (
    COUNT_OTHER,
    COUNT_UNKNOWN,
    judge_items,
    match_attempts,
    named_ids,
    provider_side,
    to_ask,
    twins,
)
from recon.report.details import details
from recon.run_frames import Attempts, ProviderItems, Recorded

AS_OF = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
T0 = pd.Timestamp("2026-11-19 10:00", tz="UTC")


def _items(rows: list[dict[str, object]]) -> pd.DataFrame:
    base = {"first_named_at": T0, "named_by": "callback", "status": "unasked"}
    return typed(pd.DataFrame([{**base, **r} for r in rows]), ProviderItems)


def _recorded(rows: list[dict[str, object]]) -> pd.DataFrame:
    return typed(pd.DataFrame(rows), Recorded)


def _answer(tid: str, status: str = "ok", **fields: object) -> tuple[object, ...]:
    row = {"transaction_id": tid, "status": status, "state": None, "type": None,
           "error_code": None, "amount_minor": None, "amount": None, "currency": None,
           "related_transaction_id": None, "original_transaction_id": None,
           "merchant_reference": None, "to_bank_account_id": None, "created": None, "eta": None,
           "state_raw": None, "fee_amount_minor": None, "fee_id": None, "settled": None,
           **fields}  # fmt: skip
    return tuple(row.values())


def test_ids_named_by_callbacks_returns_and_answers_are_named_once_first_naming_first() -> None:
    """An id named by a notification and by an answer is one id, named when it was first."""
    notified = pd.DataFrame(
        {
            "transaction_id": ["gHost", "ret-1", "orig-9"],
            "named_by": ["callback", "return", "return"],
            "named_at": [T0, T0, T0],
        }
    )
    answers = answers_frame([_answer("p-1", related_transaction_id="gHost"),
                             _answer("p-2", related_transaction_id="rel-2")])  # fmt: skip
    named = named_ids(notified, answers, at=AS_OF)
    assert named["transaction_id"].tolist() == ["gHost", "orig-9", "ret-1", "rel-2"]
    assert named.set_index("transaction_id").loc["rel-2", "named_by"] == "answer"
    assert named.set_index("transaction_id").loc["gHost", "named_by"] == "callback"


def test_the_cap_asks_the_least_recently_asked_first_and_leaves_the_rest_for_next_run() -> None:
    """Never asked first, then by the run that last asked; settled payouts, counted ids and a
    returned-funds claim's own id (the claims' schedule asks it) are not asked; what passes the
    cap is counted."""
    items = _items([
        {"transaction_id": "a", "last_asked_run_id": 3},
        {"transaction_id": "b"},
        {"transaction_id": "c", "last_asked_run_id": 1},
        {"transaction_id": "settled", "status": "payout", "state": 6, "last_asked_run_id": 1},
        {"transaction_id": "moving", "status": "payout", "state": 1, "last_asked_run_id": 2},
        {"transaction_id": "forged", "status": "unknown", "last_asked_run_id": 1},
        {"transaction_id": "claim", "named_by": "claim"},
    ])  # fmt: skip
    assert to_ask(items, cap=3) == (["b", "c", "moving"], 1)
    assert to_ask(items, cap=10, answered=["b"]) == (["c", "moving", "a"], 0)
    assert to_ask(items, cap=10, answered=["a", "b", "c", "moving"]) == ([], 0)


def test_an_answer_makes_an_item_a_payout_another_type_or_unknown() -> None:
    """Type 1 is a payout, type 0 another type, not found unknown, an error leaves it as it was,
    and an id the record has now is recorded."""
    items = _items([{"transaction_id": t} for t in ("pay", "paym", "forged", "err", "rec")])
    latest = latest_answers(answers_frame([
        _answer("pay", state=6, type=1, amount_minor=10000, currency="SEK",
                merchant_reference="R1", to_bank_account_id="acc"),
        _answer("paym", state=6, type=0, amount_minor=500, currency="SEK"),
        _answer("forged", status="not_found"),
        _answer("err", status="error"),
    ]))  # fmt: skip
    judged = judge_items(items, latest, recorded_ids=frozenset({"rec"}), run_id=7, as_of=AS_OF)
    by_id = judged.set_index("transaction_id")
    assert by_id["status"].to_dict() == {
        "pay": ItemStatus.PAYOUT, "paym": ItemStatus.OTHER, "forged": ItemStatus.UNKNOWN,
        "err": ItemStatus.UNASKED, "rec": ItemStatus.RECORDED,
    }  # fmt: skip
    assert by_id.loc["pay", "amount_minor"] == 10000
    assert by_id.loc["pay", "merchant_reference"] == "R1"
    assert by_id.loc["err", "last_asked_run_id"] == 7
    assert pd.isna(by_id.loc["rec", "last_asked_run_id"])


def test_twins_share_the_reference_or_the_account_and_amount_within_the_window() -> None:
    """Same reference at any time; same account, amount and currency only within the window."""
    items = _items([{"transaction_id": "ghost", "status": "payout", "merchant_reference": "R1",
                     "to_bank_account_id": "acc", "amount_minor": 10000, "currency": "SEK",
                     "created": T0}])  # fmt: skip
    recorded = _recorded([
        {"transaction_id": "retry", "merchant_reference": "R1", "amount_minor": 10000,
         "currency": "SEK", "bank_account_id": "acc", "created": T0 + pd.Timedelta(minutes=10)},
        {"transaction_id": "same-acct", "merchant_reference": "R2", "amount_minor": 10000,
         "currency": "sek", "bank_account_id": "acc", "created": T0 - pd.Timedelta(hours=5)},
        {"transaction_id": "too-late", "merchant_reference": "R3", "amount_minor": 10000,
         "currency": "SEK", "bank_account_id": "acc", "created": T0 + pd.Timedelta(days=3)},
        {"transaction_id": "other-amount", "merchant_reference": "R4", "amount_minor": 9000,
         "currency": "SEK", "bank_account_id": "acc", "created": T0},
    ])  # fmt: skip
    found = twins(items, recorded, window=pd.Timedelta(hours=24))
    assert found.tolist() == ["retry, same-acct"]


def test_an_attempt_is_matched_by_reference_amount_and_currency_only() -> None:
    """A payout item or a recorded payout with the attempt's reference, amount and currency
    matches it; another amount does not."""
    attempts = typed(pd.DataFrame([
        {"id": 1, "merchant_reference": "R1", "amount_minor": 10000, "currency": "SEK"},
        {"id": 2, "merchant_reference": "R2", "amount_minor": 500, "currency": "EUR"},
        {"id": 3, "merchant_reference": "R3", "amount_minor": 700, "currency": "EUR"},
    ]), Attempts)  # fmt: skip
    items = _items([{"transaction_id": "ghost", "status": "payout", "merchant_reference": "R1",
                     "amount_minor": 10000, "currency": "sek"}])  # fmt: skip
    recorded = _recorded([
        {"transaction_id": "late", "merchant_reference": "R2", "amount_minor": 500,
         "currency": "EUR"},
        {"transaction_id": "not-it", "merchant_reference": "R3", "amount_minor": 701,
         "currency": "EUR"},
    ])  # fmt: skip
    matched = match_attempts(attempts, items, recorded)
    assert matched.to_dict("records") == [
        {"id": 1, "transaction_id": "ghost"},
        {"id": 2, "transaction_id": "late"},
    ]


def test_only_a_payout_the_record_lacks_and_an_unmatched_attempt_are_findings() -> None:
    """A forged id and a payment are counted, not findings; the unrecorded payout names its twin
    and matches the attempt it answers; an attempt nothing carries is creation_unknown."""
    items = _items([{"transaction_id": t} for t in ("gHostPaid1", "forged", "payment")])
    latest = latest_answers(answers_frame([
        _answer("gHostPaid1", state=6, type=1, amount_minor=10000, currency="SEK",
                merchant_reference="R1", to_bank_account_id="acc"),
        _answer("forged", status="not_found"),
        _answer("payment", state=6, type=0, amount_minor=1, currency="SEK"),
    ]))  # fmt: skip
    attempts = typed(pd.DataFrame([
        {"id": 1, "merchant_reference": "R1", "amount_minor": 10000, "currency": "SEK"},
        {"id": 2, "merchant_reference": "R9", "amount_minor": 100, "currency": "SEK"},
    ]), Attempts)  # fmt: skip
    recorded = _recorded(
        [
            {
                "transaction_id": "retry",
                "merchant_reference": "R1",
                "amount_minor": 10000,
                "currency": "SEK",
                "bank_account_id": "acc",
            }
        ]
    )
    inputs = ProviderInputs(
        items=items, attempts=attempts, recorded=recorded, window=pd.Timedelta(hours=24)
    )
    side, found, judged = provider_side(inputs, latest, run_id=4, as_of=AS_OF)
    words = found.assign(detail=details(found)).astype(str)
    rows = {(r["item_kind"], r["item_id"], r["flag"]): r["detail"]
            for r in words.to_dict("records")}  # fmt: skip
    assert set(rows) == {("provider", "gHostPaid1", "unrecorded_payout"),
                         ("attempt", "2", "creation_unknown")}  # fmt: skip
    assert "twin of retry" in rows[("provider", "gHostPaid1", "unrecorded_payout")]
    assert side.counts[COUNT_UNKNOWN] == 1
    assert side.counts[COUNT_OTHER] == 1
    assert side.matches.to_dict("records") == [{"id": 1, "transaction_id": "gHostPaid1"}]
    assert ("provider", "forged") in judged
    assert ("attempt", "1") in judged


def test_only_an_answer_marks_an_item_answered() -> None:
    """A failed fetch, a refusal or an answer about another id asks about the item but answers
    nothing: it stays due (no ``answered_at``); a not-found answer is an answer."""
    items = _items([{"transaction_id": t} for t in ("err", "refused", "wrong", "forged")])
    latest = latest_answers(answers_frame([
        _answer("err", status="error"),
        _answer("refused", status="refused"),
        _answer("wrong", status="wrong_id"),
        _answer("forged", status="not_found"),
    ]))  # fmt: skip
    judged = judge_items(items, latest, recorded_ids=frozenset(), run_id=7, as_of=AS_OF)
    by_id = judged.set_index("transaction_id")
    assert by_id["answered_at"].notna().to_dict() == {
        "err": False, "refused": False, "wrong": False, "forged": True
    }  # fmt: skip
    assert (by_id["last_asked_run_id"] == 7).all()
