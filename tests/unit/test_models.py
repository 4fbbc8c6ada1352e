"""The provider models normalise every documented variant, and JSON keeps money exact."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from recon.constants import TxState
from recon.jsonparse import dumpb, dumps, loads
from recon.provider.models import (
    AuthorizeRequest,
    AuthorizeResponse,
    BankAccountCreateRequest,
    CallbackSubscription,
    Session,
    Transaction,
    WithdrawalCreated,
    WithdrawalRequest,
)


def transaction(**fields: Any) -> Transaction:
    """A transaction.get answer with the required fields, overridden by ``fields``."""
    body: dict[str, Any] = {
        "id": "tx-1",
        "state": 6,
        "type": 1,
        "amount": Decimal("11.01"),
        "currency_id": "EUR",
    }
    body.update(fields)
    return Transaction.model_validate(body)


def from_json(text: str) -> Transaction:
    return Transaction.model_validate(loads(text))


# --- state ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (6, 6),
        ("6", 6),
        (" 3 ", 3),
        ("STATE_SETTLED", 6),
        ("state_failed", 3),
        ("SETTLED", 6),
        ("STATE_CREDITED", 5),
        ("STATE_CREDIT", 5),
        ("STATE_CREATED", 0),
        ("STATE_PENDING", 1),
        (Decimal("4"), 4),
        (Decimal("4.0"), 4),
        (9, 9),
    ],
)
def test_a_transaction_state_as_number_numeric_string_or_name_becomes_an_int(
    state: Any, expected: int
) -> None:
    """Every documented form of state, and unknown numbers, arrive as the integer state."""
    assert transaction(state=state).state == expected


@pytest.mark.parametrize("state", [True, None, Decimal("4.5"), [6]])
def test_a_state_that_is_no_name_or_number_is_refused(state: Any) -> None:
    """Nonsense states (not text, not a whole number) are a validation error naming the field."""
    with pytest.raises(ValidationError) as caught:
        transaction(state=state)
    assert caught.value.errors()[0]["loc"] == ("state",)


@pytest.mark.parametrize("state", ["STATE_REFUNDED", "STATE_LOST", "on hold"])
def test_an_undocumented_state_name_is_kept_as_sent_not_refused(state: str) -> None:
    """An answer with a state name the interface does not document is an answer, not malformed:
    ``state`` is None and the name is kept for the finding."""
    tx = transaction(state=state)
    assert (tx.state, tx.unrecognised_state) == (None, state)


@pytest.mark.parametrize(("state", "expected"), [(12, 12), ("10", 10), ("STATE_ABORTED", 10)])
def test_a_session_state_uses_the_session_names(state: Any, expected: int) -> None:
    """Session state names map to the session numbers (10-12), not the transaction ones."""
    assert Session.model_validate({"id": "s-1", "state": state}).state == expected


def test_the_transaction_state_enum_matches_the_provider_notes() -> None:
    """States 0-7 are named as the provider documents them."""
    assert [s.name for s in TxState] == [
        "CREATED", "PENDING", "ABORTED", "FAILED", "COMPLETED", "CREDIT", "SETTLED", "DEBIT",
    ]  # fmt: skip


# --- codes, types, timestamps ---------------------------------------------------------------------


def test_currency_and_country_codes_in_either_case_are_kept_upper_case() -> None:
    """'sek' and ' se ' become 'SEK' and 'SE'; nested bank-account countries too."""
    tx = transaction(
        currency_id="sek", country_id=" se ", to_bank_account={"country_id": "fi", "iban": "x"}
    )
    assert tx.currency_id == "SEK"
    assert tx.country_id == "SE"
    assert tx.to_bank_account is not None
    assert tx.to_bank_account.country_id == "FI"


def test_the_type_as_a_numeric_string_becomes_an_int() -> None:
    """type '13' is the returned-funds type 13."""
    assert transaction(type="13").type == 13


@pytest.mark.parametrize(
    "value",
    [1741903012, Decimal("1741903012.0"), "1741903012", " 1741903012.0 ", 1741903012.0],
)
def test_timestamps_as_integers_floats_or_numeric_strings_become_aware_utc(value: Any) -> None:
    """Every documented timestamp form is the same aware UTC datetime."""
    settled = transaction(settled=value).settled
    assert settled == datetime(2025, 3, 13, 21, 56, 52, tzinfo=UTC)


def test_a_fractional_timestamp_keeps_its_fraction() -> None:
    """1741903012.5 is half a second later than 1741903012."""
    settled = transaction(settled=Decimal("1741903012.5")).settled
    assert settled is not None
    assert settled.microsecond == 500_000


@pytest.mark.parametrize("value", ["yesterday", True, [1], "1e999999", Decimal("NaN")])
def test_a_timestamp_that_is_not_epoch_seconds_is_refused(value: Any) -> None:
    """Timestamps that cannot be epoch seconds are a validation error on that field."""
    with pytest.raises(ValidationError) as caught:
        transaction(settled=value)
    assert caught.value.errors()[0]["loc"] == ("settled",)


def test_timestamps_serialise_back_to_epoch_seconds() -> None:
    """In JSON mode a whole-second timestamp is written as an integer again."""
    dumped = WithdrawalCreated.model_validate({"id": "t", "eta": 1741903012.0}).model_dump(
        mode="json"
    )
    assert dumped == {"id": "t", "eta": 1741903012}


# --- amounts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"amount": 11.01', "11.01"),
        ('"amount": 11.10', "11.10"),
        ('"amount": 100', "100"),
        ('"amount": "12.01"', "12.01"),
        ('"amount": 1e2', "1E+2"),
    ],
)
def test_amounts_from_json_are_exact_decimals(text: str, expected: str) -> None:
    """Amounts keep exactly the digits sent, never passing through float."""
    tx = from_json('{"id": "t", "state": 4, "type": 1, "currency_id": "eur", ' + text + "}")
    assert isinstance(tx.amount, Decimal)
    assert str(tx.amount) == expected


def test_an_amount_with_more_digits_than_its_currency_is_refused_not_rounded() -> None:
    """0.30000000000000004 EUR is read exactly (no float) and refused: no whole minor units."""
    with pytest.raises(ValidationError, match="more than 2 decimals for EUR"):
        from_json('{"id": "t", "state": 4, "type": 1, "currency_id": "eur", '
                  '"amount": 0.30000000000000004}')  # fmt: skip


@pytest.mark.parametrize("value", [11.01, True, "eleven", "NaN", Decimal("Infinity")])
def test_an_amount_that_is_a_float_or_not_a_finite_number_is_refused(value: Any) -> None:
    """A Python float means precision was lost already; non-numbers are refused too."""
    with pytest.raises(ValidationError) as caught:
        transaction(amount=value)
    assert caught.value.errors()[0]["loc"] == ("amount",)


def test_json_nan_is_refused_as_an_amount() -> None:
    """A NaN in the JSON text cannot become an amount."""
    with pytest.raises(ValidationError):
        from_json('{"id": "t", "state": 4, "type": 1, "currency_id": "eur", "amount": NaN}')


# --- leniency ------------------------------------------------------------------------------------


def test_unknown_fields_are_kept_and_unknown_error_codes_stay_strings() -> None:
    """Fields the interface does not list survive, and a new error code is just a string."""
    tx = transaction(error_code="brand_new_code", shiny={"a": 1}, fee_amount=Decimal("0.25"))
    assert tx.error_code == "brand_new_code"
    assert tx.model_extra == {"shiny": {"a": 1}}
    assert tx.fee_amount == Decimal("0.25")


@pytest.mark.parametrize(
    "fields",
    [
        {"related_transaction_id": ""},
        {"original_transaction_id": "  "},
        {"country_id": ""},
        {"to_bank_account": {"country_id": ""}},
    ],
)
def test_an_optional_id_or_code_sent_empty_is_absent_not_a_malformed_answer(
    fields: dict[str, Any],
) -> None:
    """Provider notes: parse loosely. An empty optional link or country is no link or country;
    the required id and currency stay required."""
    tx = transaction(**fields)
    assert (tx.related_transaction_id, tx.original_transaction_id, tx.country_id) == (None,) * 3
    assert tx.to_bank_account is None or tx.to_bank_account.country_id is None
    with pytest.raises(ValidationError):
        transaction(id="")
    with pytest.raises(ValidationError):
        transaction(currency_id="")


def test_identifiers_keep_their_case() -> None:
    """Ids are opaque and case-sensitive: nothing folds them."""
    tx = transaction(id="Tx-AbC", related_transaction_id="Rel-xY")
    assert (tx.id, tx.related_transaction_id) == ("Tx-AbC", "Rel-xY")


@pytest.mark.parametrize("missing", ["id", "state", "type", "amount", "currency_id"])
def test_a_transaction_without_a_required_field_is_refused(missing: str) -> None:
    """Without id, state, type, amount or currency nothing can be reconciled."""
    body = {"id": "t", "state": 6, "type": 1, "amount": Decimal(1), "currency_id": "EUR"}
    del body[missing]
    with pytest.raises(ValidationError) as caught:
        Transaction.model_validate(body)
    assert caught.value.errors()[0]["loc"] == (missing,)


# --- requests ------------------------------------------------------------------------------------


def test_a_withdrawal_body_is_written_with_the_amount_exactly() -> None:
    """The request body carries 11.10 as the JSON number 11.10."""
    request = WithdrawalRequest(
        amount=Decimal("11.10"),
        bank_account_id="ba-1",
        merchant_reference="ref",
        statement_reference="Invoice 7",
        callbacks=[
            CallbackSubscription(url="https://m.test/cb", transaction_state="STATE_SETTLED")
        ],
    )
    assert dumpb(request.to_json_dict()) == (
        b'{"amount":11.10,"bank_account_id":"ba-1","merchant_reference":"ref",'
        b'"statement_reference":"Invoice 7",'
        b'"callbacks":[{"url":"https://m.test/cb","transaction_state":6}]}'
    )


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"amount": Decimal(0)}, "amount"),
        ({"amount": Decimal("-1.00")}, "amount"),
        ({"statement_reference": "x" * 106}, "statement_reference"),
        ({"merchant_reference": ""}, "merchant_reference"),
    ],
)
def test_an_invalid_withdrawal_request_is_refused(fields: dict[str, Any], field: str) -> None:
    """Zero or negative amounts, over-long statement references and empty references are refused."""
    body: dict[str, Any] = {"amount": Decimal(1), "bank_account_id": "b", "merchant_reference": "r"}
    body.update(fields)
    with pytest.raises(ValidationError) as caught:
        WithdrawalRequest.model_validate(body)
    assert caught.value.errors()[0]["loc"][0] == field


def test_a_statement_reference_of_105_characters_is_allowed() -> None:
    """105 characters is the documented maximum, inclusive."""
    request = WithdrawalRequest(
        amount=Decimal(1),
        bank_account_id="b",
        merchant_reference="r",
        statement_reference="x" * 105,
    )
    assert request.statement_reference == "x" * 105


def test_a_callback_carries_exactly_one_state_field() -> None:
    """A subscription with both or neither of session_state and transaction_state is refused."""
    with pytest.raises(ValidationError):
        CallbackSubscription(url="https://m.test", session_state=12, transaction_state=6)
    with pytest.raises(ValidationError):
        CallbackSubscription(url="https://m.test")


def test_a_bank_account_body_writes_the_date_of_birth_as_iso_text() -> None:
    """holder_dob goes out as YYYY-MM-DD and the country upper case."""
    request = BankAccountCreateRequest(
        country_id="se",
        iban="SE4550000000058398257466",
        holder_dob=date(1990, 2, 3),
        holder_address={"city": "Lund", "country": "se"},
    )
    assert request.to_json_dict() == {
        "country_id": "SE",
        "iban": "SE4550000000058398257466",
        "holder_dob": "1990-02-03",
        "holder_address": {"city": "Lund", "country": "SE"},
    }


def test_the_authorize_secret_is_sent_but_never_shown() -> None:
    """The secret is in the body sent, but not in the model's repr."""
    request = AuthorizeRequest(public_key="pk", secret="hunter2")
    assert request.to_json_dict() == {"public_key": "pk", "secret": "hunter2"}
    assert "hunter2" not in repr(request)


