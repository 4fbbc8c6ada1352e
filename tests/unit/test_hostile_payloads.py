"""Hostile provider answers: parsing fails only with a clear error, and whatever it accepts can be
stored and reported (exact money, text every database takes). Notification bodies have their own
property test in test_notification_parsing.py."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from recon import jsonparse
from recon.provider.models import Transaction

ID_MAX = 255  # the store's id and error-code columns (recon.store.types.Id, String(255))
STORED = ("id", "error_code", "related_transaction_id", "original_transaction_id")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.decimals(allow_nan=True, allow_infinity=True)
    | st.text(max_size=300)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
TX_KEYS = [
    "id", "state", "type", "amount", "currency_id", "error_code", "related_transaction_id",
    "original_transaction_id", "merchant_reference", "created", "eta", "country_id",
    "from_bank_account", "fee_amount",
]  # fmt: skip
VALID_TX: dict[str, Any] = {
    "id": "tx-1",
    "state": 6,
    "type": 1,
    "amount": Decimal("10.10"),
    "currency_id": "eur",
}


def accepted_text(tx: Transaction) -> list[tuple[str, str]]:
    """Every text field of a parsed transaction, named."""
    return [(k, v) for k, v in tx.model_dump().items() if isinstance(v, str)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(TX_KEYS), json_values, max_size=10))
def test_a_random_transaction_answer_parses_or_fails_with_a_validation_error(
    fields: dict[str, Any],
) -> None:
    """Random field values (over a valid answer) either parse or raise ValidationError only."""
    with contextlib.suppress(ValidationError):
        Transaction.model_validate({**VALID_TX, **fields})


@settings(max_examples=300)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_random_bytes_parse_as_json_or_raise_value_error(raw: bytes) -> None:
    """jsonparse.loads raises ValueError (or its UnicodeDecodeError subclass) and nothing else."""
    with contextlib.suppress(ValueError):
        jsonparse.loads(raw)


@settings(max_examples=200)
@given(json_values)
def test_any_parsed_value_is_written_back_exactly_or_refused_with_type_or_value_error(
    value: Any,
) -> None:
    """dumps writes what loads reads, digit for digit, or refuses NaN/Infinity clearly."""
    try:
        text = jsonparse.dumps(value)
    except (TypeError, ValueError):
        return
    assert jsonparse.loads(text) == value or value != value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("error_code", "x" * 300, id="an-error-code-longer-than-its-column"),
        pytest.param("related_transaction_id", "r" * 300, id="a-related-id-longer-than-its-column"),
        pytest.param("original_transaction_id", "o" * 300, id="an-original-id-too-long"),
        pytest.param("error_code", "bank\x00error", id="a-NUL-in-the-error-code"),
        pytest.param("error_code", "code\ud800", id="an-unpaired-surrogate"),
        pytest.param("amount", Decimal("1e30"), id="an-amount-no-bigint-of-minor-units-holds"),
        pytest.param("amount", Decimal("9e999999"), id="an-amount-beyond-decimal-arithmetic"),
        pytest.param("state", 10**20, id="a-state-beyond-32-bits"),
        pytest.param("type", "99999999999999", id="a-type-beyond-32-bits"),
    ],
)
def test_an_answer_whose_text_no_database_can_store_is_refused(field: str, value: str) -> None:
    """Text the store cannot hold (too long for its column, NUL, unpaired surrogates) makes the
    answer malformed at parse time, instead of crashing the run when it is written."""
    with pytest.raises(ValidationError):
        Transaction.model_validate({**VALID_TX, field: value})


def test_an_unpaired_surrogate_from_a_json_escape_is_refused_in_a_stored_field() -> None:
    """A JSON escape like \\udc80 decodes to an unpaired surrogate: refused, not stored."""
    body = jsonparse.loads(
        json.dumps({**VALID_TX, "amount": 1, "related_transaction_id": "\udc80"})
    )
    with pytest.raises(ValidationError):
        Transaction.model_validate(body)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(TX_KEYS), json_values, max_size=10))
def test_an_accepted_answer_holds_only_storable_text_and_exact_money(
    fields: dict[str, Any],
) -> None:
    """Whatever is accepted is storable: the ids and the code stored in their own columns fit 255
    characters of NUL-free UTF-8, amounts fit BIGINT minor units, times are aware."""
    try:
        tx = Transaction.model_validate({**VALID_TX, **fields})
    except ValidationError:
        return
    for name, text in accepted_text(tx):
        if name in STORED:
            assert "\x00" not in text, name
            text.encode("utf-8")
            assert len(text) <= ID_MAX, name
    assert isinstance(tx.amount, Decimal)
    assert abs(tx.amount) * 1000 < 2**63  # minor units of a 3-decimal currency fit a BIGINT
    for moment in (tx.created, tx.eta):
        assert moment is None or (isinstance(moment, datetime) and moment.tzinfo is not None)
