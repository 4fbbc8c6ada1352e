"""``recon demo``: a realistic night end to end, offline, on loopback only.

It starts the sandbox and the callback receiver on loopback ports; the sandbox serves the
merchant's two brands, two provider accounts (:mod:`recon.demo.brands`). It pays out a few hundred
payouts through the sandbox API for each brand (every sandbox amount, several currencies), stores
them as a merchant would (one CSV import naming each row's account), runs the reconciliation (each
account's night, then the report over both), lets the sandbox's clock move on (settlements,
delays, returns, a bank confirming failed payouts, a forged and a duplicated notification), runs
it again and prints where the report is. Nothing here is a test double: it is the product,
pointed at its own sandbox. :func:`show_demo` is the terminal's view of it (``recon demo``);
:func:`run_demo` returns the results as data.
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
from recon.demo.balance import (
    BACK_OFFICE,
    BALANCE_BRAND,
    BREAKS,
    CURRENCIES,
    DAY_TOP_UP,
    FUNDING,
    MORNING_TOP_UP,
    TIES,
    Movement,
    back_office_balance,
    evening_before,
    export_lines,
    named_by_export,
    record,
    statement_lines,
    top_up,
)
from recon.demo.brands import BRANDS, FJORD, JOURNAL, NORDLYS, Brand, demo_settings
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
from recon.demo.morning import latest_nights, morning_lines
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
from recon.demo.store import demo_store_hint, fresh_demo_database, write_demo_config
from recon.files import make_private_dirs
from recon.ingest.accounts import ImportAccounts
from recon.ingest.payouts import import_payouts_csv
from recon.ingest.receiver import create_receiver_app
from recon.jsonparse import dumpb, loads
from recon.money import to_minor
from recon.night.nights import Nights, run_nights
from recon.night.run import RunOptions
from recon.provider.client import ProviderClient
from recon.provider.models import (
    CallbackSubscription,
)
from recon.report.journal_export import export_journal
from recon.report.journal_files import JournalFormat
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine
from recon.words import money

# The sandbox's admin calls (moving its clock settles every due payout and delivers its callbacks)
# take time in proportion to the night: at 5,000 payouts far beyond httpx's 5 s default.
ADMIN_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
# The second brand pays out a tenth as many payouts as the first (at least a few).
SECOND_BRAND_SHARE = 10
SECOND_BRAND_MIN = 6


@dataclass
class DemoResult:
    """What the demo produced: where the report is, and the two invocations of the accounts'
    nights (each brand's night, and the pack over both)."""

    report_dir: Path
    first: Nights
    second: Nights
    magic: list[dict[str, Any]] = field(default_factory=list)
    returns: list[dict[str, Any]] = field(default_factory=list)
    notifications: int = 0
    returns_notified: set[str] = field(default_factory=set)
    named_by_export: set[str] = field(default_factory=set)  # unrecorded ids the export named


def show_demo(work_dir: Path, *, payouts: int = 300) -> ExitCode:
    """Run the demo, printing its progress and results to the terminal; the second run's code."""
    console = Console(stderr=False, highlight=False)
    result = run_demo(work_dir, payouts=payouts, echo=console.print)
    table = Table(title=f"Sandbox amounts: final state at the provider ({NORDLYS.label})")
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
            f"for payout {ret['related_transaction_id']} of {ret['brand']}; "
            f"its RETURNED_TRANSACTION notification {heard}",
            soft_wrap=True,  # one line each, however wide the terminal: the terminal wraps it
        )
    for line in paid_more_than_once(result.report_dir):
        console.print(line)
    for line in groups(result.report_dir):
        console.print(line)
    for line in found_by_callback(result.report_dir, result.named_by_export):
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
    for folder in ("report", "report-night-1", "journal"):
        shutil.rmtree(work_dir / folder, ignore_errors=True)
    engine = make_engine(database_url)
    ensure_schema(engine)
    fees = demo_fees(datetime.now(UTC).date())
    base = demo_settings(database_url, work_dir / "report", fees)
    with serve_in_thread(create_receiver_app(base, engine)) as receiver_url:
        merchants = [brand.merchant(receiver_url) for brand in BRANDS]
        sandbox = create_app(SandboxConfig(merchants=merchants, settle_after_seconds=60))
        with serve_in_thread(sandbox) as sandbox_url:
            settings = demo_settings(database_url, work_dir / "report", fees, sandbox_url)
            write_demo_config(work_dir, {b.name: b.table(sandbox_url) for b in BRANDS}, JOURNAL)
            echo(f"sandbox on {sandbox_url}, callback receiver on {receiver_url}")
            echo(
                "the merchant's two brands, each a provider account with keys of its own: "
                + "; ".join(f"{b.label} ({b.name})" for b in BRANDS)
            )
            urls = (sandbox_url, receiver_url)
            return asyncio.run(_night(settings, engine, work_dir, urls, payouts, seed, echo))


