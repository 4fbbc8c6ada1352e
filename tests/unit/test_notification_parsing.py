"""Parsing notification bodies into records, and the dedupe key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.constants import NotificationKind, NotificationSource, ParseStatus
from recon.ingest.notifications import (
    BodyError,
    NotAnObject,
    NotJSON,
    canonical_json,
    parse_body,
)
from recon.jsonparse import loads

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


@pytest.mark.parametrize(
    "extra", ['"session_id": null', '"session_state": null', '"notification_type": null',
              '"session_id": "s-9"']
)  # fmt: skip
def test_a_transaction_notification_with_another_kinds_key_is_still_a_transaction(
    extra: str,
) -> None:
    """Interface 6.3: a transaction_state makes a transaction notification; a key of another
    kind that is null (or a session id beside it) does not make it a session's or unknown."""
    record = parse(TRANSACTION.replace("}", ", " + extra + "}"))
    assert record.kind == NotificationKind.TRANSACTION
    assert (record.transaction_id, record.state) == ("t-1", 6)
    assert record.parse_status == ParseStatus.PARSED


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
def test_a_body_that_is_not_json_is_refused_as_not_json(raw: bytes | str, expected: str) -> None:
    """Bytes that are not UTF-8 JSON are refused with a reason."""
    with pytest.raises(NotJSON, match=expected):
        parse(raw)


def test_malformed_json_is_reported_as_not_json() -> None:
    """Syntax errors are a distinct error class from invalid notifications."""
    with pytest.raises(NotJSON):
        parse("{'single': 'quotes'}")


@pytest.mark.parametrize(
    "body",
    [
        {"transaction_id": "r-1", "original_transaction_id": "t-1", "amount": "2.50"},
        {
            "transaction_id": "r-1",
            "original_transaction_id": "t-1",
            "amount": "2.50",
            "merchant_id": 4711,
        },
    ],
    ids=["no merchant_id", "numeric merchant_id"],
)
def test_a_returned_funds_claim_is_read_whatever_its_merchant_id(body: dict[str, Any]) -> None:
    """merchant_id is not used by recon: missing or numeric, the claim is read in full."""
    record = parse(json.dumps(body | {"notification_type": "RETURNED_TRANSACTION"}))
    assert (record.kind, record.parse_status, record.parse_problem) == (
        NotificationKind.RETURNED_FUNDS,
        ParseStatus.PARSED,
        None,
    )
    assert (record.transaction_id, record.original_transaction_id, record.amount) == (
        "r-1",
        "t-1",
        "2.50",
    )
    assert record.merchant_id == ("4711" if "merchant_id" in body else None)


@pytest.mark.parametrize(
    ("state", "expected"),
    [("3", 3), (" 3 ", 3), (3.0, 3), ("STATE_FAILED", 3), ("failed", 3), (6, 6)],
)
def test_a_state_sent_as_a_numeric_string_or_name_is_read_as_a_number(
    state: Any, expected: int
) -> None:
    """transaction_state "3" (or 3.0, or its name) is state 3, fully parsed."""
    record = parse(
        json.dumps({"merchant_id": "m", "transaction_id": "t", "transaction_state": state})
    )
    assert (record.kind, record.state, record.parse_status) == (
        NotificationKind.TRANSACTION,
        expected,
        ParseStatus.PARSED,
    )


