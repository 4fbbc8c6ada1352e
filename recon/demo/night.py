"""``recon demo``: a realistic night end to end, offline, on loopback only.

It starts the sandbox and the callback receiver on loopback ports, pays out a few hundred payouts
through the sandbox API (every sandbox amount, several currencies), stores them as a merchant would
(a CSV import), runs the reconciliation, lets the sandbox's clock move on (settlements, delays,
returns, a bank confirming failed payouts, a forged and a duplicated notification), runs it again
and prints where the report is. Nothing here is a test double: it is the product, pointed at its
own sandbox. :func:`show_demo` is the terminal's view of it (``recon demo``); :func:`run_demo`
returns the results as data.
"""

from __future__ import annotations

import asyncio
import random
import shutil
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from recon.constants import ExitCode, TxState
from recon.demo.merchant import (
    MAGIC_AMOUNTS,
    Echo,
    bank_accounts,
    forged_and_duplicate,
    lost_create,
    pay_out,
    plan_payouts,
    write_csv,
)
from recon.demo.morning import morning_lines
from recon.demo.queue import work_the_queue
from recon.demo.reports import (
    fee_totals,
    found_by_callback,
    groups,
    paid_more_than_once,
    returned_payouts,
    still_open,
)
from recon.demo.rollforward import roll_forward_lines
from recon.demo.store import demo_store_hint, fresh_demo_database
from recon.files import make_private_dirs
from recon.ingest.payouts import import_payouts_csv
from recon.ingest.receiver import create_receiver_app
from recon.jsonparse import dumpb, loads
from recon.money import to_minor
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.provider.client import ProviderClient
from recon.provider.models import (
    CallbackSubscription,
)
from recon.sandbox.app import create_app
from recon.sandbox.config import Merchant, SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine
from recon.words import money

# The sandbox's admin calls (moving its clock settles every due payout and delivers its callbacks)
# take time in proportion to the night: at 5,000 payouts far beyond httpx's 5 s default.
ADMIN_TIMEOUT = httpx.Timeout(600.0, connect=10.0)


@dataclass
class DemoResult:
    """What the demo produced: where the report is, and the two runs."""

    report_dir: Path
    first: RunResult
    second: RunResult
    magic: list[dict[str, Any]] = field(default_factory=list)
    returns: list[dict[str, Any]] = field(default_factory=list)
    notifications: int = 0
    returns_notified: set[str] = field(default_factory=set)


def show_demo(work_dir: Path, *, payouts: int = 300) -> ExitCode:
    """Run the demo, printing its progress and results to the terminal; the second run's code."""
    console = Console(stderr=False, highlight=False)
    result = run_demo(work_dir, payouts=payouts, echo=console.print)
    table = Table(title="Sandbox amounts: final state at the provider")
    for column in ("amount", "currency", "state", "error_code", "transaction", "related"):
        table.add_column(column)
    for row in result.magic:
        table.add_row(
            str(row["amount"]),
            row["currency"],
            row["state"],
            row["error_code"],
            row["transaction_id"],
            row["related"],
        )
    console.print(table)
    returned = returned_payouts(result.report_dir)
    for ret in result.returns:
        if ret["id"] in result.returns_notified:
            heard = "received by the local receiver"
        elif ret["related_transaction_id"] in returned:
            heard = "never sent: found by the return watch"
        else:
            heard = "never sent, and NOT found"
        console.print(
            f"returned-funds transaction {ret['id']} (type 13) of {_amount(ret)} "
            f"for payout {ret['related_transaction_id']}; "
            f"its RETURNED_TRANSACTION notification {heard}"
        )
    for line in paid_more_than_once(result.report_dir):
        console.print(line)
    for line in groups(result.report_dir):
        console.print(line)
    for line in found_by_callback(result.report_dir):
        console.print(line)
    for line in fee_totals(result.report_dir):
        console.print(line)
    for line in still_open(result.report_dir):
        console.print(line)
    console.print(f"notifications stored by the local receiver: {result.notifications}")
    console.print(f"report: {(result.report_dir / 'report.html').resolve()}")
    console.print(demo_store_hint(work_dir), soft_wrap=True, markup=False)
    return ExitCode(result.second.exit_code)


