"""The demo's two brands: one merchant's two provider accounts, served by one in-process sandbox.

Nordlys Travel pays refunds out to customers in seven countries (five currencies) and carries the
night's story (every sandbox amount, returns, double payments, a lost create); Fjord Home pays out
in two currencies, NOK and EUR, a tenth as many payouts, with a return and a payout paid after a
failure of its own. Each brand is an ``[accounts.NAME]`` table of the demo's settings and a
merchant of the sandbox, with keys of its own, and the receiver hears each at its own
``/callbacks/NAME``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from recon.demo.merchant import COUNTRIES
from recon.sandbox.config import Merchant
from recon.settings import Settings


@dataclass(frozen=True, slots=True)
class Brand:
    """One provider account of the demo merchant: its name, label, keys and customers' countries."""

    name: str
    label: str
    public_key: str
    secret: str
    countries: tuple[str, ...]
    journal: dict[str, Any] | None = None  # its own [accounts.NAME.journal] table

    def merchant(self, receiver_url: str) -> Merchant:
        """The brand as the sandbox serves it: its returned funds told at its own callback URL."""
        return Merchant(
            merchant_id=self.name,
            public_key=self.public_key,
            secret=SecretStr(self.secret),
            returned_funds_url=f"{self.callback_url(receiver_url)}?via=back-office",
        )

    def callback_url(self, receiver_url: str) -> str:
        return f"{receiver_url}/callbacks/{self.name}"

    def table(self, sandbox_url: str) -> dict[str, Any]:
        """The brand's ``[accounts.NAME]`` table, pointing at the sandbox."""
        table: dict[str, Any] = {
            "label": self.label,
            "api_base_url": sandbox_url,
            "public_key": self.public_key,
            "secret": self.secret,
        }
        if self.journal is not None:
            table["journal"] = self.journal
        return table


NORDLYS = Brand(
    name="nordlys",
    label="Nordlys Travel (SE)",
    public_key="pk_demo_nordlys_7c21",
    secret="sk_demo_nordlys_e90b",  # noqa: S106 - the demo's documented credential
    countries=COUNTRIES,
    # Its own money at the provider is its own ledger account, and its vouchers their own series.
    journal={"accounts": {"provider_balance": "1941"}, "sie_series": "N"},
)
FJORD = Brand(
    name="fjord",
    label="Fjord Home (NO/EU)",
    public_key="pk_demo_fjord_3a58",
    secret="sk_demo_fjord_41d6",  # noqa: S106 - the demo's documented credential
    countries=("NO", "FI", "NO", "DE", "NO", "NL"),  # NOK and EUR
    journal={"sie_series": "F"},
)
BRANDS = (NORDLYS, FJORD)
# The ledger's accounts the demo books to (a Swedish BAS chart): what is owed to customers, the
# money held at the provider, its fees, and what is not yet explained.
JOURNAL: dict[str, Any] = {
    "accounts": {
        "payouts_payable": "2890",
        "provider_balance": "1940",
        "fee_expense": "6570",
        "suspense": "2999",
    },
}


class DemoSettings(Settings):
    """The demo's settings, all of them its own: nothing is read from the environment, a file or
    a credentials directory (a ``RECON_API_*`` left in the shell would contradict the brands'
    accounts, and the demo's night is the same wherever it runs)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def demo_settings(
    database_url: str, out_dir: Path, fees: list[dict[str, Any]], sandbox_url: str | None = None
) -> Settings:
    """The demo's settings, built in code: its store, reports and price, and (given the
    sandbox's URL) both brands as accounts, and the ledger's accounts their entries book to."""
    accounts = {b.name: b.table(sandbox_url) for b in BRANDS} if sandbox_url else {}
    return DemoSettings(
        database_url=database_url,
        out_dir=out_dir,
        fees=fees,
        accounts=accounts,
        journal=JOURNAL if sandbox_url else None,
    )