def _client(settings: Settings, brand: Brand) -> ProviderClient:
    account = next(a for a in settings.provider_accounts if a.name == brand.name)
    return ProviderClient.from_settings(settings.for_account(account))


def _callbacks(brand: Brand, receiver_url: str) -> list[CallbackSubscription]:
    """The brand's payouts are called back at its own URL of the receiver."""
    url = f"{brand.callback_url(receiver_url)}?via=demo"
    return [
        CallbackSubscription(url=url, transaction_state=s)
        for s in (TxState.ABORTED, TxState.FAILED, TxState.COMPLETED, TxState.SETTLED)
    ]


async def _customers(
    client: ProviderClient, rng: random.Random, n: int, brand: Brand
) -> list[dict[str, str]]:
    """``n`` of the brand's customers' bank accounts, each row naming the brand's account."""
    made = await bank_accounts(client, rng, n, brand.countries)
    return [{**row, "account": brand.name} for row in made]


async def _night(
    settings: Settings,
    engine: Any,
    work_dir: Path,
    urls: tuple[str, str],
    count: int,
    seed: int,
    echo: Echo,
) -> DemoResult:
    sandbox_url, receiver_url = urls
    rng = random.Random(seed)
    callbacks = _callbacks(NORDLYS, receiver_url)
    fjord_callbacks = _callbacks(FJORD, receiver_url)
    async with (
        _client(settings, NORDLYS) as client,
        _client(settings, FJORD) as fjord,
        httpx.AsyncClient(base_url=sandbox_url, timeout=ADMIN_TIMEOUT) as admin,
    ):
        day_1 = (await _sandbox_now(admin)).astimezone(settings.zone).date()
        fjord_count = max(count // SECOND_BRAND_SHARE, SECOND_BRAND_MIN)
        movements = await _opening(settings, engine, admin, day_1, FUNDING * fjord_count, echo)
        accounts = await _customers(client, rng, 60, NORDLYS)
        planned = plan_payouts(rng, accounts, count)
        # Fjord Home: a tenth as many, NOK and EUR, one aborted and one failed among them, paid
        # out in the afternoon: settled by the first night, so its entries are booked that night.
        fjord_rng = random.Random(seed + 1)
        fjord_plan = plan_payouts(
            fjord_rng,
            await _customers(fjord, fjord_rng, 12, FJORD),
            fjord_count,
            magic=MAGIC_AMOUNTS[:3:2],  # 11.01 aborted, 12.01 failed
            times=1,
            prefix="fjord",
        )
        fjord_created = await pay_out(fjord, fjord_plan, fjord_callbacks)
        await _advance(admin, 90)
        # Nordlys Travel's, just before the night: still in flight when it starts.
        created = await pay_out(client, planned, callbacks, echo=echo)
        echo(
            f"paid out {len(created):,} payouts for {NORDLYS.label} and {len(fjord_created):,} "
            f"for {FJORD.label} through the sandbox API"
        )
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
        both = ImportAccounts.of(settings)
        csv_path = write_csv(work_dir / "payouts.csv", [*created, *fjord_created, *typos])
        imported = await asyncio.to_thread(import_payouts_csv, engine, csv_path, accounts=both)
        echo(
            f"stored them as the merchant would, one file naming each row's provider_account: "
            f"{imported.summary()}"
        )

        first = await _reconcile(settings, admin, work_dir / "report-night-1", echo)
        night_1 = await asyncio.to_thread(latest_nights, engine, settings)
        for line in morning_lines(night_1, night="night 1"):
            echo(line)
        for line in roll_forward_lines(night_1, work_dir / "report-night-1"):
            echo(line)
        for line in await asyncio.to_thread(work_the_queue, settings, work_dir):
            echo(line)
        # Finance books the first night: every entry of both brands, one CSV batch.
        echo(await asyncio.to_thread(_export, settings, engine, work_dir, JournalFormat.CSV))

        # The night goes on: settlements, the 13.01 delay ends, 14.01 payouts come back.
        echo("the night goes on: the sandbox settles payouts and sends their callbacks")
        await _advance(admin, 10 * 60)
        failed = [p for p in created if p["amount"] == Decimal("12.01")]
        for payout in failed[:2]:  # the bank confirms two payouts it had reported failed (3.3)
            await admin.post(f"/sandbox/transactions/{payout['transaction_id']}/confirm")
        ordinary = [p for p in created if str(p["amount"]) not in MAGIC_AMOUNTS]
        for payout in ordinary[:2]:  # a receiving bank returns two ordinary payouts
            await admin.post(f"/sandbox/transactions/{payout['transaction_id']}/return")
        # Fjord Home's bank returns one payout too, told at Fjord's own callback URL.
        fjord_ordinary = [p for p in fjord_created if str(p["amount"]) not in MAGIC_AMOUNTS]
        await admin.post(f"/sandbox/transactions/{fjord_ordinary[0]['transaction_id']}/return")
        # ... and its bank pays out the 12.01 it had reported failed: paid after a failure.
        fjord_failed = next(p for p in fjord_created if str(p["amount"]) == "12.01")
        await admin.post(f"/sandbox/transactions/{fjord_failed['transaction_id']}/confirm")
        # A Fjord Home payout settled before the first night is recalled by its bank: settled,
        # then failed after all. Its settlement and fee were booked; tonight's journal reverses
        # both.
        await admin.post(f"/sandbox/transactions/{fjord_ordinary[1]['transaction_id']}/reverse")
        # A third return whose notification never comes: only the return watch finds it.
        await admin.post(
            f"/sandbox/transactions/{ordinary[2]['transaction_id']}/return",
            content=dumpb({"notify": False}),
        )
        # The provider calls back "failed" (3) for a payout every answer calls settled: the
        # merchant learns of a failure only from the callback, and recon names it.
        await admin.post(
            f"/sandbox/transactions/{ordinary[3]['transaction_id']}/notify",
            content=dumpb(
                {"state": int(TxState.FAILED), "url": NORDLYS.callback_url(receiver_url)}
            ),
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
        # Someone at Nordlys Travel pays a customer by hand through the API: no callback asked
        # for, never written to the merchant's file. Only the provider's export names it.
        (by_hand,) = await pay_out(
            client,
            [{**ordinary[5], "amount": Decimal("480.00"), "reference": "demo-by-hand-1"}],
            [],
        )
        echo(
            f"a payout made by hand through the API, no callback asked for and never recorded: "
            f"{by_hand['transaction_id']} of 480.00 {by_hand['currency']} ({NORDLYS.label})"
        )
        # Fjord Home tops up its NOK during the day.
        movements.append(
            await top_up(admin, BALANCE_BRAND, *DAY_TOP_UP, reference="fjord-top-up-day-1")
        )
        await forged_and_duplicate(
            NORDLYS.callback_url(receiver_url), NORDLYS.merchant(receiver_url), created
        )
        await _advance(admin, 24 * 3600)  # the next night: settled payouts are due a check
        rows = [*created, *fjord_created, *typos, *again, *lost]
        csv_path = write_csv(work_dir / "payouts.csv", rows)
        await asyncio.to_thread(import_payouts_csv, engine, csv_path, accounts=both)
        await _closing(settings, engine, admin, day_1, movements, echo)

        # The second night pulls the provider's export before it polls (RECON_PROVIDER_EXPORT=api).
        # Its lookback is a day: the provider account was funded the evening before the first.
        night_2 = settings.model_copy(update={"provider_export": "api", "export_lookback_days": 1})
        second = await _reconcile(night_2, admin, work_dir / "report", echo)
        labels = {a.name: a.label for a in settings.provider_accounts}
        saved = {end.account: end.counts.polls_saved for end in second.ends}
        for line in await asyncio.to_thread(export_lines, engine, labels, saved):
            echo(line)
        for line in await asyncio.to_thread(statement_lines, engine, settings.zone, BALANCE_BRAND):
            echo(line)
        read_2 = await asyncio.to_thread(latest_nights, engine, settings)
        for line in morning_lines(read_2, night="night 2"):
            echo(line)
        for line in roll_forward_lines(read_2, work_dir / "report"):
            echo(line)
        # The second night's entries go to each brand's ledger: Nordlys Travel's Swedish one
        # takes SIE, Fjord Home's takes Xero's manual journals.
        for fmt, brand in ((JournalFormat.SIE, NORDLYS), (JournalFormat.XERO, FJORD)):
            echo(await asyncio.to_thread(_export, settings, engine, work_dir, fmt, brand.name))
        magic = await _final_states(
            client, [p for p in created if str(p["amount"]) in MAGIC_AMOUNTS]
        )
        listing = loads((await admin.get("/sandbox/transactions")).content)
    label = {b.name: b.label for b in BRANDS}
    brand_of = {p["transaction_id"]: label[p["account"]] for p in rows if p["transaction_id"]}
    returned = [
        {**t, "brand": brand_of.get(str(t["related_transaction_id"]), "")}
        for t in listing["transactions"]
        if int(t["type"]) == 13
    ]
    from sqlalchemy import func, select

    from recon.store.tables import notifications

    n = notifications.c
    with engine.connect() as conn:
        stored = int(conn.scalar(select(func.count()).select_from(notifications)) or 0)
        notified = set(conn.scalars(select(n.transaction_id).where(n.kind == "returned_funds")))
    return DemoResult(
        work_dir / "report",
        first,
        second,
        magic,
        returned,
        stored,
        notified,
        named_by_export(engine),
    )


async def _listing(admin: httpx.AsyncClient) -> list[dict[str, Any]]:
    """Every transaction the sandbox holds, as its admin route lists them."""
    transactions: list[dict[str, Any]] = loads((await admin.get("/sandbox/transactions")).content)[
        "transactions"
    ]
    return transactions


async def _opening(
    settings: Settings,
    engine: Any,
    admin: httpx.AsyncClient,
    day_1: date,
    funding: Decimal,
    echo: Echo,
) -> list[Movement]:
    """Fjord Home funded its account at the provider the evening before; finance records that
    evening's closing, read from the back office, as the opening of its balance statements."""
    brand, day_0 = BALANCE_BRAND, day_1 - timedelta(days=1)
    movements = [
        await top_up(
            admin,
            brand,
            currency,
            funding,
            settled=evening_before(day_1, settings.zone),
            reference=f"fjord-funding-{currency.lower()}",
        )
        for currency in CURRENCIES
    ]
    echo(
        f"{brand.label} funded its account at the provider yesterday evening (top-ups of "
        + " and ".join(f"{funding:,} {currency}" for currency in CURRENCIES)
        + "); finance records yesterday's closings as the opening:"
    )
    listing = await _listing(admin)
    for currency in CURRENCIES:
        figure = back_office_balance(
            listing,
            movements,
            merchant=brand.name,
            currency=currency,
            through=day_0,
            zone=settings.zone,
        )
        echo(
            "  "
            + await asyncio.to_thread(record, engine, brand, currency, day_0, figure, BACK_OFFICE)
        )
    return movements


async def _closing(
    settings: Settings,
    engine: Any,
    admin: httpx.AsyncClient,
    day_1: date,
    movements: list[Movement],
    echo: Echo,
) -> None:
    """The next morning Fjord Home tops up its EUR, and finance records the first day's
    closings from the back office: NOK as it closed that day (it ties), EUR read after the
    morning's top-up (it breaks by it)."""
    brand = BALANCE_BRAND
    movements.append(await top_up(admin, brand, *MORNING_TOP_UP, reference="fjord-top-up-day-2"))
    listing = await _listing(admin)
    today = (await _sandbox_now(admin)).astimezone(settings.zone).date()
    echo(
        f"this morning {brand.label} tops up {MORNING_TOP_UP[1]:,} {MORNING_TOP_UP[0]}; finance "
        f"records yesterday's closings from the back office ({TIES} as it closed yesterday, "
        f"{BREAKS} read after this morning's top-up):"
    )
    for currency, through, note in (
        (TIES, day_1, BACK_OFFICE),
        (BREAKS, today, f"{BACK_OFFICE}, this morning"),
    ):
        figure = back_office_balance(
            listing,
            movements,
            merchant=brand.name,
            currency=currency,
            through=through,
            zone=settings.zone,
        )
        echo("  " + await asyncio.to_thread(record, engine, brand, currency, day_1, figure, note))


def _export(
    settings: Settings, engine: Any, work_dir: Path, fmt: JournalFormat, account: str | None = None
) -> str:
    """``recon journal export --format FMT [--account NAME] --out journal``, and what it wrote."""
    done = export_journal(settings, engine, work_dir / "journal", fmt=fmt, account=account)
    whose = f" of {account}" if account is not None else ""
    if done.batch is None:
        return f"journal{whose}: nothing to export"
    return (
        f"journal batch {done.batch} ({done.format}{whose}): {done.entries} entries, "
        f"{done.lines} lines: {', '.join(path.name for path in done.paths)}"
    )


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


async def _reconcile(
    settings: Settings, admin: httpx.AsyncClient, out_dir: Path, echo: Echo
) -> Nights:
    """Each brand's night (its pack in ``out_dir/NAME``), then the pack over both in ``out_dir``,
    as ``recon run`` does it."""
    as_of = await _sandbox_now(admin)
    options = RunOptions(out_dir=out_dir, as_of=as_of, email=False)
    nights = await asyncio.to_thread(run_nights, settings, options, settings.provider_accounts)
    labels = {a.name: a.label for a in settings.provider_accounts}
    for end in nights.ends:
        echo(f"{labels[end.account]}: {end.summary or end.line}")
    for line in nights.lines:
        echo(line)
    return nights


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
