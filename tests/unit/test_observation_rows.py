"""Observation rows keep the provider's answer as it was sent, with exact amounts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from recon.constants import ObsStatus
from recon.jsonparse import loads
from recon.night.observe import observation_row
from recon.night.poll import Fetched
from recon.provider.models import Transaction

BODY = (
    '{"id": "tx-1", "state": 3, "type": 1, "amount": 11.010, "currency_id": "EUR",'
    ' "error_code": "CANCELLED", "note": "Zoë \\u00e9"}'
)


def _fetched(raw: bytes) -> Fetched:
    transaction = Transaction.model_validate(loads(raw))
    moment = datetime(2026, 11, 20, tzinfo=UTC)
    return Fetched("tx-1", moment, ObsStatus.OK, transaction=transaction, raw=raw)


def test_a_utf8_answer_is_stored_byte_for_byte() -> None:
    """The raw column is the body's own text: spacing, digits and escapes untouched."""
    row = observation_row(_fetched(BODY.encode()), run_id=7)
    assert row["raw"] == BODY
    assert row["amount"] == "11.010"
    assert row["amount_minor"] == 1101
    assert row["run_id"] == 7


def test_an_answer_in_another_unicode_encoding_is_stored_as_the_same_json_values() -> None:
    """A UTF-16 body (which the JSON parser accepts) is stored re-encoded, values unchanged."""
    row = observation_row(_fetched(BODY.encode("utf-16")), run_id=7)
    assert loads(row["raw"]) == loads(BODY)
    assert json.loads(row["raw"])["note"] == "Zoë é"


def test_an_answer_without_a_transaction_stores_no_body() -> None:
    """A not-found answer has its error text and no raw body or amounts."""
    moment = datetime(2026, 11, 20, tzinfo=UTC)
    row = observation_row(Fetched("tx-2", moment, "not_found", error="unknown id"), run_id=None)
    assert row == {
        "run_id": None,
        "transaction_id": "tx-2",
        "fetched_at": moment,
        "status": "not_found",
        "error": "unknown id",
    }
