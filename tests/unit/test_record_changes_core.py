"""The run's rules for records changed after reconciliation, on literal frames."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from recon.frames import empty
from recon.reconcile.changes import follow_changes
from recon.report.details import details
from recon.run_frames import Cases, RecordChanges

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LATER = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _changes(*rows: tuple[int, str, str, str, str, datetime, bool]) -> pd.DataFrame:
    columns = list(empty(RecordChanges).columns)
    frame = pd.DataFrame([list(r) for r in rows], columns=columns)
    return frame.astype(dict(empty(RecordChanges).dtypes))


def _resolved(item_id: str, at: datetime) -> pd.DataFrame:
    row: dict[str, object] = dict.fromkeys(empty(Cases).columns)
    row.update(exception_id="E1-1", item_kind="payout", item_id=item_id, flag="record_changed",
               state="resolved", state_at=at, version=1)  # fmt: skip
    return pd.DataFrame([row]).astype(dict(empty(Cases).dtypes))


AMOUNT = (1, "tx-1", "amount", "100.00 SEK", "150.00 SEK", T0, False)
CURRENCY = (2, "tx-2", "currency", "SEK", "EUR", T0, False)
CUSTOMER = (3, "tx-3", "customer_id", "c-1", "c-2", T0, False)


def test_a_changed_amount_is_the_finding_record_changed_with_both_values() -> None:
    """The finding names the field, the value before and after, and when it was imported."""
    verdict = follow_changes(_changes(AMOUNT), frozenset({"tx-1"}), frozenset(), empty(Cases))
    found = verdict.exceptions
    words = found.assign(detail=details(found))[["item_id", "item_kind", "flag", "detail"]]
    assert words.astype(str).to_dict("records") == [
        {
            "item_id": "tx-1",
            "item_kind": "payout",
            "flag": "record_changed",
            "detail": "the record changed after it was reconciled: amount: 100.00 SEK -> "
            "150.00 SEK (imported 2026-11-20 12:00 UTC)",
        }
    ]


def test_a_change_is_spent_as_a_question_only_by_an_answer() -> None:
    """Without an answer the change stays unanswered (asked again) and the history row is
    written; with one it is marked answered; either way the finding stands."""
    unanswered = follow_changes(_changes(AMOUNT), frozenset({"tx-1"}), frozenset(), empty(Cases))
    assert (unanswered.answered, unanswered.closed) == ((), ())
    assert unanswered.snapshot == frozenset({"tx-1"})
    answered = follow_changes(
        _changes(AMOUNT), frozenset({"tx-1"}), frozenset({"tx-1"}), empty(Cases)
    )
    assert (answered.answered, answered.closed) == ((1,), ())
    assert len(answered.exceptions) == 1


def test_an_answered_change_is_still_found_every_night_without_a_new_history_row() -> None:
    """Once answered, the finding stands but the record needs no new history row."""
    done = (1, "tx-1", "amount", "100.00 SEK", "150.00 SEK", T0, True)
    verdict = follow_changes(_changes(done), frozenset({"tx-1"}), frozenset(), empty(Cases))
    assert verdict.snapshot == frozenset()
    assert list(verdict.exceptions["flag"]) == ["record_changed"]


def test_a_person_resolving_the_finding_closes_the_changes_imported_before() -> None:
    """The change imported before the resolution closes and is found no more; one imported
    after it stands (the case's facts then differ and it opens again)."""
    newer = (4, "tx-1", "amount", "150.00 SEK", "120.00 SEK", LATER, False)
    resolved = _resolved("tx-1", T0.replace(hour=18))
    verdict = follow_changes(_changes(AMOUNT), frozenset({"tx-1"}), frozenset(), resolved)
    assert verdict.closed == (1,)
    assert verdict.exceptions.empty
    again = follow_changes(_changes(AMOUNT, newer), frozenset({"tx-1"}), frozenset(), resolved)
    assert again.closed == (1,)
    words = details(again.exceptions).iloc[0]
    assert "120.00 SEK" in words
    assert "100.00 SEK" not in words


def test_a_change_of_another_field_is_no_finding_and_closes_once_decided() -> None:
    """A new customer id is kept with the run's history row, not reported, not asked about."""
    verdict = follow_changes(
        _changes(CUSTOMER, CURRENCY), frozenset({"tx-3", "tx-2"}), frozenset(), empty(Cases)
    )
    assert list(verdict.exceptions["item_id"]) == ["tx-2"]
    assert verdict.closed == (3,)
    assert verdict.snapshot == frozenset({"tx-2", "tx-3"})


def test_a_change_on_a_payout_the_run_did_not_decide_waits() -> None:
    """Nothing is found, answered or closed for a payout outside the run's scope."""
    verdict = follow_changes(_changes(AMOUNT, CUSTOMER), frozenset(), frozenset(), empty(Cases))
    assert verdict.exceptions.empty
    assert (verdict.answered, verdict.closed, verdict.snapshot) == ((), (), frozenset())
