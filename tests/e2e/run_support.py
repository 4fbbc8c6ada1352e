"""Helpers for the `recon run` end-to-end tests: a served sandbox and receiver, payouts, the CLI.

The sandbox and the callback receiver are the real apps served over loopback HTTP in threads;
payouts are created through recon's own provider client, stored with `recon import payouts`, and
`recon run` / `recon report` run as subprocesses, exactly as cron runs them.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from recon.ingest.receiver import create_receiver_app
from recon.jsonparse import dumpb, loads
from recon.provider.client import ProviderClient
from recon.provider.models import BankAccountCreateRequest, WithdrawalRequest
from recon.sandbox.app import create_app
from recon.sandbox.config import FaultConfig, SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from recon.settings import Settings

RECON = str(Path(sys.executable).with_name("recon"))
CSV_COLUMNS = (
    "transaction_id", "merchant_reference", "amount", "currency", "bank_account_id",
    "customer_id", "country_id", "created", "eta",
)  # fmt: skip
IBANS = {
    "DE": "DE89370400440532013000",
    "SE": "SE4550000000058398257466",
    "DK": "DK5000400440116243",
    "NO": "NO9386011117947",
    "GB": "GB29NWBK60161331926819",
}
# Spreadsheet-formula guard of the CSV renderer: a text cell starting with one of these gets "'".
_GUARDED = ("=", "+", "-", "@")


# --- the provider and the receiver, served on loopback ------------------------------------------


@dataclass
class World:
    """A served sandbox (and receiver, when asked for), with an admin client on the sandbox."""

    sandbox_url: str
    receiver_url: str | None
    admin: httpx.Client

    def now(self) -> str:
        """The sandbox clock's "now" as epoch seconds, the form `--as-of` takes."""
        answer = self.admin.get("/sandbox/clock")
        answer.raise_for_status()
        return format(loads(answer.content)["now"], "f")

    def advance(self, seconds: int) -> None:
        """Move the sandbox clock on and process everything that became due."""
        self.post("/sandbox/clock/advance", {"seconds": seconds})

    def advance_to_hour(self, hour: int) -> None:
        """Move the sandbox clock on to the next ``hour``:00 UTC, so that a test's nights fall on
        the same calendar days whatever the time the test starts (schedule days are calendar
        days; recon_env leaves RECON_TIMEZONE at UTC)."""
        seconds = (hour * 3600 - float(self.now())) % 86400
        self.advance(int(seconds) + 1)

    def faults(self, **changes: Any) -> None:
        """Change the sandbox's injected faults (the fields given only; shares are floats)."""
        answer = self.admin.post("/sandbox/faults", json=changes)
        assert answer.status_code == 200, answer.text

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = self.admin.post(
            path, content=dumpb(body or {}), headers={"content-type": "application/json"}
        )
        assert answer.status_code == 200, f"{path}: {answer.status_code} {answer.text}"
        return loads(answer.content)

    def deliveries(self) -> list[dict[str, Any]]:
        """Every callback and notification attempt the sandbox made."""
        found: list[dict[str, Any]] = loads(self.admin.get("/sandbox/deliveries").content)[
            "deliveries"
        ]
        return found

    def settings(self) -> Settings:
        """Settings for recon's client in this (test) process, talking to the sandbox."""
        return Settings(api_base_url=self.sandbox_url, retry_initial_wait=0)


@contextmanager
def served_world(
    database_url: str,
    *,
    settle_after: float = 300.0,
    receiver: bool = True,
    faults: FaultConfig | None = None,
) -> Iterator[World]:
    """Serve the sandbox (and the callback receiver storing into ``database_url``)."""
    with ExitStack() as stack:
        receiver_url = None
        merchant = default_merchant()
        if receiver:
            app = create_receiver_app(Settings(database_url=database_url))
            receiver_url = stack.enter_context(serve_in_thread(app))
            merchant = merchant.model_copy(
                update={"returned_funds_url": f"{receiver_url}/callbacks"}
            )
        config = SandboxConfig(
            merchants=[merchant],
            settle_after_seconds=settle_after,
            faults=faults or FaultConfig(),
        )
        sandbox_url = stack.enter_context(serve_in_thread(create_app(config)))
        admin = stack.enter_context(httpx.Client(base_url=sandbox_url, timeout=30))
        yield World(sandbox_url, receiver_url, admin)


