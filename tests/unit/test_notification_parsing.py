"""Parsing notification bodies into records, and the dedupe key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.constants import NotificationKind, NotificationSource
from recon.ingest.notifications import (
    BodyError,
    NotANotification,
    NotJSON,
    canonical_json,
    parse_body,
)
from recon.provider.jsonparse import loads
from recon.provider.models import parse_notification

WHEN = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SESSION = '{"merchant_id": "m-1", "session_id": "s-1", "session_state": 12}'
TRANSACTION = '{"merchant_id": "m-1", "transaction_id": "t-1", "transaction_state": 6}'
RETURNED = (
    '{"transaction_id": "r-1", "original_transaction_id": "t-1", '
    '"notification_type": "RETURNED_TRANSACTION", "merchant_id": "m-1", '
    '"country_id": "se", "amount": 11.10}'
)


def parse(raw: bytes | str, query: str = "") -> Any:
    return parse_body(raw, source=NotificationSource.RECEIVER, query=query, received_at=WHEN)


def test_a_session_notification_becomes_a_session_record() -> None:
    """A session body is stored with its session id and state."""
    record = parse(SESSION)
    assert record.kind == NotificationKind.SESSION
    assert (record.merchant_id, record.session_id, record.state) == ("m-1", "s-1", 12)
    assert record.transaction_id is None
    assert record.body == SESSION
    assert record.received_at == WHEN


def test_a_transaction_notification_becomes_a_transaction_record() -> None:
    """A transaction body is stored with its transaction id and state."""
    record = parse(TRANSACTION.encode(), query="shop=eu&x=1")
    assert record.kind == NotificationKind.TRANSACTION
    assert (record.transaction_id, record.state, record.session_id) == ("t-1", 6, None)
    assert record.query == "shop=eu&x=1"
    assert record.source == NotificationSource.RECEIVER


def test_a_returned_funds_notification_keeps_its_amount_exactly() -> None:
    """The returned amount is stored as the exact decimal text the body gave, never via float."""
    record = parse(RETURNED)
    assert record.kind == NotificationKind.RETURNED_FUNDS
    assert (record.transaction_id, record.original_transaction_id) == ("r-1", "t-1")
    assert record.amount == "11.10"
    assert record.country_id == "SE"
    assert record.state is None


def test_the_same_body_reserialised_has_the_same_dedupe_key() -> None:
    """Whitespace, key order and number formatting do not change the dedupe key."""
    other = json.dumps(
        {
            "amount": 11.1,
            "merchant_id": "m-1",
            "country_id": "se",
            "notification_type": "RETURNED_TRANSACTION",
            "original_transaction_id": "t-1",
            "transaction_id": "r-1",
        },
        indent=2,
    )
    assert parse(RETURNED).dedupe_key == parse(other).dedupe_key


def test_the_query_string_is_not_part_of_the_dedupe_key() -> None:
    """One event delivered to two merchant urls is one notification."""
    assert parse(TRANSACTION, "a=1").dedupe_key == parse(TRANSACTION, "b=2").dedupe_key


def test_a_different_state_is_a_different_notification() -> None:
    """The same transaction reaching another state is a new notification."""
    later = TRANSACTION.replace('"transaction_state": 6', '"transaction_state": 7')
    assert parse(TRANSACTION).dedupe_key != parse(later).dedupe_key


def test_ids_differing_only_in_case_are_different_notifications() -> None:
    """Ids are case-sensitive, so their case is part of the key."""
    upper = TRANSACTION.replace('"t-1"', '"T-1"')
    assert parse(TRANSACTION).dedupe_key != parse(upper).dedupe_key


def test_amounts_differing_beyond_float_precision_have_different_keys() -> None:
    """Numbers are compared exactly, not through float or a 28-digit context."""
    a = canonical_json(loads('{"amount": 0.1000000000000000000000000000000001}'))
    b = canonical_json(loads('{"amount": 0.1000000000000000000000000000000002}'))
    assert a != b
    assert canonical_json(loads("[1.10, 1.1, 11e-1, 0.00, -0]")) == "[11e-1,11e-1,11e-1,0,0]"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"\xff\xfe{}", "not UTF-8"),
        ("{", "malformed JSON"),
        ('{"transaction_id": "t"} trailing', "malformed JSON"),
        ("[" * 5000 + "]" * 5000, "body"),
        ('{"n": ' + "9" * 5000 + "}", "malformed JSON"),
    ],
)
def test_a_body_that_is_not_json_is_refused(raw: bytes | str, expected: str) -> None:
    """Bytes that are not UTF-8 JSON are refused with a reason."""
    with pytest.raises(BodyError, match=expected):
        parse(raw)


def test_malformed_json_is_reported_as_not_json() -> None:
    """Syntax errors are a distinct error class from invalid notifications."""
    with pytest.raises(NotJSON):
        parse("{'single': 'quotes'}")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"merchant_id": "m", "transaction_id": "t"}, "transaction_state"),
        ({"merchant_id": "m", "transaction_id": "", "transaction_state": 6}, "transaction_id"),
        ({"merchant_id": "m", "transaction_id": 5, "transaction_state": 6}, "transaction_id"),
        (
            {"merchant_id": "m", "transaction_id": "t", "transaction_state": "6"},
            "transaction_state",
        ),
        (
            {"merchant_id": "m", "transaction_id": "t", "transaction_state": True},
            "transaction_state",
        ),
        ({"merchant_id": "m", "session_id": "s", "session_state": 12.0}, "session_state"),
        ({"session_id": "s", "session_state": 12}, "merchant_id"),
        ({"notification_type": "REFUND", "transaction_id": "t"}, "notification_type"),
        ({"notification_type": "RETURNED_TRANSACTION", "transaction_id": "t"}, "merchant_id"),
        ({"hello": "world"}, "body"),
        ([1, 2], "body"),
        ("just a string", "body"),
    ],
)
def test_an_invalid_notification_names_the_field_at_fault(body: Any, field: str) -> None:
    """Wrong types, missing ids and unknown kinds are refused, naming the field."""
    with pytest.raises(NotANotification) as caught:
        parse(json.dumps(body))
    assert any(problem.startswith(field) for problem in caught.value.problems), caught.value


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"merchant_id": "m\\u0000", "transaction_id": "t", "transaction_state": 6}', "NUL"),
        ('{"merchant_id": "m", "transaction_id": "\\ud800", "transaction_state": 6}', "surrogate"),
        ('{"merchant_id": "m", "transaction_id": "t", "transaction_state": 6, "x": NaN}', "NaN"),
        ('{"merchant_id": "m", "transaction_id": "t", "transaction_state": 4294967296}', "range"),
        (RETURNED.replace("11.10", "1e999999999"), "amount"),
        (RETURNED.replace("11.10", "1e-40"), "amount"),
        (RETURNED.replace("11.10", '"NaN"'), "amount"),
        (RETURNED.replace('"se"', '"' + "x" * 17 + '"'), "country_id"),
        (
            '{"merchant_id": "m", "transaction_id": "t", "transaction_state": 6, "x": '
            + "[" * 40
            + "]" * 40
            + "}",
            "nested",
        ),
    ],
)
def test_values_no_column_could_hold_are_refused(raw: str, reason: str) -> None:
    """NUL characters, lone surrogates, NaN and huge numbers are refused before any database."""
    with pytest.raises(NotANotification, match=reason):
        parse(raw)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
near_notifications = st.fixed_dictionaries(
    {},
    optional={
        "merchant_id": json_values,
        "transaction_id": json_values,
        "session_id": json_values,
        "session_state": json_values,
        "transaction_state": json_values,
        "original_transaction_id": json_values,
        "notification_type": st.sampled_from(["RETURNED_TRANSACTION", "OTHER"]) | json_values,
        "amount": json_values,
        "country_id": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(body=near_notifications | json_values)
def test_random_bodies_are_either_valid_notifications_or_refused(body: Any) -> None:
    """Any JSON value parses to a record that the strict model accepts, or raises BodyError."""
    from recon.provider.jsonparse import dumps

    raw = dumps(body)
    try:
        record = parse(raw)
    except BodyError:
        return
    parse_notification(loads(raw))  # never stores what the model rejects
    assert record.body == raw
    assert len(record.dedupe_key) == 64
