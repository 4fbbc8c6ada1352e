"""Pydantic models of the interface's requests and answers (sections 2 and 4).

Answers are parsed leniently, in the documented variants, and normalised on the way in (the value
types are :mod:`recon.provider.values`):

- ``state``: a number, a numeric string or a name (``"STATE_SETTLED"``) becomes an ``int``
  (:func:`recon.provider.states.read_state`, the reader notifications use too);
- currency and country codes in either case become upper case;
- timestamps as integers, floats, ``Decimal`` or numeric strings become aware UTC datetimes;
- amounts become ``Decimal`` exactly; a Python ``float`` is refused, because JSON must be
  parsed with :func:`recon.jsonparse.loads` (``parse_float=Decimal``) and a float means
  precision was already lost;
- unknown extra fields are kept (``extra="allow"``), unknown error codes stay strings.

Notification bodies (section 6) are read by :mod:`recon.ingest.notifications`, which keeps what it
cannot read as a finding instead of refusing the body.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    field_serializer,
    field_validator,
    model_validator,
)

from recon.constants import TxState
from recon.money import to_minor
from recon.provider.states import read_state
from recon.provider.values import (
    AMOUNT_DECIMALS,
    AMOUNT_LIMIT,
    Code,
    Epoch,
    Id,
    Int32,
    MaybeCode,
    MaybeId,
    Money,
    SessionStateValue,
    TxStateValue,
    int_like,
    storable_text,
)

STATEMENT_REFERENCE_MAX = 105
STATEMENT_REFERENCE_FORBIDDEN_COUNTRIES = frozenset({"SE", "FI"})


class _Payload(BaseModel):
    """Base of every payload: unknown fields kept, ids never case-folded."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The body to send: documented names, no unset optional fields, Decimal kept exact."""
        return self.model_dump(mode="python", exclude_none=True)


# --- authorisation (4.1, provider notes) --------------------------------------------------------


class AuthorizeRequest(_Payload):
    public_key: Id
    secret: SecretStr

    @field_serializer("secret", when_used="always")
    def _reveal(self, value: SecretStr) -> str:
        # Only ever serialised into the authorize request body.
        return value.get_secret_value()


class AuthorizeResponse(_Payload):
    access_token: SecretStr
    expires: Epoch | None = None
    refresh_token: SecretStr | None = None


# --- callbacks (2.4) ----------------------------------------------------------------------------


class CallbackSubscription(_Payload):
    url: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    session_state: SessionStateValue | None = None
    transaction_state: TxStateValue | None = None

    @model_validator(mode="after")
    def _one_state(self) -> CallbackSubscription:
        if (self.session_state is None) == (self.transaction_state is None):
            raise ValueError(
                "a callback carries exactly one of session_state and transaction_state"
            )
        return self


# --- sessions (2.1, 2.3, 4.3, 4.4) --------------------------------------------------------------


class BankAccountSelectionRequest(_Payload):
    country_id: Code | None = None
    brand_name: str | None = None
    merchant_reference: str | None = None
    locale: str | None = None
    redirect_uri: str | None = None
    deeplink_redirect: str | None = None
    callbacks: list[CallbackSubscription] = Field(default_factory=list)


class SessionCreated(_Payload):
    id: Id
    url: str | None = None
    token: str | None = None


class IdRequest(_Payload):
    """Body of ``session.get`` and ``transaction.get``."""

    id: Id


class BankAccount(_Payload):
    id: MaybeId = None
    holder: str | None = None
    bban: str | None = None
    iban: str | None = None


class Session(_Payload):
    id: Id
    state: SessionStateValue
    created: Epoch | None = None
    country_id: MaybeCode = None
    merchant_reference: str | None = None
    bank_account_id: MaybeId = None
    bank_account: BankAccount | None = None
    customer_id: str | None = None
    error_code: str | None = None
    # Not in the interface's field list ("further fields ... not shown"); the provider notes read
    # a session's transaction id with session.get, which is how a recorded session id is mended.
    transaction_id: MaybeId = None


# --- bank accounts (2.3, 4.5) -------------------------------------------------------------------


class HolderAddress(_Payload):
    city: str | None = None
    postal_code: str | None = None
    street_address: str | None = None
    country: Code | None = None


class BankAccountCreateRequest(_Payload):
    country_id: Code
    iban: Annotated[str, StringConstraints(min_length=5, max_length=64)]
    holder_firstname: str | None = None
    holder_lastname: str | None = None
    holder_dob: date | None = None
    holder_address: HolderAddress | None = None

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class BankAccountCreated(_Payload):
    id: Id


# --- withdrawals (4.6) --------------------------------------------------------------------------


class WithdrawalRequest(_Payload):
    amount: Money = Field(gt=0)
    bank_account_id: Id
    merchant_reference: Id
    statement_reference: (
        Annotated[str, StringConstraints(max_length=STATEMENT_REFERENCE_MAX)] | None
    ) = None
    callbacks: list[CallbackSubscription] = Field(default_factory=list)


class WithdrawalCreated(_Payload):
    id: Id
    eta: Epoch | None = None


# --- transactions (2.2, 4.7) --------------------------------------------------------------------


