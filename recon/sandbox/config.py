"""Configuration of the sandbox: its merchants, fee schedule, export cap, timings and faults.

The defaults are the embedded demo: one merchant whose keys equal ``recon.settings`` defaults, so
``recon`` talks to a freshly started sandbox without any configuration.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from recon.money import normalise_currency, parse_decimal

DEFAULT_MERCHANT_ID = "sandbox-merchant"
DEFAULT_PUBLIC_KEY = "sandbox-public-key"
DEFAULT_SECRET = "sandbox-secret"  # noqa: S105 - the documented demo credential, not a secret
DEFAULT_PORT = 8700
DEFAULT_FEE_FIXED = Decimal("0.25")
DEFAULT_FEE_PERCENT = Decimal("0.50")
EXPORT_CAP = 100_000  # the provider's documented cap on an export's rows
# An account's name is its merchant_id, in paths (/sandbox/accounts/NAME) and in urls' {account}.
ACCOUNT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class Merchant(BaseModel):
    """A merchant the sandbox knows: its API keys and its back-office urls.

    ``returned_funds_url`` receives returned-funds notifications (6.4). ``callback_url`` is where
    a transaction notification triggered through the admin route goes when the payout subscribed
    no url for that state (payouts themselves are called back only at the urls they subscribed).
    """

    model_config = ConfigDict(frozen=True)

    merchant_id: str = Field(min_length=1)
    public_key: str = Field(min_length=1)
    secret: SecretStr
    returned_funds_url: str | None = None
    callback_url: str | None = None
    default_currency: str = "EUR"

    @field_validator("default_currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        return normalise_currency(value)


class FeeSchedule(BaseModel):
    """The sandbox's price of a payout: ``fixed`` plus ``percent`` of the amount, in the payout's
    currency, rounded half-even to the currency's minor unit (:mod:`recon.sandbox.fees`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fixed: Decimal = Field(DEFAULT_FEE_FIXED, ge=0, allow_inf_nan=False)
    percent: Decimal = Field(DEFAULT_FEE_PERCENT, ge=0, le=100, allow_inf_nan=False)


def parse_account(text: str) -> Merchant:
    """``NAME:PUBLIC_KEY:SECRET`` as an account (the secret may hold ``:``). ``ValueError``
    says what is wrong without showing the secret."""
    parts = text.split(":", 2)
    if len(parts) != 3 or not all(parts):
        raise ValueError("expected NAME:PUBLIC_KEY:SECRET, three non-empty parts joined by ':'")
    name, public_key, secret = parts
    if not ACCOUNT_NAME.fullmatch(name):
        raise ValueError(
            f"the name {name[:70]!r} must be letters, digits, '-' and '_' (at most 64),"
            " starting with a letter or digit"
        )
    if public_key != public_key.strip():
        raise ValueError(f"the public key of {name!r} starts or ends with a space")
    return Merchant(merchant_id=name, public_key=public_key, secret=SecretStr(secret))


def parse_fee(text: str) -> FeeSchedule:
    """``FIXED,PERCENT`` (``0.25,0.50``) as a fee schedule; ``ValueError`` says what is wrong."""
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"expected FIXED,PERCENT such as 0.25,0.50, got {text[:40]!r}")
    try:
        fixed, percent = (parse_decimal(part) for part in parts)
    except ValueError as exc:
        raise ValueError(f"expected FIXED,PERCENT such as 0.25,0.50: {exc}") from None
    if fixed < 0:
        raise ValueError(f"the fixed part {fixed} must be 0 or more")
    if not 0 <= percent <= 100:
        raise ValueError(f"the percent {percent} must be between 0 and 100")
    return FeeSchedule(fixed=fixed, percent=percent)


def default_merchant() -> Merchant:
    """The demo merchant (``sandbox-merchant`` with ``sandbox-public-key``/``sandbox-secret``)."""
    return Merchant(
        merchant_id=DEFAULT_MERCHANT_ID,
        public_key=DEFAULT_PUBLIC_KEY,
        secret=SecretStr(DEFAULT_SECRET),
    )


