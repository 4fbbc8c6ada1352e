"""One state value means one state in an answer and in a notification (recon.provider.states)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from recon.constants import NotificationSource, SessionState, TxState
from recon.ingest.notifications import parse_body
from recon.provider.models import Transaction
from recon.provider.states import read_state

SENT_STATES = [
    (6, 6),
    ("6", 6),
    (" 3 ", 3),
    (Decimal("4.0"), 4),
    ("STATE_SETTLED", 6),
    ("state_failed", 3),
    ("SETTLED", 6),
    ("STATE_CREDITED", 5),
    ("STATE_CREDIT", 5),
    (9, 9),
]


@pytest.mark.parametrize(("sent", "state"), SENT_STATES)
def test_a_state_reads_as_its_number_from_a_number_numeric_text_or_a_name(
    sent: Any, state: int
) -> None:
    """Numbers, numeric text and names (with or without STATE_, CREDITED for CREDIT) alike."""
    assert read_state(sent, TxState) == state


@pytest.mark.parametrize(
    ("sent", "why"),
    [
        (True, "a boolean"),
        (Decimal("4.5"), "not a state number"),
        (Decimal("1e999999999"), "not a state number"),
        (2**31, "out of range"),
        ("STATE_REFUNDED", "unknown state 'STATE_REFUNDED'"),
        ([6], r"not a number: \[6\]"),
    ],
)
def test_a_value_that_is_no_state_says_why(sent: Any, why: str) -> None:
    """A boolean, a fraction, a huge number, an unknown name or a list is refused with a reason."""
    with pytest.raises(ValueError, match=why):
        read_state(sent, TxState)


def test_session_names_are_the_session_numbers() -> None:
    """STATE_ABORTED of a session is 10, not a transaction's 2."""
    assert read_state("STATE_ABORTED", SessionState) == 10


@pytest.mark.parametrize(("sent", "state"), SENT_STATES)
def test_an_answer_and_a_notification_read_one_state_alike(sent: Any, state: int) -> None:
    """transaction.get's ``state`` and a callback's ``transaction_state`` give the same number
    (before, "STATE_CREDITED" was 5 in an answer and unknown in a notification)."""
    answer = Transaction.model_validate(
        {"id": "t", "state": sent, "type": 1, "amount": Decimal(1), "currency_id": "EUR"}
    )
    sent_json = float(sent) if isinstance(sent, Decimal) else sent
    body = json.dumps({"merchant_id": "m", "transaction_id": "t", "transaction_state": sent_json})
    note = parse_body(
        body,
        source=NotificationSource.RECEIVER,
        query="",
        received_at=datetime(2026, 11, 26, tzinfo=UTC),
    )
    assert (answer.state, note.state) == (state, state)


@pytest.mark.parametrize("text", ["²", "6²", "٦", "①"])
def test_digits_of_other_scripts_are_no_state_number_and_no_crash(text: str) -> None:
    """``str.isdigit`` takes "²"; Decimal then raised InvalidOperation (no ValueError), which
    escaped the answer's and the notification's readers."""
    with pytest.raises(ValueError, match="unknown state"):
        read_state(text, TxState)
