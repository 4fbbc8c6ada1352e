"""What is known of returns when a run starts, judged by the core from what the store holds.

Literal rows in, the core's judgement out: which earlier answer speaks for a return, and when
runs asked about a claim (rules that were filters in the store's SQL).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd

from recon.reconcile.return_evidence import claims, evidence
from recon.run_frames import EarlierAnswers

T = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
H = timedelta(hours=1)


def _answers(*rows: tuple[str, str, int | None]) -> pd.DataFrame:
    """Answers oldest first: (transaction_id, status, type), amounts 101, 102, ...."""
    base: dict[str, Any] = dict.fromkeys(EarlierAnswers)
    frame = pd.DataFrame(
        [
            base | {"id": i, "transaction_id": t, "status": s, "type": k, "amount_minor": 100 + i}
            for i, (t, s, k) in enumerate(rows, start=1)
        ],
        columns=["id", *EarlierAnswers],
    )
    return frame.astype(
        {"transaction_id": "string", "status": "string", "type": "Int64", "amount_minor": "Int64"}
    )


def test_an_ok_answer_speaks_for_a_return_when_it_says_type_13_or_the_id_was_announced() -> None:
    """A type-13 answer speaks; an answer of another type speaks only for an announced id (the
    provider called it a return); an ordinary payout's answer is no return's evidence."""
    answers = _answers(("r13", "ok", 13), ("announced", "ok", 1), ("payout", "ok", 1))
    latest, seen13 = evidence(answers, announced={"announced"}, confirmed=set())
    assert list(latest["transaction_id"]) == ["r13", "announced"]
    assert "id" not in latest.columns
    assert seen13 == {"r13"}


def test_not_found_speaks_only_for_a_return_once_confirmed_and_other_failures_never() -> None:
    """The provider forgetting a confirmed return is news; not_found about an id never confirmed,
    and a fetch that failed, say nothing."""
    answers = _answers(
        ("confirmed", "not_found", None), ("never", "not_found", None), ("r13", "error", 13)
    )
    latest, seen13 = evidence(answers, announced={"never"}, confirmed={"confirmed"})
    assert list(latest["transaction_id"]) == ["confirmed"]
    assert list(latest["status"]) == ["not_found"]
    assert seen13 == frozenset()


def test_the_latest_answer_that_speaks_wins_and_a_later_one_that_does_not_is_ignored() -> None:
    """Per id the latest speaking answer (oldest first in, so the last one): a later not_found
    of a confirmed return replaces its ok; a later fetch failure does not."""
    answers = _answers(
        ("r1", "ok", 13), ("r1", "not_found", None), ("r2", "ok", 13), ("r2", "error", None)
    )
    latest, seen13 = evidence(answers, announced=set(), confirmed={"r1"})
    assert dict(zip(latest["transaction_id"], latest["status"], strict=True)) == {
        "r1": "not_found",
        "r2": "ok",
    }
    assert list(latest["amount_minor"]) == [102, 103]
    assert seen13 == {"r1", "r2"}


def test_a_claim_counts_the_runs_that_started_after_its_latest_notification() -> None:
    """First and last asked are the runs' own clocks (as_of), of runs started at or after the
    latest notification; a claim no run asked about since has none (NaT)."""
    notified = pd.DataFrame(
        {"return_id": ["r1", "r2"], "last_notified_at": pd.to_datetime([T, T], utc=True)}
    )
    asks = pd.DataFrame(
        {
            "transaction_id": ["r1", "r1", "r1", "r2", "other"],
            "as_of": pd.to_datetime([T - 9 * H, T + 20 * H, T + 44 * H, T - H, T], utc=True),
            "started_at": pd.to_datetime([T - H, T, T + 48 * H, T - H, T + H], utc=True),
        }
    )
    out = claims(notified, asks)
    assert list(out.columns) == ["return_id", "last_notified_at", "first_asked_at", "last_asked_at"]
    r1, r2 = out.iloc[0], out.iloc[1]
    assert (r1["return_id"], r1["first_asked_at"], r1["last_asked_at"]) == (
        "r1",
        pd.Timestamp(T + 20 * H),
        pd.Timestamp(T + 44 * H),
    )
    assert r2["return_id"] == "r2"
    assert pd.isna(r2["first_asked_at"])
    assert pd.isna(r2["last_asked_at"])
