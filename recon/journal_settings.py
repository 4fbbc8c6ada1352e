"""The ``[journal]`` table of the configuration: the ledger's account codes, the export's options.

```toml
[journal]
sie_series = "R"               # the SIE #VER series (per account: [accounts.NAME.journal])
xero_date_format = "%d/%m/%Y"  # how Xero's Date column is written
xero_tax_rate = "Tax Exempt"   # Xero's TaxRate column: the tax rate's name in the organisation

[journal.accounts]             # the ledger's code for each account the entries book to
payouts_payable = "2890"
provider_balance = "1940"
fee_expense = "6570"
suspense = "2999"

[accounts.nordlys.journal.accounts]   # one provider account's own codes (the rest: [journal])
provider_balance = "1941"
```

Without ``[journal]`` no entries are made. A code is one line of at most 64 characters; a code
an event needs and nobody set refuses the night (exit 2) naming the event and the setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recon.reconcile.journal import Role
from recon.textsafe import one_line

MAX_CODE = 64


class JournalCodes(BaseModel):
    """``[journal.accounts]``: the ledger's code per role (unset: not configured here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    payouts_payable: str | None = Field(None, min_length=1, max_length=MAX_CODE)
    provider_balance: str | None = Field(None, min_length=1, max_length=MAX_CODE)
    fee_expense: str | None = Field(None, min_length=1, max_length=MAX_CODE)
    suspense: str | None = Field(None, min_length=1, max_length=MAX_CODE)

    @field_validator("*")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is not None:
            one_line(value)
            if value != value.strip():
                raise ValueError("starts or ends with a space")
        return value

    def by_role(self) -> dict[Role, str]:
        return {Role(name): code for name, code in self.model_dump().items() if code is not None}


class JournalSetting(BaseModel):
    """``[journal]``: the codes every provider account books to, and the export's options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accounts: JournalCodes = JournalCodes()
    sie_series: str = Field("R", pattern=r"^[A-Za-z0-9]{1,8}$")
    xero_date_format: str = Field("%d/%m/%Y", min_length=2, max_length=32)
    xero_tax_rate: str = Field("Tax Exempt", min_length=1, max_length=64)

    def summary(self) -> str:
        """One line: the codes set in ``[journal.accounts]`` and the export's options."""
        codes = ", ".join(f"{role} {code}" for role, code in self.accounts.by_role().items())
        return (
            f"codes: {codes or '(none)'}; sie_series {self.sie_series}, xero_date_format "
            f"{self.xero_date_format}, xero_tax_rate {self.xero_tax_rate}"
        )


class AccountJournal(BaseModel):
    """``[accounts.NAME.journal]``: one provider account's own codes and SIE series."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accounts: JournalCodes = JournalCodes()
    sie_series: str | None = Field(None, pattern=r"^[A-Za-z0-9]{1,8}$")


@dataclass(frozen=True)
class AccountBooks:
    """What one provider account's journal is made and exported with."""

    codes: Mapping[Role, str]
    setting: str  # where its codes are configured, as an error names it
    sie_series: str


def account_books(
    journal: JournalSetting | None, name: str, own: AccountJournal | None
) -> AccountBooks | None:
    """Provider account ``name``'s codes: its own table's over ``[journal.accounts]``; ``None``
    without ``[journal]`` (no entries are made)."""
    if journal is None:
        return None
    codes = journal.accounts.by_role()
    setting = "[journal.accounts]"
    series = journal.sie_series
    if own is not None:
        codes |= own.accounts.by_role()
        setting = f"[accounts.{name}.journal.accounts] or [journal.accounts]"
        series = own.sie_series or series
    return AccountBooks(codes=codes, setting=setting, sie_series=series)


def table_problem(
    table: str, loc: Sequence[str], kind: str, message: str, value: object
) -> tuple[str, str]:
    """A problem at ``loc`` inside the journal table ``table`` (``journal`` or
    ``accounts.NAME.journal``): its dotted key, and what is wrong (an unknown key: the keys that
    table has; a wrong value: the value, since a code is no secret)."""
    key = ".".join([table, *loc])
    if kind == "extra_forbidden":
        model: type[BaseModel] = JournalCodes
        if len(loc) == 1:
            model = JournalSetting if table == "journal" else AccountJournal
        inside = ".".join([table, *loc[:-1]])
        return key, f"unknown key in [{inside}] (the keys: {', '.join(model.model_fields)})"
    got = repr(value)
    shown = "" if isinstance(value, dict) or got in message else f" (got {got})"
    return key, f"{message}{shown}"
