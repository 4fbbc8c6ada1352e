"""report.html: the run's findings for people, rendered with Jinja2 from ``reports/report.html``.

Autoescape is on and undefined names fail, so every provider or merchant text is escaped and a
missing value breaks a test instead of printing a blank. The CSS is inlined in the page (email
clients drop ``<link>``), there is no JavaScript, and the chart is an ``<img>``: a ``data:`` URI
in the file, a ``cid:`` reference in the email.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
import pandas as pd

from recon.constants import FlagStatus
from recon.durations import duration_text
from recon.reconcile.rollforward import ROLLFORWARD_BREAK
from recon.report import morning, rollforward, views
from recon.report.accounts import split
from recon.report.balance import balance_parts
from recon.report.chart import DEFAULT_CHART_SIZE, PIXEL_RATIO
from recon.report.fees import fee_table
from recon.report.fmt import money
from recon.report.journal import (
    EVENT_WORDS,
    ROLE_WORDS,
    check_words,
    journal_groups,
    journal_lines,
)
from recon.report.model import ACCOUNT, OWNED_STATUSES, ReportInput
from recon.resources import reports_dir
from recon.words import flag_label, local_time


@dataclass(frozen=True)
class Table:
    """Rows of one capped table, and where the rest are."""

    rows: list[dict[str, Any]]
    total: int
    csv: str
    columns: list[str] = field(default_factory=list)

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


# The footer's words for RunCounts.provider (recon.reconcile.unrecorded's COUNT_*): one, many.
_PROVIDER_COUNTS: dict[str, tuple[str, str]] = {
    "unrecorded_payouts": ("payout", "payouts"),
    "other_types": ("of another type (a payment, a refund)", "of other types (payments, refunds)"),
    "unknown": ("unknown to the provider", "unknown to the provider"),
    "over_cap": ("left for the next run", "left for the next run"),
}


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(reports_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["thousands"] = lambda n: f"{int(n):,}"
    return env


def _text(value: object) -> str:
    """A scalar as text; ``None``, ``NA`` and ``NaN`` as ``""``."""
    return "" if value is None or value is pd.NA or value != value else str(value)


def _minor(value: object) -> int | None:
    return None if value is None or value is pd.NA else int(str(value))


def _local(moment: datetime | None, zone: ZoneInfo) -> str:
    return "" if moment is None else local_time(moment, zone)


def _short(iso: str) -> str:
    """``2026-11-20T09:15:00+01:00`` -> ``2026-11-20 09:15`` (the zone is named once, on top)."""
    return iso[:16].replace("T", " ")


_LABEL = "_account_label"  # a row's account as the report names it (of several accounts)


def _capped(frame: pd.DataFrame, cap: int, csv: str, row: Any) -> Table:
    rows = [row(r) for r in frame.head(cap).to_dict("records")]
    return Table(rows=rows, total=len(frame), csv=csv)


def _labelled(frame: pd.DataFrame, data: ReportInput) -> pd.DataFrame:
    """Of several accounts, each row with its account's label (escaped by the template)."""
    if not data.several:
        return frame
    labels = {a: data.label(a) for a in data.accounts}
    return frame.assign(**{_LABEL: frame[ACCOUNT].astype(object).map(labels)})


# The rows of each currency's card: metric name, label, whether a payout count goes with it.
# Settled first (the money that reached the banks), the total instructed last.
_CARD_ROWS: list[tuple[str, str, bool]] = [
    ("settled", "Settled", True),
    ("returned", "Returned later", True),
    ("net", "Net settled", False),
    ("in_flight", "In flight", True),
    ("failed", "Failed or aborted (never left)", True),
    ("unconfirmed", "Unknown or unchecked", True),
    ("paid_out", "Instructed (any outcome)", True),
]


