"""The plain-text alternative of the report email: the top line, what needs action, the headline.

For mail clients that show no HTML and for people who read mail in a terminal. Same order as the
HTML report: what needs a person comes first.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd

from recon.constants import FlagStatus, RunStatus
from recon.report import morning, rollforward, views
from recon.report.accounts import split
from recon.report.fmt import money
from recon.report.html import missing_run_warning
from recon.report.journal import journal_text
from recon.report.model import ACCOUNT, OWNED_STATUSES, ReportInput
from recon.words import flag_words


def _cell(value: object) -> str:
    """A scalar as text; ``None``, ``NA`` and ``NaN`` as ``""``."""
    return "" if value is None or value is pd.NA or value != value else str(value)


def subject(data: ReportInput) -> str:
    """``recon 2026-11-20: 3 problems need action (1 new) · 2,114.77 DKK paid twice · 4 failed
    to re-pay or contact · 1,234 settled · 5 failed``: the problems, the most paid twice, tonight's
    failed payouts, then every settled and failed one."""
    c = views.counts(data)
    day = data.run.as_of.astimezone(ZoneInfo(data.timezone)).strftime("%Y-%m-%d")
    status = "" if data.run.status == RunStatus.COMPLETE else f" [{data.run.status}]"
    if data.several and status:
        status = f" [{data.run.status}: {', '.join(views.incomplete_nights(data))}]"
    twice = views.paid_twice_text(data)
    problems, repay = views.problems_text(c).split(" · ")
    return (
        f"recon {day}{status}: {problems}{f' · {twice}' if twice else ''} · {repay}"
        f" · {c.settled:,} settled · {c.failed:,} failed"
    )


def _stake(data: ReportInput) -> list[str]:
    """The money at stake, a line per currency, then a blank line (nothing when none)."""
    lines = []
    for code, parts, problems in views.stake_lines(data):
        count = f"{problems:,} problem{'' if problems == 1 else 's'}"
        lines.append(f"{code or 'No amount'}: {' · '.join([*parts, count])}")
    return [*lines, ""] if lines else []


def _moment(moment: datetime, timezone: str) -> str:
    """``2026-11-20 06:00 CET (Europe/Stockholm)``; ``2026-11-20 05:00 UTC`` when the zone's
    abbreviation is its name (not "UTC (UTC)")."""
    local = moment.astimezone(ZoneInfo(timezone))
    abbreviation = local.strftime("%Z")
    named = "" if abbreviation == timezone else f" ({timezone})"
    return f"{local:%Y-%m-%d %H:%M} {abbreviation}{named}"


def _who(data: ReportInput, r: Mapping[Hashable, Any]) -> str:
    """Of several accounts, a row's account label and a space in brackets; else nothing."""
    return f"[{data.label(str(r[ACCOUNT]))}] " if data.several else ""


def _headline_lines(payouts: pd.DataFrame) -> list[str]:
    lines = []
    for r in views.headline(payouts).to_dict("records"):
        cur = str(r["currency"])
        lines.append(
            f"{cur}: settled {money(r['settled_minor'], cur)} ({r['settled_count']:,})"
            f" · returned later {money(r['returned_minor'], cur)}"
            f" · net settled {money(r['net_minor'], cur)}"
            f" · in flight {money(r['in_flight_minor'], cur)} ({r['in_flight_count']:,})"
            f" · failed or aborted (never left) {money(r['failed_minor'], cur)}"
            f" ({r['failed_count']:,})"
            f" · unknown or unchecked {money(r['unconfirmed_minor'], cur)}"
            f" ({r['unconfirmed_count']:,})"
            f" · instructed {money(r['paid_out_minor'], cur)} ({r['paid_out_count']:,})"
        )
    return lines


def _by_account(data: ReportInput) -> list[str]:
    """Of several accounts, each one's night, problems and headline by currency."""
    if not data.several:
        return []
    lines = ["", "BY ACCOUNT"]
    for part in split(data):
        run = part.run
        night = f"run {run.run_id}, " if run.run_id is not None else ""
        lines.append(
            f"{data.label(run.provider_account)} ({run.provider_account}, {night}{run.status}):"
            f" {views.problems_text(views.counts(part))}"
        )
        lines += [f"  {line}" for line in _headline_lines(part.payouts)]
    return lines


