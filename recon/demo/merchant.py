"""What the demo does at the sandbox as a merchant would: bank accounts, the payouts of the night
(every sandbox amount), a create whose answer is lost, a forged return and a re-payment."""

from __future__ import annotations

import asyncio
import csv
import random
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from recon.constants import TxState
from recon.errors import UnknownOutcome
from recon.jsonparse import dumpb
from recon.money import minor_digits
from recon.provider.client import ProviderClient
from recon.provider.models import (
    BankAccountCreateRequest,
    CallbackSubscription,
    HolderAddress,
    WithdrawalRequest,
)
from recon.sandbox import scenarios
from recon.sandbox.config import Merchant

# The sandbox amounts (docs/sandbox.md): 7.3's, then its own two fee cases (11.03, 15.01).
MAGIC_AMOUNTS = ("11.01", "11.02", "12.01", "13.01", "14.01", "11.03", "15.01")
COUNTRIES = ("SE", "FI", "DK", "NO", "DE", "GB", "NL")
FIRST_NAMES = ("Astrid", "Mikko", "Freja", "Ola", "Lena", "Oliver", "Sanne", "Elias", "Ines")
LAST_NAMES = ("Lindqvist", "Virtanen", "Jensen", "Hansen", "Becker", "Smith", "de Vries")
PROGRESS_STEPS = 10  # paying out prints a line at each tenth
Echo = Callable[[str], None]


async def bank_accounts(
    client: ProviderClient,
    rng: random.Random,
    n: int,
    countries: tuple[str, ...] = COUNTRIES,
) -> list[dict[str, str]]:
    """``n`` bank accounts created in the sandbox, one customer each, over ``countries``."""

    async def one(i: int) -> dict[str, str]:
        country = countries[i % len(countries)]
        digits = "".join(rng.choice("0123456789") for _ in range(20))
        request = BankAccountCreateRequest(
            country_id=country,
            iban=f"{country}{digits}",
            holder_firstname=FIRST_NAMES[i % len(FIRST_NAMES)],
            holder_lastname=LAST_NAMES[i % len(LAST_NAMES)],
            holder_address=HolderAddress(city="Demo City", country=country),
        )
        created = await client.create_bank_account(request)
        return {
            "bank_account_id": created.id,
            "country_id": country,
            "customer_id": f"cust-{i:03d}",
        }

    return list(await asyncio.gather(*(one(i) for i in range(n))))


def plan_payouts(
    rng: random.Random,
    accounts: list[dict[str, str]],
    count: int,
    *,
    magic: tuple[str, ...] = MAGIC_AMOUNTS,
    times: int = 4,
    prefix: str = "demo",
) -> list[dict[str, Any]]:
    """``count`` payouts over ``accounts``: each of the sandbox amounts ``magic`` ``times`` times,
    then random ones; references ``prefix-00000`` on."""
    plan: list[dict[str, Any]] = []
    for i in range(count):
        account = accounts[i % len(accounts)]
        if i < times * len(magic):
            amount = Decimal(magic[i % len(magic)])
        else:
            amount = Decimal(rng.randint(500, 250_000)).scaleb(-2)
            while amount in scenarios.MAGIC_AMOUNTS:  # 14.01 + 1.00 is the sandbox's 15.01
                amount += Decimal("1.00")
        plan.append({**account, "amount": amount, "reference": f"{prefix}-{i:05d}"})
    return plan


async def lost_create(
    client: ProviderClient,
    admin: httpx.AsyncClient,
    like: dict[str, Any],
    callbacks: list[CallbackSubscription],
    echo: Echo,
) -> list[dict[str, Any]]:
    """A create whose answer the sandbox drops (the payout is made, its callbacks go out): the
    merchant records the attempt without an id, then pays again under a new reference. Only the
    first payout's callback tells recon it exists. Returns the merchant's rows (attempt, retry)."""
    first = {**like, "reference": "demo-lost-1"}
    answer = await admin.post(
        "/sandbox/faults", content=dumpb({"drop_create_answer": [first["reference"]]})
    )
    answer.raise_for_status()
    try:
        await pay_out(client, [first], callbacks)
    except UnknownOutcome:
        echo("a create's answer was lost: the merchant records it without an id and pays again")
    attempt = {**first, "transaction_id": "", "created": datetime.now(UTC), "eta": None}
    retry = await pay_out(client, [{**like, "reference": "demo-lost-1-retry"}], callbacks)
    return [attempt, *retry]


async def pay_out(
    client: ProviderClient,
    plan: list[dict[str, Any]],
    callbacks: list[CallbackSubscription],
    *,
    echo: Echo | None = None,
) -> list[dict[str, Any]]:
    """Create ``plan``'s payouts in the sandbox (16 at a time), subscribed to ``callbacks``."""
    limit = asyncio.Semaphore(16)
    total = len(plan)
    step = max(total // PROGRESS_STEPS, 1)
    done = 0

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        async with limit:
            created = await client.create_withdrawal(
                WithdrawalRequest(
                    amount=item["amount"],
                    bank_account_id=item["bank_account_id"],
                    merchant_reference=item["reference"],
                    callbacks=callbacks,
                )
            )
            tx = await client.get_transaction(created.id)
        nonlocal done
        done += 1
        if echo is not None and (done % step == 0 or done == total):
            echo(f"paying out: {done:,}/{total:,}")
        return {
            **item,
            "transaction_id": created.id,
            "currency": tx.currency_id,
            "created": tx.created or datetime.now(UTC),
            "eta": created.eta,
        }

    return list(await asyncio.gather(*(one(item) for item in plan)))


def write_csv(path: Path, created: list[dict[str, Any]]) -> Path:
    """``created`` as the merchant's export (the import's columns, each row's provider account
    in ``provider_account``) at ``path``."""
    columns = [
        "provider_account",
        "transaction_id",
        "merchant_reference",
        "amount",
        "currency",
        "bank_account_id",
        "customer_id",
        "country_id",
        "created",
        "eta",
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for p in created:
            digits = minor_digits(p["currency"])
            writer.writerow(
                [
                    p["account"],
                    p["transaction_id"],
                    p["reference"],
                    f"{p['amount']:.{digits}f}",
                    p["currency"],
                    p["bank_account_id"],
                    p["customer_id"],
                    p["country_id"],
                    p["created"].isoformat(),
                    p["eta"].isoformat() if p["eta"] else "",
                ]
            )
    return path


async def forged_and_duplicate(
    callback_url: str, merchant: Merchant, created: list[dict[str, Any]]
) -> None:
    """A return nobody made, claimed for a real payout, and one notification delivered twice, at
    the merchant's ``callback_url``."""
    settled = [p for p in created if str(p["amount"]) not in MAGIC_AMOUNTS][5]
    forged = {
        "transaction_id": "forged-return-0001",
        "original_transaction_id": settled["transaction_id"],
        "notification_type": "RETURNED_TRANSACTION",
        "merchant_id": merchant.merchant_id,
        "country_id": settled["country_id"],
        "amount": settled["amount"],
    }
    duplicate = {
        "merchant_id": merchant.merchant_id,
        "transaction_id": created[-1]["transaction_id"],
        "transaction_state": int(TxState.SETTLED),
    }
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient() as http:
        for body in (forged, duplicate, duplicate):
            answer = await http.post(callback_url, content=dumpb(body), headers=headers)
            answer.raise_for_status()
