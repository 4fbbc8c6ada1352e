"""Creating the benchmark's payouts in the sandbox through its API, and the matching store.

The payouts are created with ``transaction.create_withdrawal`` at concurrency 50 (faults off while
seeding), so the sandbox holds ordinary payouts exactly as a merchant's integration would have made
them. One in a hundred is a sandbox "aborted" amount (11.01) and one in a hundred "failed"
(12.01), so classification finds exceptions and the reports have content.

The store is a SQLite file written once with :func:`recon.store.payouts.upsert_payouts` (the import
is not part of the polling benchmark); each measured run gets a fresh copy of it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from recon.money import to_minor
from recon.provider.client import ProviderClient
from recon.provider.models import BankAccountCreateRequest, WithdrawalRequest
from recon.sandbox.config import DEFAULT_PUBLIC_KEY, DEFAULT_SECRET
from recon.store.db import ensure_schema, make_engine, write_transaction
from recon.store.payouts import upsert_payouts

ABORTED = Decimal("11.01")
FAILED = Decimal("12.01")


@dataclass(frozen=True)
class Seeded:
    """A payout the sandbox knows: its id and what the merchant's records say about it."""

    transaction_id: str
    merchant_reference: str
    amount: Decimal
    currency: str


def amount_of(i: int) -> Decimal:
    """Mostly ordinary amounts (never a sandbox scenario amount), 1% aborted, 1% failed."""
    if i % 100 == 7:
        return ABORTED
    if i % 100 == 8:
        return FAILED
    return Decimal(100 + i % 900) + Decimal(i % 100) / 100


async def _create(base_url: str, count: int, concurrency: int, prefix: str) -> list[Seeded]:
    async with ProviderClient(
        base_url, DEFAULT_PUBLIC_KEY, DEFAULT_SECRET, concurrency=concurrency
    ) as client:
        account = await client.create_bank_account(
            BankAccountCreateRequest(country_id="DE", iban="DE89370400440532013000")
        )
        out: list[Seeded] = []
        todo = iter(range(count))

        async def worker() -> None:
            for i in todo:
                reference = f"{prefix}-{i:07d}"
                amount = amount_of(i)
                created = await client.create_withdrawal(
                    WithdrawalRequest(
                        amount=amount, bank_account_id=account.id, merchant_reference=reference
                    )
                )
                out.append(Seeded(created.id, reference, amount, "EUR"))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return out


def create_payouts(base_url: str, count: int, *, prefix: str = "bench") -> list[Seeded]:
    """Create ``count`` payouts in the sandbox at ``base_url`` (its faults should be off)."""
    return asyncio.run(_create(base_url, count, 50, prefix))


def write_store(path: Path, payouts: list[Seeded]) -> None:
    """A SQLite store at ``path`` holding ``payouts`` as imported, never reconciled (all open)."""
    path.unlink(missing_ok=True)
    engine = make_engine(f"sqlite:///{path}")
    ensure_schema(engine)
    now = datetime.now(UTC)
    rows = [
        {
            "transaction_id": p.transaction_id,
            "merchant_reference": p.merchant_reference,
            "amount_minor": to_minor(p.amount, p.currency),
            "currency": p.currency,
            "bank_account_id": None,
            "created": now,
        }
        for p in payouts
    ]
    with write_transaction(engine) as conn:
        upsert_payouts(conn, rows, now=now)
    engine.dispose()  # checkpoints the WAL: the file alone is the whole database
