"""The demo's morning read in the terminal: what report.html puts first, as lines.

Read from the store through the report's own views, so the terminal says what the page says: the
top line's two counts over both brands and each brand's own, the first finding in Needs action (a
double payment when there is one), and tonight's failed payouts per error code, with its advice.
"""

from __future__ import annotations

from sqlalchemy import Engine

from recon.report.accounts import combine, split
from recon.report.build import from_store
from recon.report.fmt import money
from recon.report.model import ReportInput
from recon.report.morning import by_code, failed_tonight
from recon.report.views import counts, exceptions_table, problems_text, stake_lines
from recon.settings import Settings
from recon.words import flag_words


def latest_nights(engine: Engine, settings: Settings) -> ReportInput:
    """The latest night of every account, combined, as ``recon report`` reads it."""
    accounts = settings.provider_accounts
    nights = [
        from_store(
            engine,
            timezone=settings.timezone,
            window_days=settings.report_days,
            account=account.name,
        )
        for account in accounts
    ]
    return combine(nights, labels={a.name: a.label for a in accounts})


def morning_lines(data: ReportInput, *, night: str) -> list[str]:
    """The nights' morning read in a few lines."""
    lines = [f"the morning read of {night}: {problems_text(counts(data))}"]
    if data.several:
        lines += [
            f"  {data.label(part.run.provider_account)}: {problems_text(counts(part))}"
            for part in split(data)
        ]
    lines += [
        f"  at stake in {code or 'no currency'}: "
        + " · ".join([*parts, f"{n:,} problem{'' if n == 1 else 's'}"])
        for code, parts, n in stake_lines(data)
    ]
    exc = exceptions_table(data)
    first = exc[exc["open"]].head(1).to_dict("records")
    for r in first:
        cur = str(r["currency"])
        name = flag_words(r["flag"]).upper() if r["alarm"] else flag_words(r["flag"])
        brand = f" of {data.label(str(r['provider_account']))}" if data.several else ""
        lines.append(
            f"  first in Needs action, {name}: payout {r['item_id']}{brand} "
            f"{money(int(r['amount_minor']), cur)} {cur}: {r['detail']}"
        )
    failed = failed_tonight(data)
    for code, rows in by_code(failed).groupby("code", sort=False):
        count = sum(int(n) for n in rows["count"])
        amounts = " + ".join(
            f"{money(int(m), str(cur))} {cur}"
            for m, cur in zip(rows["amount_minor"], rows["currency"], strict=True)
        )
        lines.append(
            f"  failed tonight, re-pay or contact: {count:,} payout{'' if count == 1 else 's'} "
            f"{code}, {amounts}: {rows['advice'].iloc[0]}"
        )
    return lines
