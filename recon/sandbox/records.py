"""The sandbox's records (bank accounts, transactions, sessions, balance movements) and how they
are answered.

Records are plain mutable dataclasses owned by :class:`recon.sandbox.engine.Sandbox`. A
transaction caches its encoded ``transaction.get`` answer, because that is the hot path of a
benchmark; every change goes through :meth:`TxRecord.touch`, which drops the cache.

A transaction's *answer* can be made to differ from its record (the admin route
``/sandbox/transactions/{id}/answer``): some fields replaced (another ``merchant_reference``, an
undocumented ``state``), or the whole answer taken from another transaction. The record, and so
every state change, stays true underneath; only what ``transaction.get`` says changes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from recon import jsonparse

TEST_BANK_NAME = "Sandbox Test Bank"

_EURO_COUNTRIES = frozenset(
    {"AT", "BE", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR"}
    | {"IE", "IT", "LT", "LU", "LV", "MT", "NL", "PT", "SI", "SK"}
)
_CURRENCY_OF_COUNTRY = {"SE": "SEK", "DK": "DKK", "NO": "NOK", "GB": "GBP", "PL": "PLN"}
_IBAN_LENGTH = {"SE": 24, "FI": 18, "DK": 18, "NO": 15, "GB": 22, "PL": 28, "DE": 22, "NL": 18}
_MILLI = Decimal("0.001")


def new_id() -> str:
    """An opaque, case-sensitive identifier (mixed case on purpose: clients must not fold it)."""
    return secrets.token_urlsafe(15)


def epoch(seconds: float | None) -> Decimal | None:
    """Epoch seconds as a JSON number with millisecond precision (``jsonparse`` refuses floats)."""
    if seconds is None:
        return None
    return Decimal(repr(seconds)).quantize(_MILLI)


def currency_for_country(country: str | None, default: str) -> str:
    """The payout currency of a bank account's country (SE->SEK, FI->EUR, ...), else ``default``."""
    if country is None:
        return default
    if country in _CURRENCY_OF_COUNTRY:
        return _CURRENCY_OF_COUNTRY[country]
    return "EUR" if country in _EURO_COUNTRIES else default


def mask_iban(iban: str) -> str:
    """Only the leading country code and the last 4 characters stay visible."""
    return iban[:2] + "*" * max(len(iban) - 6, 0) + iban[-4:]


def mask_bban(bban: str) -> str:
    """Only the last 4 characters stay visible."""
    return "*" * max(len(bban) - 4, 0) + bban[-4:]


def fake_iban(country: str) -> str:
    """A random IBAN for ``country`` with a correct mod-97 check (accounts chosen on the page)."""
    length = _IBAN_LENGTH.get(country, 20)
    bban = "".join(secrets.choice("0123456789") for _ in range(length - 4))
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    check = 98 - int(digits) % 97
    return f"{country}{check:02d}{bban}"


@dataclass(slots=True)
class AccountRecord:
    """A bank account, created by ``bank_account.create`` or chosen in a session."""

    id: str
    merchant_id: str
    country_id: str
    iban: str
    holder: str

    @property
    def bban(self) -> str:
        return self.iban[4:]

    def masked(self) -> dict[str, Any]:
        """The 2.3 bank account object (``session.get``)."""
        return {
            "id": self.id,
            "holder": self.holder,
            "bban": mask_bban(self.bban),
            "iban": mask_iban(self.iban),
        }

    def summary(self) -> dict[str, Any]:
        """The 2.2 bank account summary (``to_bank_account`` of a transaction)."""
        return {
            "bank_name": TEST_BANK_NAME,
            "bban": mask_bban(self.bban),
            "country_id": self.country_id.lower(),
            "iban": mask_iban(self.iban),
        }


