"""``recon fees --month YYYY-MM``: what the month's payouts cost, per account and currency.

The payouts created in the month (in ``RECON_TIMEZONE``), those settled and their amount, the fees
the provider charged and the agreed ones, the difference, the effective rate in basis points, and
how many fee findings stand open on them: a block per provider account asked about (every
configured account, or ``--account``'s).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from zoneinfo import ZoneInfo

from recon.constants import FIRST_DAY, LAST_DAY
from recon.errors import InputError
from recon.store.db import schema_engine
from recon.store.fee_reads import month_fees
from recon.words import money

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def month_bounds(month: str, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The first moment of ``month`` (``2026-11``) and of the next, in ``zone``."""
    found = _MONTH.match(month.strip())
    if (
        found is None
        or not 1 <= int(found[2]) <= 12
        or not FIRST_DAY.year <= int(found[1]) <= LAST_DAY.year
    ):
        raise InputError(
            f"--month: give a month as YYYY-MM (2026-11), from {FIRST_DAY:%Y-%m} to "
            f"{LAST_DAY:%Y-%m}, not {month!r}"
        )
    year, number = int(found[1]), int(found[2])
    start = datetime(year, number, 1, tzinfo=zone)
    end = datetime(year + number // 12, number % 12 + 1, 1, tzinfo=zone)
    return start, end


def _rate(charged: int, settled: int) -> str:
    if not settled:
        return "-"
    bps = (Decimal(charged) * 10000 / Decimal(settled)).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_EVEN
    )
    return f"{bps} bp"


def fees_text(database_url: str, month: str, *, accounts: Sequence[str], zone: ZoneInfo) -> str:
    """The month's fee figures as lines: per account in ``accounts``, a block per currency."""
    start, end = month_bounds(month, zone)
    with schema_engine(database_url) as engine, engine.connect() as conn:
        found = {name: month_fees(conn, start, end, account=name) for name in accounts}
    lines: list[str] = []
    for name, rows in found.items():
        lines.append(f"Fees of payouts created in {month} ({zone.key}), account {name}")
        if not rows:
            lines.append("  no payouts created in that month")
        for r in rows:
            c = r.currency
            lines += [
                f"  {c}: {r.payouts:,} payouts, {r.settled:,} settled"
                f" for {money(r.settled_minor, c)}",
                f"    fees charged {money(r.charged_minor, c)}, "
                + (
                    "no agreed price"
                    if r.expected_minor is None
                    else f"agreed {money(r.expected_minor, c)},"
                    f" difference {money(r.difference_minor or 0, c)}"
                ),
                f"    settled with fees {money(r.settled_minor + r.charged_minor, c)};"
                f" effective rate {_rate(r.charged_minor, r.settled_minor)};"
                f" open fee findings {r.findings:,}",
            ]
    return "\n".join(lines)
