"""``recon sandbox pay``: create a CSV's payouts in a running sandbox, and write the CSV to import.

A newcomer's sample of payouts has ids the sandbox has never seen, so reconciling it answers
``unknown_transaction`` for every row. This reads the file with the import's own reader
(:mod:`recon.ingest.csvread`, the same columns), validates the WHOLE file first (every problem
with its line; nothing is created when one row is wrong), then through the provider API
(``ProviderClient``, as a merchant would) creates one bank account per distinct
``bank_account_id`` (else ``customer_id``, else row) and one payout per row, and writes a CSV in
the import's columns with the sandbox's ``transaction_id``, ``bank_account_id`` and ``eta``:
``recon import payouts`` of that file matches the sandbox.

``transaction_id`` is optional in the input (the sandbox gives the ids); ``merchant_reference``,
``amount`` and ``currency`` are required. Amounts go through unchanged, so the sandbox amounts of
7.3 (11.01, 12.01, 13.01, 14.01) behave as documented. A second run of the same file creates no
payout twice: the sandbox answers a repeated ``merchant_reference`` and amount with the original id.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import httpx
from pydantic import SecretStr

from recon.constants import TxState
from recon.errors import AuthorizeFailed, InputError, ProviderError, ProviderTransportError
from recon.files import write_atomic
from recon.ingest.allornothing import Problems
from recon.ingest.csvread import read_csv
from recon.ingest.payouts import KNOWN_COLUMNS, RECORD_COLUMNS, validate_row
from recon.money import parse_decimal
from recon.provider.client import ProviderClient
from recon.provider.models import (
    BankAccountCreateRequest,
    CallbackSubscription,
    WithdrawalRequest,
)
from recon.sandbox.records import fake_iban
from recon.words import counted

REQUIRED = ("merchant_reference", "amount", "currency")
# The record's columns: transaction_id, merchant_reference, amount, currency, ... The file names no
# provider account: the sandbox merchant is one account, given by `recon import payouts --account`.
OUTPUT_COLUMNS = RECORD_COLUMNS
CALLBACK_STATES = (TxState.ABORTED, TxState.FAILED, TxState.COMPLETED, TxState.SETTLED)
_COUNTRY_OF_CURRENCY = {"SEK": "SE", "DKK": "DK", "NOK": "NO", "GBP": "GB", "PLN": "PL"}
_COUNTRY = re.compile(r"[A-Za-z]{2}")
_PLACEHOLDER_ID = "to-be-given-by-the-sandbox"


@dataclass(frozen=True, slots=True)
class PayRow:
    """One valid input row: what to create, and the cells to carry into the output."""

    line: int
    merchant_reference: str
    amount: Decimal
    currency: str
    country_id: str
    account_key: str
    customer_id: str | None
    created: str | None


@dataclass(frozen=True, slots=True)
class PayResult:
    """What ``pay_file`` did."""

    source: Path
    out: Path
    payouts: int
    accounts: int

    def summary(self) -> str:
        """The lines the CLI prints."""
        return (
            f"created {counted(self.payouts, 'payout')} "
            f"({counted(self.accounts, 'bank account')}) in the sandbox; "
            f"wrote {self.out}\nnext: recon import payouts {self.out}"
        )


def default_out(source: Path) -> Path:
    """``payouts.csv`` -> ``payouts.sandbox.csv`` (next to it)."""
    return source.with_name(f"{source.stem}.sandbox.csv")


def read_pay_file(path: Path) -> list[PayRow]:
    """Every row of ``path``, validated; ``InputError`` naming each bad line if any is wrong."""
    rows: list[PayRow] = []
    problems = Problems(str(path), outcome="nothing was created")
    first_line_of: dict[str, int] = {}
    with read_csv(path, known=KNOWN_COLUMNS, required=REQUIRED) as (records, _ignored):
        for line, cells in records:
            row, errors = (None, [cells]) if isinstance(cells, str) else _row(line, cells)
            if row is not None:
                reference = row.merchant_reference
                earlier = first_line_of.setdefault(reference, line)
                if earlier != line:
                    errors = [f"merchant_reference {reference!r} repeats line {earlier}"]
            problems.add(f"line {line}", errors)
            if row is not None and not errors:
                rows.append(row)
    if problems:
        raise problems.error()
    if not rows:
        raise InputError(f"{path}: no payouts in the file (only a header)")
    return rows


def _row(line: int, cells: Mapping[str, str]) -> tuple[PayRow | None, list[str]]:
    known = {name: cells.get(name, "") for name in KNOWN_COLUMNS}
    known["transaction_id"] = _PLACEHOLDER_ID  # the sandbox gives it
    record, errors = validate_row(known)
    country = (cells.get("country_id") or "").strip()
    if country and not _COUNTRY.fullmatch(country):
        errors.append(f"country_id {country!r} is not a two-letter country code")
    if record is None or errors:
        return None, errors
    currency: str = record["currency"]
    country = country.upper() or _COUNTRY_OF_CURRENCY.get(currency, "DE")
    customer = record["customer_id"]
    key = record["bank_account_id"] or (f"customer:{customer}" if customer else f"line:{line}")
    amount = parse_decimal(cells["amount"].strip())
    return (
        PayRow(
            line=line,
            merchant_reference=record["merchant_reference"],
            amount=amount,
            currency=currency,
            country_id=country,
            account_key=key,
            customer_id=customer,
            created=(cells.get("created") or "").strip() or None,
        ),
        [],
    )


async def create_payouts(
    rows: list[PayRow],
    *,
    base_url: str,
    public_key: str,
    secret: str,
    callback_url: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[list[dict[str, str]], int]:
    """Create the accounts and payouts through the API; the output rows and the account count."""
    callbacks = (
        [CallbackSubscription(url=callback_url, transaction_state=int(s)) for s in CALLBACK_STATES]
        if callback_url
        else []
    )
    first_of: dict[str, PayRow] = {}
    for row in rows:
        first_of.setdefault(row.account_key, row)
    async with ProviderClient(
        base_url, public_key, SecretStr(secret), concurrency=8, transport=transport
    ) as client:

        async def account(row: PayRow) -> tuple[str, str]:
            request = BankAccountCreateRequest(
                country_id=row.country_id,
                iban=fake_iban(row.country_id),
                holder_firstname="Sandbox",
                holder_lastname=f"Customer {row.line}",
            )
            return row.account_key, (await client.create_bank_account(request)).id

        accounts = dict(await asyncio.gather(*(account(r) for r in first_of.values())))

        async def payout(row: PayRow) -> dict[str, str]:
            extra = {"currency_id": row.currency}
            if row.customer_id:
                extra["customer_id"] = row.customer_id
            request = WithdrawalRequest(
                amount=row.amount,
                bank_account_id=accounts[row.account_key],
                merchant_reference=row.merchant_reference,
                callbacks=callbacks,
                **extra,
            )
            created = await client.create_withdrawal(request)
            return {
                "transaction_id": created.id,
                "merchant_reference": row.merchant_reference,
                "amount": format(row.amount, "f"),
                "currency": row.currency,
                "bank_account_id": accounts[row.account_key],
                "customer_id": row.customer_id or "",
                "country_id": row.country_id,
                "created": row.created or "",
                "eta": created.eta.isoformat() if created.eta is not None else "",
            }

        out = list(await asyncio.gather(*(payout(r) for r in rows)))
    return out, len(accounts)


def render_csv(rows: list[dict[str, str]]) -> bytes:
    """The output CSV (``recon import payouts`` columns), header first."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(OUTPUT_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def pay_file(
    source: Path,
    out: Path | None = None,
    *,
    base_url: str,
    public_key: str,
    secret: str,
    callback_url: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> PayResult:
    """Validate ``source``, create its payouts in the sandbox at ``base_url``, write ``out``."""
    out = out or default_out(source)
    if out.resolve() == source.resolve():
        raise InputError(f"--out {out} is the input file: choose another path")
    rows = read_pay_file(source)
    try:
        created, accounts = asyncio.run(
            create_payouts(
                rows,
                base_url=base_url,
                public_key=public_key,
                secret=secret,
                callback_url=callback_url,
                transport=transport,
            )
        )
    except (ProviderTransportError, AuthorizeFailed) as exc:
        raise ProviderError(
            f"{exc}\n  is the sandbox running at {base_url}? (recon sandbox serve)"
        ) from None
    except ProviderError as exc:
        raise ProviderError(
            f"{exc}\n  payouts created before this stay in the sandbox; running the same file "
            "again creates none of them twice"
        ) from None
    write_atomic(out, render_csv(created))
    return PayResult(source, out, len(created), accounts)