def run_demo(
    work_dir: Path, *, payouts: int = 300, seed: int = 7, echo: Echo = print
) -> DemoResult:
    """Run the whole demo in ``work_dir`` (its database and reports are made afresh)."""
    make_private_dirs(work_dir)
    database_url = fresh_demo_database(work_dir)
    for folder in ("report", "report-night-1"):
        shutil.rmtree(work_dir / folder, ignore_errors=True)
    engine = make_engine(database_url)
    ensure_schema(engine)
    base = Settings(
        database_url=database_url,
        out_dir=work_dir / "report",
        fees=demo_fees(datetime.now(UTC).date()),
    )
    with serve_in_thread(create_receiver_app(base, engine)) as receiver_url:
        merchant = default_merchant().model_copy(
            update={"returned_funds_url": f"{receiver_url}/callbacks?via=back-office"}
        )
        sandbox = create_app(SandboxConfig(merchants=[merchant], settle_after_seconds=60))
        with serve_in_thread(sandbox) as sandbox_url:
            settings = base.model_copy(update={"api_base_url": sandbox_url})
            echo(f"sandbox on {sandbox_url}, callback receiver on {receiver_url}")
            return asyncio.run(
                _night(settings, engine, work_dir, merchant, receiver_url, payouts, seed, echo)
            )


async def _night(
    settings: Settings,
    engine: Any,
    work_dir: Path,
    merchant: Merchant,
    receiver_url: str,
    count: int,
    seed: int,
    echo: Echo,
) -> DemoResult:
    rng = random.Random(seed)
    callbacks = [
        CallbackSubscription(url=f"{receiver_url}/callbacks?via=demo", transaction_state=s)
        for s in (TxState.ABORTED, TxState.FAILED, TxState.COMPLETED, TxState.SETTLED)
    ]
    async with (
        ProviderClient.from_settings(settings) as client,
        httpx.AsyncClient(base_url=settings.api_base_url, timeout=ADMIN_TIMEOUT) as admin,
    ):
        accounts = await bank_accounts(client, rng, 60)
        planned = plan_payouts(rng, accounts, count)
        created = await pay_out(client, planned, callbacks, echo=echo)
        echo(f"paid out {len(created):,} payouts through the sandbox API")
        # Three records whose id was mistyped: the provider knows none (unknown_transaction), so
        # the first night has exceptions for finance to answer in the mailed workbook. Finance
        # answers two; the third, which nobody acts on, is still listed on the second night.
        typos = [
            {
                **created[0],
                "transaction_id": f"typo-{n}-{created[0]['transaction_id']}",
                "reference": f"demo-typo-{n}",
            }
            for n in (1, 2, 3)
        ]
        csv_path = write_csv(work_dir / "payouts.csv", [*created, *typos])
        imported = await asyncio.to_thread(import_payouts_csv, engine, csv_path)
        echo(f"stored them as the merchant would: {imported.summary()}")

        first = await _reconcile(settings, admin, work_dir / "report-night-1")
        echo(first.summary)
        for line in await asyncio.to_thread(
            morning_lines, engine, settings.timezone, night="night 1"
        ):
            echo(line)
        for line in await asyncio.to_thread(
            roll_forward_lines, engine, settings.timezone, work_dir / "report-night-1"
        ):
            echo(line)
        for line in await asyncio.to_thread(work_the_queue, settings, work_dir):
            echo(line)

        # The night goes on: settlements, the 13.01 delay ends, 14.01 payouts come back.
        echo("the night goes on: the sandbox settles payouts and sends their callbacks")
        await _advance(admin, 10 * 60)
        failed = [p for p in created if p["amount"] == Decimal("12.01")]
        for payout in failed[:2]:  # the bank confirms two payouts it had reported failed (3.3)
            await admin.post(f"/sandbox/transactions/{payout['transaction_id']}/confirm")
        ordinary = [p for p in created if str(p["amount"]) not in MAGIC_AMOUNTS]
        for payout in ordinary[:2]:  # a receiving bank returns two ordinary payouts
            await admin.post(f"/sandbox/transactions/{payout['transaction_id']}/return")
        # A third return whose notification never comes: only the return watch finds it.
        await admin.post(
            f"/sandbox/transactions/{ordinary[2]['transaction_id']}/return",
            content=dumpb({"notify": False}),
        )
        # The provider calls back "failed" (3) for a payout every answer calls settled: the
        # merchant learns of a failure only from the callback, and recon names it.
        await admin.post(
            f"/sandbox/transactions/{ordinary[3]['transaction_id']}/notify",
            content=dumpb({"state": int(TxState.FAILED), "url": f"{receiver_url}/callbacks"}),
        )
        # Believing it failed, the merchant pays that customer again, same amount, same account:
        # both settle, a real double payment, named as the late settlement's candidate duplicate.
        # (Re-paying a 12.01 payout would not do: 12.01 always fails in the sandbox, 7.3.)
        again = await pay_out(client, [{**ordinary[3], "reference": "demo-repay-1"}], callbacks)
        # A double click: the merchant pays another customer again ten minutes after the first,
        # same amount and account, under a new reference (the provider answers a repeated one
        # with the first id): both settle, and recon names each as the other's possible duplicate.
        again += await pay_out(client, [{**ordinary[4], "reference": "demo-twice-1"}], callbacks)
        # The next day's payouts: two to other customers are aborted by the bank (the sandbox's
        # 11.01 and 11.02), so the second night too has failed payouts to re-pay.
        again += await pay_out(
            client,
            [
                {**ordinary[7], "amount": Decimal(MAGIC_AMOUNTS[0]), "reference": "demo-day2-1"},
                {**ordinary[8], "amount": Decimal(MAGIC_AMOUNTS[1]), "reference": "demo-day2-2"},
            ],
            callbacks,
        )
        lost = await lost_create(client, admin, ordinary[6], callbacks, echo)
        await forged_and_duplicate(receiver_url, merchant, created)
        await _advance(admin, 24 * 3600)  # the next night: settled payouts are due a check
        csv_path = write_csv(work_dir / "payouts.csv", [*created, *typos, *again, *lost])
        await asyncio.to_thread(import_payouts_csv, engine, csv_path)

        second = await _reconcile(settings, admin, work_dir / "report")
        echo(second.summary)
        for line in await asyncio.to_thread(
            morning_lines, engine, settings.timezone, night="night 2"
        ):
            echo(line)
        for line in await asyncio.to_thread(
            roll_forward_lines, engine, settings.timezone, work_dir / "report"
        ):
            echo(line)
        magic = await _final_states(
            client, [p for p in created if str(p["amount"]) in MAGIC_AMOUNTS]
        )
        listing = loads((await admin.get("/sandbox/transactions")).content)
    returned = [t for t in listing["transactions"] if int(t["type"]) == 13]
    from sqlalchemy import func, select

    from recon.store.tables import notifications

    n = notifications.c
    with engine.connect() as conn:
        stored = int(conn.scalar(select(func.count()).select_from(notifications)) or 0)
        notified = set(conn.scalars(select(n.transaction_id).where(n.kind == "returned_funds")))
    return DemoResult(work_dir / "report", first, second, magic, returned, stored, notified)