def post_notification(
    receiver_url: str, body: dict[str, Any] | bytes, *, path: str = "/callbacks"
) -> str:
    """POST one notification body to the receiver as the provider would; its answer's status."""
    content = body if isinstance(body, bytes) else dumpb(body)
    answer = httpx.post(
        f"{receiver_url}{path}",
        content=content,
        headers={"content-type": "application/json", "user-agent": "Service Callback"},
    )
    assert answer.status_code == 200, answer.text
    status: str = answer.json()["status"]
    return status


# --- payouts at the provider and in the merchant's records --------------------------------------


@dataclass(frozen=True)
class Spec:
    """A payout to create: amount, the account's country, and a name for the account to reuse."""

    amount: str
    country: str = "DE"
    account: str | None = None  # payouts naming the same account share one bank account
    reference: str | None = None
    bank_account_id: str | None = None  # an existing bank account (instead of a new one)


@dataclass
class Payout:
    """A payout the sandbox created, with what the merchant's record of it holds."""

    transaction_id: str
    reference: str
    amount: Decimal
    currency: str
    bank_account_id: str
    customer_id: str
    country_id: str
    created: datetime
    eta: datetime | None
    extra: dict[str, str] = field(default_factory=dict)

    def csv_row(self, **overrides: str) -> dict[str, str]:
        """The merchant's CSV row of this payout (``overrides`` change the local record)."""
        row = {
            "transaction_id": self.transaction_id,
            "merchant_reference": self.reference,
            "amount": f"{self.amount:.2f}",
            "currency": self.currency,
            "bank_account_id": self.bank_account_id,
            "customer_id": self.customer_id,
            "country_id": self.country_id,
            "created": self.created.isoformat(),
            "eta": self.eta.isoformat() if self.eta else "",
        }
        row.update(overrides)
        return row


def create_payouts(world: World, specs: Sequence[Spec], *, prefix: str = "p") -> list[Payout]:
    """Create each payout through recon's provider client (bank accounts first), in order."""
    return asyncio.run(_create_payouts(world.settings(), specs, prefix))


async def _create_payouts(settings: Settings, specs: Sequence[Spec], prefix: str) -> list[Payout]:
    accounts: dict[str, str] = {}
    limit = asyncio.Semaphore(16)
    async with ProviderClient.from_settings(settings) as client:

        async def account(key: str, country: str) -> str:
            if key not in accounts:
                request = BankAccountCreateRequest(country_id=country, iban=IBANS[country])
                accounts[key] = (await client.create_bank_account(request)).id
            return accounts[key]

        keys = [spec.account or f"{prefix}-acct-{i}" for i, spec in enumerate(specs)]
        for key, spec in zip(keys, specs, strict=True):
            if spec.bank_account_id is not None:
                accounts[key] = spec.bank_account_id
            await account(key, spec.country)

        async def one(i: int, spec: Spec) -> Payout:
            reference = spec.reference or f"{prefix}-{i:05d}"
            async with limit:
                created = await client.create_withdrawal(
                    WithdrawalRequest(
                        amount=Decimal(spec.amount),
                        bank_account_id=accounts[keys[i]],
                        merchant_reference=reference,
                    )
                )
                tx = await client.get_transaction(created.id)
            assert tx.created is not None
            return Payout(
                transaction_id=created.id,
                reference=reference,
                amount=Decimal(spec.amount),
                currency=tx.currency_id.upper(),
                bank_account_id=accounts[keys[i]],
                customer_id=f"cust-{keys[i]}",
                country_id=spec.country,
                created=tx.created,
                eta=created.eta,
            )

        return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(specs))))