class BankAccountSummary(_Payload):
    bank_name: str | None = None
    bban: str | None = None
    country_id: MaybeCode = None
    iban: str | None = None


class Transaction(_Payload):
    """A ``transaction.get`` answer.

    ``id``, ``state``, ``type``, ``amount`` and currency are required: without them nothing can be
    reconciled, and the answer is malformed rather than a finding.
    """

    id: Id
    state: TxStateValue | None  # None only beside unrecognised_state
    type: Annotated[int, BeforeValidator(int_like), Int32]
    amount: Money
    currency_id: Code
    deposit_transaction_id: str | None = None
    session_id: str | None = None
    related_transaction_id: MaybeId = None
    original_transaction_id: MaybeId = None
    customer_id: str | None = None
    merchant_reference: str | None = None
    merchant_id: str | None = None
    fee_id: str | None = None
    approved: Epoch | None = None
    created: Epoch | None = None
    completed: Epoch | None = None
    credited: Epoch | None = None
    debited: Epoch | None = None
    settled: Epoch | None = None
    error_code: Annotated[str, StringConstraints(max_length=255)] | None = None
    message: str | None = None
    manual_approval_reason: str | None = None
    fee_amount: Money | None = None
    from_bank_account_id: str | None = None
    from_bank_account: BankAccountSummary | None = None
    to_bank_account_id: str | None = None
    to_bank_account: BankAccountSummary | None = None
    country_id: MaybeCode = None
    eta: Epoch | None = None
    statement_reference: str | None = None
    # A state name the interface does not document (e.g. "STATE_REFUNDED"), as sent; ``state`` is
    # then None. A finding for the reconciliation (pending, flagged), never a malformed answer.
    unrecognised_state: Annotated[str, StringConstraints(max_length=255)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _undocumented_state_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("state"), str):
            text = data["state"].strip()
            try:
                read_state(text, TxState)
            except ValueError:
                if text:
                    return {**data, "state": _UNDOCUMENTED, "unrecognised_state": data["state"]}
        return data

    @field_validator("state", mode="wrap")
    @classmethod
    def _state_not_null(cls, value: Any, handler: Any) -> Any:
        if value is _UNDOCUMENTED:
            return None
        if value is None:
            raise ValueError("state must be a number or a state name, not null")
        return handler(value)

    @model_validator(mode="after")
    def _storable(self) -> Transaction:
        # These fields go into the store's own columns (the raw body is stored JSON-escaped):
        # text a database cannot hold, or an amount no BIGINT of minor units can, makes the
        # answer malformed here instead of failing the run's write half-way.
        for name in _STORED_TEXT:
            value = getattr(self, name)
            if value is not None:
                storable_text(value, name)
        exponent = self.amount.as_tuple().exponent
        assert isinstance(exponent, int)  # Money is finite
        if abs(self.amount) >= AMOUNT_LIMIT or exponent < -AMOUNT_DECIMALS:
            raise ValueError(
                f"amount {self.amount} is outside what a payout can be "
                f"(below {AMOUNT_LIMIT:,} with at most {AMOUNT_DECIMALS} decimals)"
            )
        # Exact or refused: an amount that is no whole number of the currency's minor units
        # (10.005 EUR) is a malformed answer, never rounded.
        if len(self.currency_id) == 3:
            try:
                to_minor(self.amount, self.currency_id)
            except ValueError as exc:
                raise ValueError(f"amount: {exc}") from None
        # The fee is stored in minor units of the payout's currency: a negative fee, or one that
        # is no whole number of them, is as malformed as such an amount.
        if self.fee_amount is not None:
            if self.fee_amount < 0:
                raise ValueError(f"fee_amount {self.fee_amount} is negative")
            try:
                to_minor(self.fee_amount, self.currency_id)
            except ValueError as exc:
                raise ValueError(f"fee_amount: {exc}") from None
        return self


_UNDOCUMENTED = object()  # marks a state name moved to unrecognised_state
_STORED_TEXT = (
    "id",
    "fee_id",
    "error_code",
    "related_transaction_id",
    "original_transaction_id",
    "merchant_reference",
    "to_bank_account_id",
    "unrecognised_state",
)


# --- the transaction export (provider notes) ----------------------------------------------------


class ExportRequest(_Payload):
    """Body of ``transaction.csv_export``: settled in ``[settled_from, settled_to)``, epoch seconds;
    ``types`` the values of the file's type column to include (None: every type)."""

    settled_from: Annotated[int, Field(ge=0)]
    settled_to: Annotated[int, Field(ge=0)]
    types: list[int | str] | None = None


class ExportTaskCreated(_Payload):
    """The ``transaction.csv_export`` answer: the task's id."""

    id: Id


class ExportTask(_Payload):
    """An ``export_task.get`` answer. The provider numbers five states and publishes no names, so
    ``state`` is kept as given and only ``artifact_url`` says the file is ready (:attr:`done`)."""

    id: Id
    state: Any = None
    artifact_url: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = None
    rows: Annotated[int, Field(ge=0)] | None = None
    expires: Epoch | None = None

    @property
    def done(self) -> bool:
        """The task finished and its file can be fetched."""
        return self.artifact_url is not None
