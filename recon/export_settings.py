"""The ``[export]`` table of the configuration: how to read the provider's transaction export.

```toml
[export]
delimiter = ";"
decimal_separator = ","
encoding = "utf-8"
times = "epoch"            # or a strftime format such as "%Y-%m-%d %H:%M:%S"
time_zone = "UTC"          # for times written without an offset
money_out = "positive"     # or "negative": how the file writes money leaving the balance

[export.columns]           # recon's name = the file's header
transaction_id = "Transaction ID"
type = "Type"
state = "Status"
amount = "Amount"
currency = "Currency"
merchant_reference = "Merchant reference"
settled = "Settled at"
# also: fee_amount, fee_id, related_transaction_id, created (optional)

[export.types]             # recon's kind = the values of the type column that mean it
payout = ["1"]
returned_funds = ["13"]
fee = ["Fee"]
top_up = ["Top-up"]
merchant_withdrawal = ["Merchant withdrawal"]
```

Without the table, or for a key it leaves out, the mapping is the sandbox's own file
(:mod:`recon.sandbox.exports`, spelled here again: the settings import no sandbox; a test keeps
the two equal). An ``[export.columns]`` table that is given is the whole of the
columns: ``transaction_id``, ``type``, ``state``, ``amount`` and ``currency`` are required, the
rest are read only when named. Likewise an ``[export.types]`` table that is given is the whole of
the types: a kind it leaves out has no values.

``money_out``: recon keeps every amount in its direction's sense, money out as a positive figure
(a payout of 10.00 is 10.00 paid out, a fee of 0.30 is 0.30 charged). A file that writes money
leaving the balance with a minus (``-10.00`` for a payout) says ``money_out = "negative"``: the
amount and fee_amount of payouts, fees and merchant withdrawals are then read with their sign
turned, so a positive one among them (a fee given back) lowers the money out.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from recon.export_rows import ExportKind
from recon.textsafe import one_line

EPOCH = "epoch"
MAX_HEADER = 200
Header = str


class ExportColumns(BaseModel):
    """``[export.columns]``: recon's name = the file's header (default: the sandbox's headers)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transaction_id: Header = Field(min_length=1, max_length=MAX_HEADER)
    type: Header = Field(min_length=1, max_length=MAX_HEADER)
    state: Header = Field(min_length=1, max_length=MAX_HEADER)
    amount: Header = Field(min_length=1, max_length=MAX_HEADER)
    currency: Header = Field(min_length=1, max_length=MAX_HEADER)
    merchant_reference: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)
    settled: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)
    created: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)
    fee_amount: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)
    fee_id: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)
    related_transaction_id: Header | None = Field(None, min_length=1, max_length=MAX_HEADER)

    @field_validator("*")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return None if value is None else one_line(value)

    def named(self) -> dict[str, str]:
        """Recon's name -> the file's header, for each column the mapping reads."""
        return {name: header for name, header in self.model_dump().items() if header is not None}


REQUIRED_COLUMNS: tuple[str, ...] = ("transaction_id", "type", "state", "amount", "currency")

SANDBOX_COLUMNS = ExportColumns(
    transaction_id="id",
    type="type",
    state="state",
    amount="amount",
    currency="currency_id",
    merchant_reference="merchant_reference",
    settled="settled",
    created="created",
    fee_amount="fee_amount",
    fee_id="fee_id",
    related_transaction_id="related_transaction_id",
)


class ExportTypes(BaseModel):
    """``[export.types]``: recon's kind = the type column's values that mean it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    payout: tuple[str, ...] = ()
    returned_funds: tuple[str, ...] = ()
    fee: tuple[str, ...] = ()
    top_up: tuple[str, ...] = ()
    merchant_withdrawal: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_kind_per_value(self) -> ExportTypes:
        seen: dict[str, str] = {}
        for kind, values in self.model_dump().items():
            for value in values:
                key = value.strip()
                if key in seen and seen[key] != kind:
                    raise ValueError(f"the type {value!r} is under both {seen[key]} and {kind}")
                seen[key] = kind
        return self

    def kinds(self) -> dict[str, ExportKind]:
        """The type column's value (as written, without surrounding spaces) -> its kind."""
        return {
            value.strip(): ExportKind(kind)
            for kind, values in self.model_dump().items()
            for value in values
        }


SANDBOX_TYPES = ExportTypes(
    payout=("1",),
    returned_funds=("13",),
    fee=("fee",),
    top_up=("top_up",),
    merchant_withdrawal=("merchant_withdrawal",),
)


class ExportMapping(BaseModel):
    """``[export]``: how the provider's export file is read (default: the sandbox's file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    delimiter: str = Field(",", min_length=1, max_length=1)
    decimal_separator: str = Field(".", pattern=r"^[.,]$")
    encoding: str = "utf-8"
    times: str = Field(EPOCH, min_length=1, max_length=64)
    time_zone: str = "UTC"
    money_out: Literal["positive", "negative"] = "positive"
    columns: ExportColumns = SANDBOX_COLUMNS
    types: ExportTypes = SANDBOX_TYPES

    @field_validator("delimiter")
    @classmethod
    def _a_separator(cls, value: str) -> str:
        if value in ('"', "\r", "\n") or value.isalnum():
            raise ValueError("must be one character that is not a letter, digit, quote or newline")
        return value

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        try:
            codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown encoding {value!r} (e.g. utf-8, cp1252, utf-16)") from None
        return value

    @field_validator("times")
    @classmethod
    def _epoch_or_format(cls, value: str) -> str:
        if value != EPOCH and "%" not in value:
            raise ValueError('"epoch" or a strftime format such as "%Y-%m-%d %H:%M:%S"')
        return value

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r} (e.g. UTC, Europe/Stockholm)") from None
        return value

    @property
    def zone(self) -> ZoneInfo:
        """``time_zone`` as a zone: where a time written without an offset is read."""
        return ZoneInfo(self.time_zone)

    def __str__(self) -> str:
        """One line, as ``recon config check`` shows the setting."""
        columns = ", ".join(f"{name}={header!r}" for name, header in self.columns.named().items())
        return (
            f"delimiter {self.delimiter!r}, decimal_separator {self.decimal_separator!r}, "
            f"encoding {self.encoding}, times {self.times!r}, time_zone {self.time_zone}, "
            f"money_out {self.money_out}; "
            f"columns: {columns}"
        )


def table_problem(
    table: str, loc: Sequence[str], kind: str, message: str, value: object
) -> tuple[str, str]:
    """A problem at ``loc`` inside ``[export]``: its dotted key, and what is wrong (an unknown
    key: the keys that table has; a wrong value: the value, since a header is no secret)."""
    key = ".".join([table, *loc])
    if kind == "extra_forbidden":
        model: type[BaseModel] = ExportMapping
        if len(loc) == 2:
            model = ExportColumns if loc[0] == "columns" else ExportTypes
        inside = ".".join([table, *loc[:-1]])
        return key, f"unknown key in [{inside}] (the keys: {', '.join(model.model_fields)})"
    if kind == "missing":
        return key, "required when [export.columns] is given"
    got = repr(value)
    shown = "" if isinstance(value, dict) or got in message else f" (got {got})"
    return key, f"{message}{shown}"