def test_the_authorize_answer_hides_its_tokens_and_reads_expires_as_a_float() -> None:
    """expires 1741903012.0 is an absolute time; tokens are secrets."""
    answer = AuthorizeResponse.model_validate(
        loads('{"access_token": "abc123", "expires": 1741903012.0, "refresh_token": "def456"}')
    )
    assert answer.expires == datetime(2025, 3, 13, 21, 56, 52, tzinfo=UTC)
    assert "abc123" not in repr(answer)
    assert "def456" not in repr(answer)
    assert answer.access_token.get_secret_value() == "abc123"


# --- jsonparse -----------------------------------------------------------------------------------


def test_loads_turns_fractions_into_decimals_and_keeps_integers() -> None:
    """Fractional numbers are Decimal, whole numbers int."""
    assert loads('{"a": 0.1, "b": 2, "c": [1.50]}') == {
        "a": Decimal("0.1"),
        "b": 2,
        "c": [Decimal("1.50")],
    }


def test_loads_raises_value_error_on_bad_json() -> None:
    """Bad JSON is a ValueError (json.JSONDecodeError is one)."""
    with pytest.raises(ValueError, match="Expecting"):
        loads("{")


def test_dumps_round_trips_decimals_digit_for_digit() -> None:
    """What loads read, dumps writes back with the same digits."""
    text = '{"amount":11.10,"tiny":0.000001,"big":12345678901234567890.12,"n":[1,true,null]}'
    assert dumps(loads(text)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("1E+2"), "100"),
        (Decimal("-0.50"), "-0.50"),
        (TxState.SETTLED, "6"),
        ("snø ☃", '"sn\\u00f8 \\u2603"'),
        (datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), '"2025-01-02T03:04:05+00:00"'),
        ((1, "a"), '[1,"a"]'),
        ({1: "a"}, '{"1":"a"}'),
    ],
)
def test_dumps_writes_each_supported_type(value: Any, text: str) -> None:
    """Decimals without exponent, enums by value, text ASCII-escaped, dates as ISO text."""
    assert dumps(value) == text


@pytest.mark.parametrize("value", [0.1, Decimal("NaN"), Decimal("Infinity"), object()])
def test_dumps_refuses_floats_non_finite_decimals_and_unknown_types(value: Any) -> None:
    """A float would lose money digits; NaN is not JSON; unknown objects are an error."""
    with pytest.raises((TypeError, ValueError)):
        dumps({"amount": value})


@pytest.mark.parametrize("fee", ["-0.01", "abc", "0.255", True])
def test_a_negative_or_non_numeric_fee_is_refused(fee: Any) -> None:
    """A fee is money of the payout's currency: never negative, never a fraction of its unit."""
    with pytest.raises(ValidationError, match="fee_amount"):
        transaction(fee_amount=fee)


def test_a_fee_is_read_exactly_beside_its_id() -> None:
    """0.75 arrives as a Decimal, never through float."""
    tx = from_json('{"id": "t", "state": 6, "type": 1, "currency_id": "eur", "amount": 100,'
                   ' "fee_amount": 0.75, "fee_id": "F-1"}')  # fmt: skip
    assert (tx.fee_amount, tx.fee_id) == (Decimal("0.75"), "F-1")