def _headline(data: ReportInput) -> dict[str, Any]:
    """A card per currency, its metrics as rows: a card fits a 390 px phone whatever the number
    of currencies (a table of currencies as columns scrolled inside its own box)."""
    cards = [
        {
            "currency": str(r["currency"]),
            "rows": [
                {
                    "name": name,
                    "label": label,
                    "amount": money(r[f"{name}_minor"], str(r["currency"])),
                    "count": r[f"{name}_count"] if counted else None,
                }
                for name, label, counted in _CARD_ROWS
            ],
        }
        for r in views.headline(data.payouts).to_dict("records")
    ]
    return {"cards": cards}


def _change_groups(changes: pd.DataFrame, row_cap: int) -> list[dict[str, Any]]:
    """The listed kinds of change, in :data:`views.CHANGE_KINDS` order, each capped on its own so
    that no kind is pushed out by another."""
    groups = []
    for kind, title in views.CHANGE_KINDS:
        rows = changes[changes["kind"] == kind]
        if len(rows):
            table = _capped(rows, row_cap, "payouts.csv", _change_row)
            groups.append({"kind": kind, "title": title, "table": table})
    return groups


def _routine(changes: pd.DataFrame) -> list[dict[str, Any]]:
    """Routine moves (pending -> settled...) as a count and amount per currency."""
    moves: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in views.routine_changes(changes).to_dict("records"):
        cur = str(r["currency"])
        moves.setdefault((str(r["previous"]), str(r["outcome"])), []).append(
            {"count": r["count"], "amount": money(r["amount_minor"], cur), "currency": cur}
        )
    return [
        {"previous": previous, "outcome": outcome, "currencies": currencies}
        for (previous, outcome), currencies in moves.items()
    ]


def _exception_row(r: dict[str, Any]) -> dict[str, Any]:
    cur = _text(r["currency"])
    return {
        "account": _text(r.get(_LABEL, "")),
        "new": r["status"] == FlagStatus.NEW,
        "double": bool(r["alarm"]),
        "status": _text(r["status"]),
        "flag": _text(r["flag"]),
        "label": flag_label(r["flag"]),
        "item_id": _text(r["item_id"]),
        "item_kind": _text(r["item_kind"]),
        "reference": _text(r["merchant_reference"]),
        "amount": money(_minor(r["amount_minor"]), cur) if cur else "",
        "at_stake": money(_minor(r["at_stake_minor"]), cur) if cur else "",
        "currency": cur,
        "error_code": _text(r["error_code"]),
        "created": _short(_text(r["created"])),
        "detail": _text(r["detail"]),
        "action": _text(r["action"]),
        "exception_id": _text(r["exception_id"]),
        "members": [m for m in _text(r["members"]).split(";") if m],
        "owner": _text(r["owner"]),
        "note": _text(r["note"]),
        "until": _short(_text(r["until_text"])),
        "age": _text(r["age"]),
        "previous_resolution": _text(r["previous_resolution"]),
    }


def _failed_row(r: dict[str, Any]) -> dict[str, Any]:
    cur = _text(r["currency"])
    return {
        "account": _text(r.get(_LABEL, "")),
        "transaction_id": _text(r["transaction_id"]),
        "reference": _text(r["merchant_reference"]),
        "outcome": _text(r["outcome"]),
        "amount": money(_minor(r["amount_minor"]), cur),
        "currency": cur,
        "error_code": _text(r["error_code"]),
        "created": _short(_text(r["created_text"])),
        "action": _text(r["action"]),
    }


def _failed_tonight(data: ReportInput, row_cap: int) -> dict[str, Any]:
    """Tonight's failed payouts: the amount per currency, each code's advice once, the rows."""
    failed = morning.failed_tonight(data)
    codes: dict[str, dict[str, Any]] = {}
    for r in morning.by_code(failed).to_dict("records"):
        entry = codes.setdefault(
            r["code"], {"code": r["code"], "advice": r["advice"], "count": 0, "amounts": []}
        )
        entry["count"] += r["count"]
        entry["amounts"].append(f"{money(r['amount_minor'], str(r['currency']))} {r['currency']}")
    currencies = [
        {**r, "amount": money(r["amount_minor"], str(r["currency"]))}
        for r in morning.by_currency(failed).to_dict("records")
    ]
    table = _capped(_labelled(failed.assign(action=""), data), row_cap, "payouts.csv", _failed_row)
    return {"table": table, "currencies": currencies, "codes": list(codes.values())}