@dataclass(slots=True)
class TxRecord:
    """A transaction: a payout (type 1) or a returned-funds transaction (type 13)."""

    id: str
    merchant_id: str
    type: int
    state: int
    amount: Decimal
    currency: str
    created: float
    eta: float | None = None
    merchant_reference: str | None = None
    account: AccountRecord | None = None
    statement_reference: str | None = None
    customer_id: str | None = None
    error_code: str | None = None
    completed: float | None = None
    credited: float | None = None
    settled: float | None = None
    related_transaction_id: str | None = None
    original_transaction_id: str | None = None
    session_id: str | None = None
    fee_amount: Decimal | None = None  # charged when it settles (11.03: at creation)
    fee_id: str | None = None
    fee_charged: float | None = None  # when the fee was charged: its row's settled time
    fee_factor: int = 1  # 2 for the overcharging sandbox amount
    callbacks: dict[int, list[str]] = field(default_factory=dict)
    returns: list[str] = field(default_factory=list)  # ids of its type-13 returns, oldest first
    overrides: dict[str, Any] = field(default_factory=dict)  # fields the answer replaces
    answer_as: TxRecord | None = None  # answer with this transaction's answer instead
    refused_status: int | None = None  # 401/403: transaction.get refuses it to its own merchant
    _answer: bytes | None = None

    def touch(self) -> None:
        """Forget the cached answer after a change."""
        self._answer = None

    def record(self) -> dict[str, Any]:
        """The full 2.2 record, as ``transaction.get`` answers it."""
        account = self.account
        country = account.country_id.lower() if account else None
        body: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "state": self.state,
            "amount": self.amount,
            "currency_id": self.currency.lower(),
            "fee_amount": self.fee_amount,
            "fee_id": self.fee_id,
            "merchant_id": self.merchant_id,
            "merchant_reference": self.merchant_reference,
            "customer_id": self.customer_id,
            "created": epoch(self.created),
            "completed": epoch(self.completed),
            "credited": epoch(self.credited),
            "settled": epoch(self.settled),
            "eta": epoch(self.eta),
            "error_code": self.error_code,
            "message": self.statement_reference,
            "statement_reference": self.statement_reference,
            "related_transaction_id": self.related_transaction_id,
            "to_bank_account_id": account.id if account else None,
            "to_bank_account": account.summary() if account else None,
            "country_id": country,
        }
        if self.original_transaction_id is not None:
            body["original_transaction_id"] = self.original_transaction_id
        if self.session_id is not None:
            body["session_id"] = self.session_id
        return body

    def answer(self) -> bytes:
        """The encoded ``transaction.get`` answer, computed once per change."""
        if self.answer_as is None:
            return self._answer or self.own_answer()  # the hot path: one check, cached bytes
        return self.answer_as.own_answer()

    def own_answer(self) -> bytes:
        """The record with its overrides applied, encoded (never another transaction's)."""
        if self._answer is None:
            body = self.record()
            if self.overrides:
                body.update(self.overrides)
            self._answer = jsonparse.dumpb(body)
        return self._answer


@dataclass(slots=True)
class MovementRecord:
    """A merchant's own money in or out of its balance at the provider (an admin route books it):
    a top-up or a merchant withdrawal. Only the export shows it; ``transaction.get`` does not."""

    id: str
    merchant_id: str
    kind: str  # the export's type column: "top_up" or "merchant_withdrawal"
    amount: Decimal
    currency: str
    settled: float
    created: float
    merchant_reference: str | None = None


@dataclass(slots=True)
class SessionRecord:
    """A bank account selection session; ``state`` is 1 (pending) until it ends in 10, 11 or 12."""

    id: str
    merchant_id: str
    token: str
    created: float
    country_id: str | None
    merchant_reference: str | None
    redirect_uri: str | None
    brand_name: str | None
    locale: str | None
    customer_id: str | None = None
    state: int = 1
    error_code: str | None = None
    ended: float | None = None
    account: AccountRecord | None = None
    transaction_id: str | None = None  # the payout a withdrawal session belongs to
    callbacks: dict[int, list[str]] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.state != 1

    def record(self) -> dict[str, Any]:
        """The 2.1 record, as ``session.get`` answers it."""
        body: dict[str, Any] = {
            "id": self.id,
            "state": self.state,
            "created": epoch(self.created),
            "country_id": self.country_id.lower() if self.country_id else None,
            "merchant_reference": self.merchant_reference,
            "customer_id": self.customer_id,
            "error_code": self.error_code,
        }
        if self.account is not None:
            body["bank_account_id"] = self.account.id
            body["bank_account"] = self.account.masked()
        if self.transaction_id is not None:
            body["transaction_id"] = self.transaction_id
        return body
