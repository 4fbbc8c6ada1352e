"""The demo's provider balance and export: Fjord Home's money at the provider, its closings read
from the back office, and what the second night's export pull, match and statements came to.

Fjord Home funds its account at the provider the evening before the first day (a top-up of each
currency, through the sandbox's admin route) and finance records that evening's closing as the
opening. During the day it tops up NOK once more. The next morning it tops up EUR again, and
finance records the first day's closings: NOK as the back office showed it at the end of that day
(it ties), EUR read after the morning's top-up (it breaks by that top-up).

The sandbox has no balance of its own to ask, so the back office's figure is computed here from
the provider's side: the top-ups the demo booked and the sandbox's own records of the merchant's
transactions (``GET /sandbox/transactions``), each movement on its settlement day: a settled payout
out, its fee out (charged when the payout settled, or when it was created if it never did), a
returned-funds transaction in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import Engine, func, select

from recon.constants import TxState, TxType
from recon.demo.brands import FJORD, Brand
from recon.jsonparse import dumpb, loads
from recon.money import format_minor, to_minor
from recon.reconcile.balance import Line, Statement
from recon.report.balance import status_words
from recon.report.fmt import money
from recon.store.balance import balance_statements, record_closing
from recon.store.export_tables import provider_export_files
from recon.store.tables import provider_items

# Whose balance the demo closes, in which currency it ties and in which it breaks.
BALANCE_BRAND: Brand = FJORD
TIES, BREAKS = "NOK", "EUR"
# The evening before, the account funded in both currencies with enough for the day's payouts
# (FUNDING a payout: the demo's amounts are at most 2,500.00); during the first day, NOK once
# more; the next morning, EUR once more (read into the first day's EUR closing: the break).
FUNDING = Decimal("2000.00")
CURRENCIES = (TIES, BREAKS)
DAY_TOP_UP = (TIES, Decimal("20000.00"))
MORNING_TOP_UP = (BREAKS, Decimal("2500.00"))
BACK_OFFICE = "read from the provider's back office"
RECORDED_BY = "finance"


@dataclass(frozen=True, slots=True)
class Movement:
    """A top-up the demo booked, as the sandbox answered it."""

    currency: str
    amount_minor: int
    settled: datetime  # UTC


def _at(epoch: Any) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(float(epoch), UTC)


def _minor(amount: Any, currency: str) -> int:
    return to_minor(Decimal(str(amount)), currency)


async def top_up(
    admin: httpx.AsyncClient,
    brand: Brand,
    currency: str,
    amount: Decimal,
    *,
    settled: datetime | None = None,
    reference: str,
) -> Movement:
    """The brand's own money into its balance at the provider (``POST
    /sandbox/accounts/NAME/top_up``), settled at ``settled`` (default: the sandbox's now)."""
    body: dict[str, Any] = {"amount": amount, "currency": currency, "merchant_reference": reference}
    if settled is not None:
        body["settled"] = Decimal(int(settled.timestamp()))
    answer = await admin.post(f"/sandbox/accounts/{brand.name}/top_up", content=dumpb(body))
    answer.raise_for_status()
    booked = loads(answer.content)
    code = str(booked["currency_id"]).upper()
    when = _at(booked["settled"])
    assert when is not None
    return Movement(code, _minor(booked["amount"], code), when)


def evening_before(day: date, zone: ZoneInfo) -> datetime:
    """Eight in the evening of the day before ``day``, in ``zone``, as UTC."""
    return datetime.combine(day - timedelta(days=1), time(20), tzinfo=zone).astimezone(UTC)


def back_office_balance(
    transactions: Iterable[Mapping[str, Any]],
    movements: Iterable[Movement],
    *,
    merchant: str,
    currency: str,
    through: date,
    zone: ZoneInfo,
) -> int:
    """The merchant's balance in ``currency`` at the end of ``through`` (in ``zone``), in minor
    units: its top-ups, and from the sandbox's records its settled payouts, their fees and its
    returned funds, each counted on its settlement day."""

    def by_then(at: datetime | None) -> bool:
        return at is not None and at.astimezone(zone).date() <= through

    total = sum(m.amount_minor for m in movements if m.currency == currency and by_then(m.settled))
    for tx in transactions:
        if tx["merchant_id"] != merchant or str(tx["currency_id"]).upper() != currency:
            continue
        settled = _at(tx["settled"])
        if int(tx["type"]) == int(TxType.RETURNED_FUNDS) and by_then(settled):
            total += _minor(tx["amount"], currency)
        if int(tx["type"]) != int(TxType.PAYOUT):
            continue
        if int(tx["state"]) == int(TxState.SETTLED) and by_then(settled):
            total -= _minor(tx["amount"], currency)
        if tx["fee_id"] is not None and by_then(settled or _at(tx["created"])):
            total -= _minor(tx["fee_amount"], currency)
    return total


def record(
    engine: Engine, brand: Brand, currency: str, day: date, closing_minor: int, note: str
) -> str:
    """Keep a closing as ``recon balance record`` does; what the demo says about it."""
    kept, _ = record_closing(
        engine,
        account=brand.name,
        currency=currency,
        day=day,
        closing_minor=closing_minor,
        note=note,
        by=RECORDED_BY,
    )
    return (
        f"recon balance record --account {brand.name} --date {day.isoformat()} "
        f"--currency {currency} --closing {format_minor(closing_minor, currency)}: "
        f"record {kept.record_id} ({note})"
    )


def export_lines(engine: Engine, labels: Mapping[str, str], saved: Mapping[str, int]) -> list[str]:
    """What the night's pull stored per account, and the polls the export saved."""
    f = provider_export_files.c
    query = select(f.provider_account, func.count(), func.sum(f.rows)).group_by(f.provider_account)
    with engine.connect() as conn:
        pulled = {str(a): (int(n), int(rows or 0)) for a, n, rows in conn.execute(query)}
    lines = [
        "the provider's export, pulled by the second night (RECON_PROVIDER_EXPORT=api): "
        + "; ".join(
            f"{label} {pulled.get(name, (0, 0))[0]} file(s), {pulled.get(name, (0, 0))[1]:,} rows"
            for name, label in labels.items()
        )
    ]
    lines.append(
        "polls saved: payouts decided from the export without asking the provider: "
        + "; ".join(f"{label} {saved.get(name, 0):,}" for name, label in labels.items())
    )
    return lines


def named_by_export(engine: Engine) -> set[str]:
    """The ids the record lacks that the export was the first to name."""
    i = provider_items.c
    with engine.connect() as conn:
        return set(conn.scalars(select(i.transaction_id).where(i.named_by == "export")))


def statement_lines(engine: Engine, zone: ZoneInfo, brand: Brand) -> list[str]:
    """Each of the brand's balance statements in two lines: its status, and its identity."""
    with engine.connect() as conn:
        found, _ = balance_statements(conn, zone, brand.name)
    return [line for s in found for line in _statement_lines(s, brand)]


def _statement_lines(s: Statement, brand: Brand) -> list[str]:
    def amount(line: Line) -> str:
        return money(s.amount(line), s.currency)

    period = s.period_start.isoformat()
    if s.period_end != s.period_start:
        period += f" to {s.period_end.isoformat()}"
    return [
        f"balance statement of {brand.label} in {s.currency}, {period}: {status_words(s)}",
        f"  opening {amount(Line.OPENING)} + top-ups {amount(Line.TOP_UPS)} + returned funds "
        f"{amount(Line.RETURNED_FUNDS)} - payouts settled {amount(Line.PAYOUTS_SETTLED)} - fees "
        f"{amount(Line.FEES)} - merchant withdrawals {amount(Line.MERCHANT_WITHDRAWALS)} = "
        f"{amount(Line.COMPUTED_CLOSING)}; recorded {amount(Line.RECORDED_CLOSING)}",
    ]