class FaultConfig(BaseModel):
    """Faults injected into the ``/api`` operations (never into admin routes or the hosted page).

    Every share is a probability between 0 and 1, drawn from a ``random.Random(seed)`` so a run is
    reproducible. ``token_lifetime_seconds``, when set, overrides the sandbox's token lifetime for
    tokens issued from then on.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency_ms: float = Field(0.0, ge=0)
    latency_jitter_ms: float = Field(0.0, ge=0)
    error_rate: float = Field(0.0, ge=0, le=1, description="share of 5xx answers")
    error_statuses: tuple[int, ...] = (500, 502, 503)
    rate_429: float = Field(0.0, ge=0, le=1, description="share of 429 answers")
    retry_after_seconds: int = Field(1, ge=0)
    rate_limit_rps: float | None = Field(None, gt=0, description="requests per second, then 429")
    token_lifetime_seconds: float | None = Field(None, gt=0)
    malformed_rate: float = Field(0.0, ge=0, le=1, description="share of 200s with broken JSON")
    missing_state_rate: float = Field(0.0, ge=0, le=1, description="share of 200s without state")
    slow_rate: float = Field(0.0, ge=0, le=1, description="share of answers delayed slow_seconds")
    slow_seconds: float = Field(5.0, ge=0)
    # Faults aimed at the payouts' own calls: a failed merchant.authorize stops a run at once.
    spare_authorize: bool = Field(False, description="answer merchant.authorize without faults")
    # A create whose answer is lost: the payout is made and its callbacks go out, but
    # every create with one of these merchant references is answered 504, so only the callback
    # (or the back office) tells the merchant its id.
    drop_create_answer: tuple[str, ...] = Field(
        (), description="merchant references whose create answer is dropped (the payout is made)"
    )
    # Drawn once per export task when it is requested (not per request: kept out of ``active``).
    export_failure_rate: float = Field(
        0.0, ge=0, le=1, description="share of export tasks that fail instead of finishing"
    )
    seed: int = 0

    @field_validator("error_statuses")
    @classmethod
    def _server_errors(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or any(not 500 <= status <= 599 for status in value):
            raise ValueError("error_statuses must be a non-empty list of 5xx statuses")
        return value

    @property
    def active(self) -> bool:
        """Whether any per-request fault is switched on (the hot path skips all of them if not)."""
        return bool(
            self.latency_ms
            or self.latency_jitter_ms
            or self.error_rate
            or self.rate_429
            or self.rate_limit_rps
            or self.malformed_rate
            or self.missing_state_rate
            or self.slow_rate
        )

    def updated(self, changes: dict[str, Any]) -> FaultConfig:
        """A copy with ``changes`` applied and validated (``ValueError`` names a wrong field)."""
        return FaultConfig.model_validate({**self.model_dump(), **changes})


class SandboxConfig(BaseModel):
    """Everything a sandbox is built from. ``callback_transport`` lets tests deliver in-process."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    merchants: list[Merchant] = Field(default_factory=lambda: [default_merchant()], min_length=1)
    fee: FeeSchedule = Field(default_factory=FeeSchedule)
    export_cap: int = Field(EXPORT_CAP, ge=1)
    token_lifetime_seconds: float = Field(6 * 3600.0, gt=0)
    settle_after_seconds: float = Field(60.0, ge=0)
    base_url: str = f"http://127.0.0.1:{DEFAULT_PORT}"
    faults: FaultConfig = Field(default_factory=FaultConfig)
    admin_enabled: bool = True
    callback_transport: httpx.AsyncBaseTransport | None = None
    callback_timeout_seconds: float = Field(10.0, gt=0)
    background_interval_seconds: float = Field(0.25, gt=0)

    @field_validator("merchants")
    @classmethod
    def _unique(cls, value: list[Merchant]) -> list[Merchant]:
        keys = [m.public_key for m in value]
        ids = [m.merchant_id for m in value]
        if len(set(keys)) != len(keys) or len(set(ids)) != len(ids):
            raise ValueError("merchant ids and public keys must be unique")
        return value