@pytest.mark.parametrize(
    ("raw", "kind", "status", "reason"),
    [
        # what recon cannot tell as a claim: kept as kind unknown, without ids
        ('{"hello": "world"}', "unknown", "unparsed", "body: not a notification"),
        (
            '{"notification_type": "REFUND", "transaction_id": "t"}',
            "unknown",
            "unparsed",
            "notification_type: unknown value 'REFUND'",
        ),
        (
            '{"merchant_id": "m", "transaction_id": "", "transaction_state": 6}',
            "unknown",
            "unparsed",
            "transaction_id: must be 1 to 255",
        ),
        (
            '{"merchant_id": "m", "transaction_id": [5], "transaction_state": 6}',
            "unknown",
            "unparsed",
            "transaction_id: not an id",
        ),
        (
            '{"merchant_id": "m", "transaction_id": "\\ud800", "transaction_state": 6}',
            "unknown",
            "unparsed",
            "transaction_id: contains an unpaired surrogate",
        ),
        (
            '{"notification_type": "RETURNED_TRANSACTION", "transaction_id": "r"}',
            "unknown",
            "unparsed",
            "original_transaction_id: missing",
        ),
        (
            '{"transaction_id": "t", "transaction_state": 6, "x": ' + "[" * 40 + "]" * 40 + "}",
            "unknown",
            "unparsed",
            "body: nested more than 32 levels",
        ),
        # a known claim with a value recon cannot read: ids kept, the value left empty
        (
            '{"merchant_id": "m", "transaction_id": "t"}',
            "transaction",
            "partial",
            "transaction_state: missing",
        ),
        (
            '{"merchant_id": "m", "transaction_id": "t", "transaction_state": true}',
            "transaction",
            "partial",
            "transaction_state: a boolean",
        ),
        (
            '{"transaction_id": "t", "transaction_state": 4294967296}',
            "transaction",
            "partial",
            "transaction_state: out of range",
        ),
        (
            '{"transaction_id": "t", "transaction_state": 1e999999999}',
            "transaction",
            "partial",
            "transaction_state: not a state number",
        ),
        (
            '{"transaction_id": "t", "transaction_state": "STATE_REFUNDED"}',
            "transaction",
            "partial",
            "transaction_state: unknown state 'STATE_REFUNDED'",
        ),
        (
            '{"session_id": "s", "session_state": 12.5}',
            "session",
            "partial",
            "session_state: not a state number",
        ),
        (RETURNED.replace("11.10", "1e999999999"), "returned_funds", "partial", "amount: out of"),
        (RETURNED.replace("11.10", "1e-40"), "returned_funds", "partial", "amount: out of range"),
        (RETURNED.replace("11.10", '"NaN"'), "returned_funds", "partial", "amount: not a finite"),
        (RETURNED.replace("11.10", '"eleven"'), "returned_funds", "partial", "amount: not a"),
    ],
)
def test_a_body_recon_cannot_read_is_kept_with_its_reason(
    raw: str, kind: str, status: str, reason: str
) -> None:
    """Every JSON object becomes a record; what could not be read is its status and reason."""
    record = parse(raw)
    assert (record.kind, record.parse_status) == (kind, status)
    assert record.parse_problem is not None
    assert record.parse_problem.startswith(reason), record.parse_problem
    assert record.body == raw
    if kind == "unknown":
        ids = (record.transaction_id, record.original_transaction_id, record.session_id)
        assert ids == (None, None, None)
        assert (record.state, record.amount) == (None, None)


@pytest.mark.parametrize(
    "raw",
    [
        '{"merchant_id": "m\\u0000", "transaction_id": "t", "transaction_state": 6}',
        '{"merchant_id": {"nested": 1}, "transaction_id": "t", "transaction_state": 6}',
        RETURNED.replace('"se"', '"' + "x" * 17 + '"'),
        RETURNED.replace('"se"', "46"),
    ],
)
def test_fields_recon_does_not_use_never_stop_a_body_being_read(raw: str) -> None:
    """An odd merchant_id or country_id is left empty; the notification is still fully read."""
    record = parse(raw)
    assert record.parse_status == ParseStatus.PARSED
    assert record.kind in (NotificationKind.TRANSACTION, NotificationKind.RETURNED_FUNDS)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("[1, 2]", NotAnObject),
        ('"just a string"', NotAnObject),
        ("42", NotAnObject),
        ("null", NotAnObject),
        ('{"transaction_id": "t", "transaction_state": 6, "x": NaN}', NotJSON),
    ],
)
def test_json_that_is_not_an_object_is_refused(raw: str, error: type[BodyError]) -> None:
    """Arrays, strings, numbers, null and NaN are no notification: refused, not stored."""
    with pytest.raises(error):
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
def test_random_bodies_are_stored_readably_or_refused_as_not_objects(body: Any) -> None:
    """Any JSON object becomes a record whose columns fit the store; anything else is refused."""
    from recon.jsonparse import dumps

    raw = dumps(body)
    try:
        record = parse(raw)
    except NotAnObject:
        assert not isinstance(body, dict)
        return
    assert isinstance(body, dict)
    assert record.body == raw
    assert len(record.dedupe_key) == 64
    assert (record.parse_problem is None) == (record.parse_status == ParseStatus.PARSED)
    for value in (record.merchant_id, record.transaction_id, record.session_id):
        assert value is None or (1 <= len(value) <= 255 and "\x00" not in value)
        if value is not None:
            value.encode("utf-8")
    assert record.state is None or -(2**31) <= record.state < 2**31
    if record.kind == NotificationKind.UNKNOWN:
        assert record.parse_status == ParseStatus.UNPARSED
        assert (record.transaction_id, record.session_id, record.state) == (None, None, None)
