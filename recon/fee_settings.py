"""The ``[[fees]]`` entries of the configuration: the agreed price of payouts, checked on reading.

Each entry is read into the core's :class:`~recon.reconcile.pricing.FeeEntry`. Amounts (``fixed``,
``min``, ``max``, ``percent``) are exact: write them as strings (``"0.25"``) or numbers (a TOML
number is read by its shortest text, ``0.25``). An entry is refused, naming it, when its currency
is not an ISO 4217 one, its rounding is unknown, ``percent`` is above 100 or an amount below 0,
``min`` is above ``max``, an amount has more decimals than the currency, ``valid_to`` is before
``valid_from``, or when two entries could price one payout (their dates, currency and accounts
meet).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from recon.money import normalise_currency, to_minor
from recon.reconcile.pricing import FeeEntry, Rounding, overlapping

_AMOUNTS = ("fixed", "min", "max")


class FeeSetting(BaseModel):
    """One ``[[fees]]`` entry as written in the configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str
    valid_from: date
    valid_to: date | None = None
    account: str | None = None
    fixed: Decimal = Decimal(0)
    percent: Decimal = Decimal(0)
    min: Decimal | None = None
    max: Decimal | None = None
    rounding: str = Rounding.HALF_EVEN.value

    @field_validator("fixed", "percent", "min", "max", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        """Numbers by their text: a TOML float is read by its shortest form (``0.25``)."""
        if isinstance(value, bool):
            raise ValueError("an amount, not true or false")
        if isinstance(value, int | float | str):
            try:
                number = Decimal(str(value).strip())
            except InvalidOperation:
                raise ValueError(f"not a number: {value!r}") from None
            if not number.is_finite():
                raise ValueError(f"not a finite number: {value!r}")
            return number
        return value

    @model_validator(mode="after")
    def _sound(self) -> FeeSetting:
        name = self.entry_name()
        try:
            currency = normalise_currency(self.currency)
        except ValueError as exc:
            raise ValueError(f"fee entry {name}: {exc}") from None
        problems = []
        if self.rounding not in {r.value for r in Rounding}:
            allowed = ", ".join(r.value for r in Rounding)
            problems.append(f"unknown rounding {self.rounding!r} (one of {allowed})")
        if not Decimal(0) <= self.percent <= Decimal(100):
            problems.append(f"percent {self.percent} is not between 0 and 100")
        for field in _AMOUNTS:
            value = getattr(self, field)
            if value is None:
                continue
            if value < 0:
                problems.append(f"{field} {value} is below 0")
                continue
            try:
                to_minor(value, currency)
            except ValueError as exc:
                problems.append(f"{field}: {exc}")
        if self.min is not None and self.max is not None and self.min > self.max:
            problems.append(f"min {self.min} is above max {self.max}")
        if self.valid_to is not None and self.valid_to < self.valid_from:
            problems.append(f"valid_to {self.valid_to} is before valid_from {self.valid_from}")
        if problems:
            raise ValueError(f"fee entry {name}: " + "; ".join(problems))
        return self

    def entry_name(self) -> str:
        """The entry as people find it in their file: valid_from, currency and account."""
        account = self.account or "all accounts"
        return f"(valid_from {self.valid_from}, {self.currency.upper()}, {account})"

    def summary(self) -> str:
        """One line: ``EUR 2026-11-01..2026-11-15 0.25 + 0.50 % (half_even)``."""
        dates = f"{self.valid_from}..{self.valid_to or ''}"
        bounds = "".join(
            f" {name} {value}" for name, value in (("min", self.min), ("max", self.max)) if value
        )
        account = f" account {self.account}" if self.account else ""
        return (
            f"{self.currency.upper()} {dates}{account} {self.fixed} + {self.percent} %{bounds}"
            f" ({self.rounding})"
        )

    def entry(self) -> FeeEntry:
        """The core's entry (checked already)."""
        return FeeEntry(
            currency=normalise_currency(self.currency),
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            account=self.account,
            fixed=self.fixed,
            percent=self.percent,
            min=self.min,
            max=self.max,
            rounding=Rounding(self.rounding),
        )


def no_overlap(settings: list[FeeSetting]) -> list[FeeSetting]:
    """The entries, unless two of them could price one payout (then ``ValueError`` names both)."""
    entries = tuple(s.entry() for s in settings)
    pairs = overlapping(entries)
    if pairs:
        a, b = pairs[0]
        first, second = entries.index(a), entries.index(b)
        raise ValueError(
            f"fee entries {settings[first].entry_name()} and {settings[second].entry_name()}"
            " overlap: both would price a payout in their currency created on a day both cover"
            " (end one with valid_to before the other's valid_from)"
        )
    return settings


def fee_entries(settings: list[FeeSetting]) -> tuple[FeeEntry, ...]:
    """The configured entries as the core reads them."""
    return tuple(s.entry() for s in settings)