def _failed_tonight(data: ReportInput, row_cap: int) -> list[str]:
    """Tonight's failed and aborted payouts: per currency, each code's advice once, the payouts."""
    failed = morning.failed_tonight(data)
    if failed.empty:
        return []
    lines = ["", f"FAILED TONIGHT: RE-PAY OR CONTACT ({len(failed):,})"]
    lines += [
        f"{r['currency']}: {money(r['amount_minor'], str(r['currency']))} "
        f"({r['count']:,} payout{'' if r['count'] == 1 else 's'})"
        for r in morning.by_currency(failed).to_dict("records")
    ]
    codes = morning.by_code(failed)
    for code, rows in codes.groupby("code", sort=False):
        counted = sum(int(n) for n in rows["count"])
        lines.append(f"* {code} ({counted:,}): {rows['advice'].iloc[0]}")
    for r in failed.head(row_cap).to_dict("records"):
        cur = _cell(r["currency"])
        amount = money(int(r["amount_minor"]), cur) if _cell(r["amount_minor"]) else ""
        ref = _cell(r["merchant_reference"])
        lines.append(
            f"- {_who(data, r)}{r['transaction_id']} {amount} {cur} {r['outcome']}, {r['code']}"
            + (f"; {ref}" if ref else "")
        )
    if len(failed) > row_cap:
        lines.append(f"  ... {len(failed) - row_cap:,} more in payouts.csv")
    return lines


def _people_sections(data: ReportInput, exc: pd.DataFrame, row_cap: int) -> list[str]:
    """What people own (acknowledged, snoozed) and what they resolved since the previous run."""
    lines: list[str] = []
    status = exc["status"].astype(object)
    for title, rows in (
        ("ACKNOWLEDGED", exc[status.isin(OWNED_STATUSES)]),
        ("RESOLVED SINCE THE PREVIOUS RUN", exc[status == FlagStatus.RESOLVED]),
    ):
        if rows.empty:
            continue
        lines += ["", f"{title} ({len(rows):,})"]
        for r in rows.head(row_cap).to_dict("records"):
            until = f" until {_cell(r['until_text'])[:10]}" if _cell(r["until_text"]) else ""
            note = f": {_cell(r['note'])}" if _cell(r["note"]) else ""
            finding = flag_words(r["flag"])
            lines.append(
                f"- {_who(data, r)}{_cell(r['exception_id'])} {finding}: {r['item_id']}, "
                f"{r['status']} by {_cell(r['owner']) or 'someone'}{until}{note}"
            )
        if len(rows) > row_cap:
            lines.append(f"  ... {len(rows) - row_cap:,} more in exceptions.csv")
    return lines


def render_text(data: ReportInput, *, row_cap: int = 50, max_gap: timedelta | None = None) -> str:
    """The report as plain text (UTF-8), exceptions first, at most ``row_cap`` of them listed."""
    c = views.counts(data)
    missing = missing_run_warning(data, max_gap)
    lines = [
        subject(data),
        f"As of {_moment(data.run.as_of, data.timezone)}"
        + (f", run {data.run.run_id}" if data.run.run_id is not None else "")
        + f", run status: {data.run.status}",
        *([f"Accounts: {views.nights_text(data)}"] if data.several else []),
        *([f"A RUN IS MISSING. {missing}"] if missing else []),
        *([views.standing_text(data)] if data.actions_since is not None else []),
        "",
        *_stake(data),
        f"NEEDS ACTION ({c.need_action:,}, {c.new:,} new)",
    ]
    exc = views.exceptions_table(data)
    open_exc = exc[exc["open"]]
    for r in open_exc.head(row_cap).to_dict("records"):
        cur = _cell(r["currency"])
        stake = _cell(r["at_stake_minor"])
        amount = "" if not cur or stake == "" else f"{money(int(stake), cur)} {cur} at stake"
        mark = "NEW " if r["status"] == FlagStatus.NEW else ""
        label = flag_words(r["flag"])
        finding = label.upper() if r["alarm"] else label
        eid = f" [{_cell(r['exception_id'])}]" if _cell(r["exception_id"]) else ""
        lines.append(f"- {mark}{_who(data, r)}{finding}: {r['item_id']} {amount}".rstrip() + eid)
        ref = _cell(r["merchant_reference"])
        code = _cell(r["error_code"])
        detail = "; ".join(x for x in (ref, code, _cell(r["detail"])) if x)
        if detail:
            lines.append(f"  {detail}")
        lines.append(f"  Action: {r['action']}")
    if len(open_exc) > row_cap:
        lines.append(f"  ... {len(open_exc) - row_cap:,} more in exceptions.csv")
    if open_exc.empty:
        lines.append("Nothing needs action.")
    lines += _failed_tonight(data, row_cap)
    lines += _people_sections(data, exc, row_cap)
    over = " (EVERY ACCOUNT)" if data.several else ""
    lines += ["", f"HEADLINE BY CURRENCY{over}", *_headline_lines(data.payouts)]
    lines += _by_account(data)
    changes, moves = views.changes_table(data)
    if not moves.empty:
        lines += ["", f"CHANGED SINCE THE PREVIOUS RUN ({len(changes):,})"]
        lines += [
            f"{m['previous']} -> {m['outcome']}: {m['count']:,}" for m in moves.to_dict("records")
        ]
    lines += rollforward.text_block(data)
    lines += journal_text(data)
    lines += ["", "The attached CSV files hold every row; report.html has the full report."]
    return "\n".join(lines) + "\n"