def demo_fees(today: date) -> list[dict[str, Any]]:
    """The demo's agreed price, in EUR only: the sandbox's own (0.25 + 0.50 %) from the first of
    the month through today, and a new one from tomorrow, so the price changes mid-month. The
    sandbox overcharges 15.01 (fee_mismatch) and charges 11.03 though it never pays
    (fee_on_unpaid); the other currencies' fees are reported, not checked."""
    first = today.replace(day=1)
    return [
        {"currency": "EUR", "valid_from": first, "valid_to": today,
         "fixed": "0.25", "percent": "0.50"},
        {"currency": "EUR", "valid_from": today + timedelta(days=1),
         "fixed": "0.30", "percent": "0.45", "min": "0.35"},
    ]  # fmt: skip


async def _advance(admin: httpx.AsyncClient, seconds: int) -> None:
    answer = await admin.post("/sandbox/clock/advance", content=dumpb({"seconds": seconds}))
    answer.raise_for_status()


async def _sandbox_now(admin: httpx.AsyncClient) -> datetime:
    now = loads((await admin.get("/sandbox/clock")).content)["now"]
    return datetime.fromtimestamp(float(now), tz=UTC)


async def _reconcile(settings: Settings, admin: httpx.AsyncClient, out_dir: Path) -> RunResult:
    as_of = await _sandbox_now(admin)
    options = RunOptions(out_dir=out_dir, as_of=as_of, email=False)
    return await asyncio.to_thread(run_reconciliation, settings, options)


def _state_name(state: int | None, unrecognised: str | None = None) -> str:
    if state is None:
        return str(unrecognised)
    try:
        return f"{state} {TxState(state).name}"
    except ValueError:
        return str(state)


async def _final_states(
    client: ProviderClient, payouts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    rows = []
    for payout in sorted(payouts, key=lambda p: (str(p["amount"]), p["reference"])):
        tx = await client.get_transaction(payout["transaction_id"])
        rows.append(
            {
                "transaction_id": tx.id,
                "amount": tx.amount,
                "currency": tx.currency_id,
                "state": _state_name(tx.state, tx.unrecognised_state),
                "error_code": tx.error_code or "",
                "related": tx.related_transaction_id or "",
            }
        )
    return rows


def _amount(transaction: dict[str, Any]) -> str:
    """A transaction's amount as people read it: ``1,010.93 EUR``."""
    code = str(transaction["currency_id"]).upper()
    return money(to_minor(Decimal(str(transaction["amount"])), code), code)
