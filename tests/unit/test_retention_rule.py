"""The retention rule, literal rows in, ids to drop out."""

from __future__ import annotations

from datetime import UTC, datetime

from recon.reconcile.retention import (
    Evidence,
    RawAnswer,
    RawNotification,
    answers_to_drop,
    evidence,
    notifications_to_drop,
    raw_cutoff,
)

EV = evidence(
    [("payout", "P-open", None), ("return", "R-open", None), ("notification", "70", None)],
    ["R-13", "R-claim"],
)


def test_evidence_splits_live_cases_into_transaction_ids_and_notification_ids() -> None:
    """A notification's case names the notification's id; the others name a transaction id."""
    expected = Evidence(
        open_transactions=frozenset({"P-open", "R-open"}),
        open_notifications=frozenset({70}),
        return_ids=frozenset({"R-13", "R-claim"}),
    )
    assert expected == EV


def test_every_member_of_an_open_finding_keeps_its_evidence() -> None:
    """A group of possible duplicates, or a double payment, is filed under one payout and names
    the others as members: the answers and notifications about each stay while it is open."""
    ev = evidence([("payout", "P-A", '{"members": ["P-A", "P-B"], "at_stake_minor": 100}')], [])
    assert ev.open_transactions == {"P-A", "P-B"}
    assert answers_to_drop([RawAnswer(1, "P-B", 1, None), RawAnswer(2, "P-C", 1, None)], ev) == [2]
    assert notifications_to_drop([RawNotification(3, "transaction", "P-B")], ev) == []


def test_answers_past_retention_go_unless_they_are_evidence() -> None:
    """Kept: about an open finding, type 13, naming a return, about a known return's id."""
    rows = [
        RawAnswer(1, "P-plain", 1, None),
        RawAnswer(2, "P-open", 1, None),
        RawAnswer(3, "R-open", None, None),
        RawAnswer(4, "R-new", 13, None),  # a return no run has judged yet
        RawAnswer(5, "P-returned", 1, "R-13"),
        RawAnswer(6, "R-claim", None, None),  # a claimed return answered "not found"
        RawAnswer(7, "P-plain", 1, None),
        RawAnswer(8, "70", 1, None),  # a notification's id is not a transaction id
    ]
    assert answers_to_drop(rows, EV) == [1, 7, 8]


def test_notifications_past_retention_go_unless_they_are_evidence() -> None:
    """Kept: every returned-funds body, those about returns or open findings, open findings."""
    rows = [
        RawNotification(10, "transaction", "P-plain"),
        RawNotification(11, "returned_funds", "R-other"),
        RawNotification(12, "transaction", "P-open"),
        RawNotification(13, "transaction", "R-13"),
        RawNotification(70, "unknown", None),  # itself a finding still open
        RawNotification(71, "unknown", None),
        RawNotification(14, "session", None),
    ]
    assert notifications_to_drop(rows, EV) == [10, 71, 14]


def test_nothing_is_evidence_without_cases_or_returns() -> None:
    """With no live case and no return, every raw body past retention goes."""
    none = evidence([], [])
    assert answers_to_drop([RawAnswer(1, "P", 1, None)], none) == [1]
    assert notifications_to_drop([RawNotification(2, "transaction", "P")], none) == [2]


def test_the_cutoff_counts_back_from_the_runs_as_of() -> None:
    """RECON_KEEP_RAW_DAYS=90 at 2026-12-01 05:00: bodies from before 2026-09-02 05:00 go."""
    as_of = datetime(2026, 12, 1, 5, tzinfo=UTC)
    assert raw_cutoff(as_of, 90) == datetime(2026, 9, 2, 5, tzinfo=UTC)