def write_payouts_csv(path: Path, rows: Sequence[dict[str, str]]) -> Path:
    """The merchant's payout export, as `recon import payouts` reads it."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


# --- the CLI --------------------------------------------------------------------------------------


# Schedules with checks on the first days after an outcome, so that a test's few nights see
# watched payouts asked about again (the return watch's default starts on day 6).
DAILY_WATCH_SCHEDULE = "1,2,3,5,8,13,20,27,30,45,60,75,90"
DAILY_RETURN_WATCH_SCHEDULE = "1,2,3,5,8,13,20,27,30"
DAILY_SCHEDULES = {
    "watch_schedule": DAILY_WATCH_SCHEDULE,
    "return_watch_schedule": DAILY_RETURN_WATCH_SCHEDULE,
}  # recon_env(url, api, **DAILY_SCHEDULES)


def recon_env(database_url: str, api_url: str, **settings: str) -> dict[str, str]:
    """The environment of a `recon` subprocess: this database and provider, default keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(RECON_DATABASE_URL=database_url, RECON_API_BASE_URL=api_url)
    env.update({f"RECON_{name.upper()}": value for name, value in settings.items()})
    return env


def recon(
    env: dict[str, str], *args: str, cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the `recon` command to the end."""
    return subprocess.run(
        [RECON, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_recon(env: dict[str, str], *args: str, cwd: Path) -> subprocess.Popen[str]:
    """Start the `recon` command without waiting for it."""
    return subprocess.Popen(
        [RECON, *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def explain(result: subprocess.CompletedProcess[str]) -> str:
    """What a failed assertion on a subprocess shows."""
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


# --- reading the reports and the store ----------------------------------------------------------


def cell_id(text: str) -> str:
    """An id as written in a CSV cell, without the renderer's formula guard."""
    return text[1:] if text.startswith("'") and text[1:2] in _GUARDED else text


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a report CSV (ids without the formula guard)."""
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    for row in rows:
        for key in ("transaction_id", "return_transaction_id", "original_transaction_id"):
            if key in row:
                row[key] = cell_id(row[key])
    return rows


def import_payouts(
    env: dict[str, str], tmp: Path, rows: Sequence[dict[str, str]], name: str = "payouts.csv"
) -> str:
    """Write the merchant's export to ``tmp/name`` and `recon import payouts` it, expecting exit
    0; what the command printed."""
    export = write_payouts_csv(tmp / name, rows)
    result = recon(env, "import", "payouts", str(export), cwd=tmp)
    assert result.returncode == 0, explain(result)
    return result.stdout + result.stderr


def run_night(env: dict[str, str], tmp: Path, name: str, as_of: str, code: int = 0) -> Path:
    """One `recon run` as of ``as_of`` into ``tmp/name`` (no email), expecting exit ``code``."""
    out = tmp / name
    result = recon(env, "run", "--as-of", as_of, "--no-email", "--out", str(out), cwd=tmp)
    assert result.returncode == code, explain(result)
    return out


def findings_of(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    """A report's exceptions.csv rows by (item id, exception)."""
    return {(r["transaction_id"], r["exception"]): r for r in read_csv(out / "exceptions.csv")}


def by_id(rows: Sequence[dict[str, str]], key: str = "transaction_id") -> dict[str, dict[str, str]]:
    """Rows keyed by their id; each id must appear once."""
    keyed = {row[key]: row for row in rows}
    assert len(keyed) == len(rows), f"repeated {key} in {rows}"
    return keyed


def exceptions_of(rows: Sequence[dict[str, str]]) -> dict[tuple[str, str], str]:
    """exceptions.csv as {(id, exception): status}; each pair must appear once."""
    keyed = {(row["transaction_id"], row["exception"]): row["status"] for row in rows}
    assert len(keyed) == len(rows), f"repeated exceptions in {rows}"
    return keyed


def db_path(database_url: str) -> Path:
    return Path(database_url.removeprefix("sqlite:///"))


def count(database_url: str, sql: str, *params: Any) -> int:
    """One number from the SQLite store (read directly, as an operator would)."""
    with sqlite3.connect(db_path(database_url), timeout=30) as conn:
        value = conn.execute(sql, params).fetchone()[0]
    return int(value or 0)


def utc_now() -> datetime:
    return datetime.now(UTC)