def _return_row(r: dict[str, Any]) -> dict[str, Any]:
    cur = _text(r["currency"])
    payout = money(_minor(r["payout_minor"]), cur)
    return {
        "account": _text(r.get(_LABEL, "")),
        "return_id": _text(r["return_id"]),
        "original_id": _text(r["original_id"]),
        "reference": _text(r["merchant_reference"]),
        "payout_amount": f"{payout} {cur}" if payout and cur else payout,
        "payout_outcome": _text(r["payout_outcome"]),
        "amount": money(_minor(r["amount_minor"]), cur),
        "currency": cur,
        "matched": bool(r["matched"]),
        "confirmed": bool(r["confirmed"]),
    }


def _change_row(r: dict[str, Any]) -> dict[str, Any]:
    cur = _text(r["currency"])
    return {
        "account": _text(r.get(_LABEL, "")),
        "transaction_id": _text(r["transaction_id"]),
        "previous": _text(r["previous"]),
        "outcome": _text(r["outcome"]),
        "amount": money(_minor(r["amount_minor"]), cur),
        "currency": cur,
    }


def _journal_row(r: dict[str, Any]) -> dict[str, Any]:
    cur = _text(r["currency"])
    debit, credit = int(r["debit_minor"]), int(r["credit_minor"])
    return {
        "account": _text(r.get(_LABEL, "")),
        "first": bool(r["_first"]),
        "number": int(r["number"]),
        "journal_id": _text(r["journal_id"]),
        "event": EVENT_WORDS.get(str(r["event"]), str(r["event"])),
        "transaction_id": _text(r["transaction_id"]),
        "reference": _text(r["merchant_reference"]),
        "posting_date": r["posting_date"].isoformat(),
        "event_date": r["event_date"].isoformat(),
        "late": bool(r["late"]),
        "reverses": _text(r["reverses"]),
        "ledger": _text(r["account"]),
        "role": ROLE_WORDS.get(str(r["role"]), str(r["role"])),
        # A line books one side: the other is left blank, as a ledger shows it.
        "debit": money(debit, cur) if debit or not credit else "",
        "credit": money(credit, cur) if credit else "",
        "currency": cur,
    }


def _journal(data: ReportInput, row_cap: int) -> dict[str, Any] | None:
    """The journal entries the nights made: their lines (capped; an entry's own words on its
    first line), then per account and currency each ledger account's debits and credits and a
    check that the debits equal the credits. None without a journal configured."""
    if data.journal is None:
        return None
    lines = _labelled(journal_lines(data), data)
    first = ~lines.duplicated([ACCOUNT, "journal_id"])
    table = _capped(lines.assign(_first=first), row_cap, "journal.csv", _journal_row)
    groups = []
    for check, mine in journal_groups(data):
        account, cur = check[ACCOUNT], str(check["currency"])
        groups.append(
            {
                "account": data.label(str(account)) if data.several else "",
                "currency": cur,
                "rows": [
                    {
                        "ledger": str(t["account"]),
                        "role": ROLE_WORDS.get(str(t["role"]), str(t["role"])),
                        "debit": money(int(t["debit_minor"]), cur),
                        "credit": money(int(t["credit_minor"]), cur),
                    }
                    for t in mine
                ],
                "debit": money(int(check["debit_minor"]), cur),
                "credit": money(int(check["credit_minor"]), cur),
                "balanced": bool(check["balanced"]),
                "check": check_words(check),
            }
        )
    return {"lines": table, "groups": groups}


def chart_data_uri(png: bytes) -> str:
    """The chart as a ``data:`` URI, for the report file opened in a browser."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def missing_run_warning(data: ReportInput, max_gap: timedelta | None) -> str | None:
    """A sentence when the run compared with is older than ``max_gap`` (``RECON_MAX_RUN_AGE``)
    before this one: a night's run is missing, and "changed since" spans more than one night.
    Of several accounts, one per account whose night it is, each after its label."""
    said = []
    for run in data.nights:
        if max_gap is None or run.previous_as_of is None:
            continue
        gap = run.as_of - run.previous_as_of
        if gap <= max_gap:
            continue
        zone = ZoneInfo(data.timezone)
        who = f"{data.label(run.provider_account)}: " if data.several else ""
        said.append(
            f"{who}The previous complete run, run {run.previous_run_id}, was as of "
            f"{_local(run.previous_as_of, zone)}, {duration_text(gap)} before this one (more "
            f"than RECON_MAX_RUN_AGE, {duration_text(max_gap)}): at least one run is missing, "
            "and the changes below cover the whole gap."
        )
    return " ".join(said) or None


def chart_size(png: bytes | None) -> tuple[int, int]:
    """The chart's size in CSS pixels: its PNG's pixels over :data:`chart.PIXEL_RATIO` (drawn at
    twice the size it is shown, so it stays sharp on a phone's screen)."""
    if png is None or len(png) < 24 or png[12:16] != b"IHDR":
        return DEFAULT_CHART_SIZE
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return width // PIXEL_RATIO, height // PIXEL_RATIO


def _accounts(data: ReportInput, zone: ZoneInfo) -> list[dict[str, Any]]:
    """Of several accounts, each one's section: its night, problems, headline by currency, totals
    and statement (none of one account: the report is its section)."""
    if not data.several:
        return []
    out = []
    for part in split(data):
        run = part.run
        out.append(
            {
                "anchor": f"account-{run.provider_account}",
                "name": run.provider_account,
                "label": data.label(run.provider_account),
                "run_id": run.run_id,
                "status": str(run.status),
                "as_of": _local(run.as_of, zone),
                "payouts": len(part.payouts),
                "problems": views.problems_text(views.counts(part)),
                "headline": _headline(part),
                "totals": _totals(part),
                "statement": rollforward.statement(part),
                "note": part.rollforward_note,
            }
        )
    return out


def _totals(data: ReportInput) -> list[dict[str, Any]]:
    return [
        {
            "currency": r["currency"],
            "outcome": r["outcome"],
            "window_count": r["window_count"],
            "window_amount": money(r["window_minor"], str(r["currency"])),
            "month_count": r["month_count"],
            "month_amount": money(r["month_minor"], str(r["currency"])),
        }
        for r in views.totals_table(data).to_dict("records")
    ]


def report_context(
    data: ReportInput,
    *,
    row_cap: int,
    chart_src: str | None,
    max_gap: timedelta | None = None,
    chart_png: bytes | None = None,
) -> dict[str, Any]:
    """Everything the template shows, as plain values (amounts already text)."""
    data.check()
    zone = ZoneInfo(data.timezone)
    run = data.run
    exc = _labelled(views.exceptions_table(data), data)
    open_exc = exc[exc["open"]]
    status = exc["status"].astype(object)
    changes, moves = views.changes_table(data)
    changes = _labelled(changes, data)
    aging_rows = [
        {
            "currency": r["currency"],
            "bucket": r["bucket"],
            "created_count": r["created_count"],
            "created_amount": money(r["created_minor"], str(r["currency"])),
            "eta_count": r["eta_count"],
            "eta_amount": money(r["eta_minor"], str(r["currency"])),
        }
        for r in views.aging(data).to_dict("records")
    ]
    outcomes = [
        {**r, "amount": money(r["amount_minor"], str(r["currency"]))}
        for r in views.payout_summary(data).to_dict("records")
    ]
    return {
        "date": run.as_of.astimezone(zone).strftime("%Y-%m-%d"),
        "timezone": data.timezone,
        "standing": views.standing_text(data),
        "run": {
            "id": run.run_id,
            "status": run.status,
            "as_of": _local(run.as_of, zone),
            "started_at": _local(run.started_at, zone),
            "finished_at": _local(run.finished_at, zone),
            "duration": "" if run.duration_seconds is None else f"{run.duration_seconds:,.1f} s",
            "requests": run.requests,
            "rps": "" if run.requests_per_second is None else f"{run.requests_per_second:,.1f}",
            "previous_id": run.previous_run_id,
            "polls": [(reason, count) for reason, count in run.polls.items() if count],
            "polls_saved": run.polls_saved,
            "provider": [
                (count, _PROVIDER_COUNTS.get(what, (what, what))[count != 1])
                for what, count in run.provider.items()
                if count
            ],
        },
        "counts": views.counts(data),
        "problems": views.problems_text(views.counts(data)),
        "stake": [
            {"currency": code, "parts": parts, "problems": n}
            for code, parts, n in views.stake_lines(data)
        ],
        "payout_total": len(data.payouts),
        "headline": _headline(data),
        "exceptions": _capped(open_exc, row_cap, "exceptions.csv", _exception_row),
        "acknowledged": _capped(
            exc[status.isin(OWNED_STATUSES)], row_cap, "exceptions.csv", _exception_row
        ),
        "resolved": _capped(
            exc[status == FlagStatus.RESOLVED], row_cap, "exceptions.csv", _exception_row
        ),
        "cleared": _capped(
            exc[status == FlagStatus.CLEARED], row_cap, "exceptions.csv", _exception_row
        ),
        "failed": _capped(
            _labelled(views.failed_table(data), data), row_cap, "payouts.csv", _failed_row
        ),
        "tonight": _failed_tonight(data, row_cap),
        "outcomes": outcomes,
        "rollforward": {
            "statement": rollforward.statement(data),
            "findings": rollforward.findings_words(data),
            "rows": rollforward.rows(data),
            "note": data.rollforward_note,
            "break_label": ROLLFORWARD_BREAK.label,
        },
        "returns": _capped(
            _labelled(views.returns_table(data), data), row_cap, "returns.csv", _return_row
        ),
        "aging": aging_rows,
        "changes": _capped(changes, row_cap, "payouts.csv", _change_row),
        "change_groups": _change_groups(changes, row_cap),
        "routine": _routine(changes),
        "moves": moves.to_dict("records"),
        "chart_src": chart_src,
        "chart_size": chart_size(chart_png),
        "missing_run": missing_run_warning(data, max_gap),
        "window_days": f"{data.window_days:g}",
        "fees": fee_table(data),
        "journal": _journal(data, row_cap),
        "balance": balance_parts(data),
        "totals": _totals(data),
        "several": data.several,
        "accounts": _accounts(data, zone),
        "incomplete": views.incomplete_nights(data) if data.several else [],
    }


def render_report(
    data: ReportInput,
    *,
    row_cap: int,
    chart_png: bytes | None,
    chart_cid: str | None = None,
    max_gap: timedelta | None = None,
) -> str:
    """report.html as a string. The chart is a ``data:`` URI, or ``cid:<chart_cid>`` when given.

    Tables longer than ``row_cap`` rows show the first ``row_cap`` and say which CSV holds the rest.
    """
    if chart_cid is not None:
        chart_src: str | None = f"cid:{chart_cid}"
    elif chart_png is not None:
        chart_src = chart_data_uri(chart_png)
    else:
        chart_src = None
    context = report_context(
        data, row_cap=row_cap, chart_src=chart_src, max_gap=max_gap, chart_png=chart_png
    )
    return _environment().get_template("report.html").render(context)
