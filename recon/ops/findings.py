"""``recon exceptions …`` and ``recon show``: the exception queue people work.

Reads and writes go through :mod:`recon.store.cases`; this module parses what a person typed or
sent back, and formats what they read.
"""

from __future__ import annotations

import csv
import getpass
import io
import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection

from recon.constants import CaseAction, CaseState
from recon.decision import ActionRequest, Applied
from recon.errors import InputError
from recon.fields import field_problems
from recon.ingest.allornothing import Problems
from recon.money import format_minor
from recon.reconcile.cases import plan_actions
from recon.reconcile.finding import read_facts
from recon.reconcile.kinds import URGENCY
from recon.report.details import case_detail, change_note, detail
from recon.store.cases import (
    CaseView,
    case_actions,
    case_record,
    case_runs,
    cases_by_id,
    list_cases,
    write_actions,
)
from recon.store.db import schema_engine, write_transaction
from recon.store.lookup import ItemFacts, item_facts
from recon.textsafe import neutralise_text, terminal_text
from recon.words import flag_label, flag_words, local_time

FORMATS = ("table", "csv", "json")
LIST_COLUMNS = (
    "exception_id",
    "provider_account",
    "state",
    "exception",
    "label",
    "item_kind",
    "item_id",
    "amount",
    "currency",
    "merchant_reference",
    "first_seen",
    "owner",
    "until",
    "note",
    "detail",
)
# The table a person reads: the finding with its label, the amount with its currency.
_TABLE_COLUMNS = (
    "exception_id",
    "state",
    "finding",
    "item_id",
    "amount",
    "merchant_reference",
    "first_seen",
    "owner",
    "until",
    "note",
)
LIST_IDS = frozenset(
    {"exception_id", "provider_account", "item_id"}
)  # bare when plain, as in the report's id columns
DEFAULT_STATES = (CaseState.OPEN, CaseState.ACKNOWLEDGED, CaseState.SNOOZED)


def default_by() -> str:
    """Who acts when ``--by`` is not given: the operating-system user."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment or the password database
        return "unknown"


def until_of(day: date, zone: ZoneInfo) -> datetime:
    """A snooze's end: the start of ``day`` in the report's timezone."""
    return datetime.combine(day, time(0), tzinfo=zone)


def perform(
    database_url: str, requests: Sequence[ActionRequest], *, now: datetime, source: str
) -> list[Applied]:
    """Apply the requests all together, or none (``InputError`` lists every problem).

    Each note and ``by`` is checked first (:func:`recon.fields.field_problems`): nothing reaches
    the database that it would refuse or that would swell every report.
    """
    problems = Problems(source, outcome="nothing was changed")
    for request in requests:
        problems.add(request.where, field_problems(request.note, request.by))
        problems.add(request.where, field_problems(None, request.decided_by))
    if problems:
        raise problems.error()
    with schema_engine(database_url) as engine, write_transaction(engine) as conn:
        return act(conn, requests, now=now, source=source)


def act(
    conn: Connection, requests: Sequence[ActionRequest], *, now: datetime, source: str
) -> list[Applied]:
    """Read the cases named, let the core check the requests, write them: all or none, in the
    caller's transaction (the checks and the writes see the same cases)."""
    cases = cases_by_id(conn, (r.exception_id for r in requests))
    changes, problems = plan_actions(requests, cases, now=now)
    if problems:
        refused = Problems(source, outcome="nothing was changed")
        for where, problem in problems:
            refused.add(where, [problem])
        raise refused.error()
    write_actions(conn, changes, source=source)
    return [
        Applied(c.request.exception_id, c.request.action, c.previous_state, c.state)
        for c in changes
    ]


def requests_from_file(
    path: Path, *, by: str, zone: ZoneInfo, today: date, max_bytes: int
) -> list[ActionRequest]:
    """The resolutions filled in a CSV or workbook recon wrote (or any with the same columns).

    ``by`` is who runs ``apply`` and is recorded as such; a row's own ``by`` is recorded beside it
    as who decided, and owns the case."""
    from recon.ingest.resolutions import read_resolutions

    rows = read_resolutions(path, today=today, max_bytes=max_bytes)
    return [
        ActionRequest(
            exception_id=row.exception_id,
            action=CaseAction(row.action),
            note=row.note,
            by=by,
            decided_by=row.by,
            until=until_of(row.until, zone) if row.until is not None else None,
            where=f"{path.name} {row.sheet + ' ' if row.sheet else ''}row {row.row}",
        )
        for row in rows
    ]


def applied_lines(applied: Sequence[Applied]) -> list[str]:
    """One line per applied action, then a total."""
    lines = [terminal_text(f"{a.exception_id}: {a.previous_state} -> {a.state}") for a in applied]
    noun = "exception" if len(applied) == 1 else "exceptions"
    return [*lines, f"{len(applied)} {noun} changed"]


def list_text(
    database_url: str,
    *,
    states: Iterable[str],
    flags: Iterable[str],
    fmt: str,
    zone: ZoneInfo,
    accounts: Collection[str] | None = None,
) -> str:
    """``recon exceptions list`` in one of :data:`FORMATS`; ``accounts``: only these provider
    accounts' cases (``--account``; None: every account)."""
    wanted = list(states) or [s.value for s in DEFAULT_STATES]
    closed = {CaseState.RESOLVED.value, CaseState.CLEARED.value}
    with schema_engine(database_url) as engine, engine.connect() as conn:
        cases = list_cases(
            conn,
            states=wanted,
            flags=list(flags),
            include_ended=bool(closed & set(wanted)),
            account=None,
        )
        if accounts is not None:
            cases = [c for c in cases if c.provider_account in accounts]
        facts: dict[tuple[str, str, str], ItemFacts] = {}
        for account in dict.fromkeys(c.provider_account for c in cases):
            mine = [(c.item_kind, c.item_id) for c in cases if c.provider_account == account]
            facts |= {
                (account, *key): value
                for key, value in item_facts(conn, mine, account=account).items()
            }
    rows = [
        _list_row(c, facts.get((c.provider_account, c.item_kind, c.item_id)), zone)
        for c in _in_order(cases)
    ]
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False)
    if fmt == "csv":
        # The report's CSV rule (recon.textsafe): a cell a spreadsheet would run is neutralised.
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=LIST_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(
            {k: neutralise_text(str(v), id_=k in LIST_IDS) for k, v in row.items()} for row in rows
        )
        return out.getvalue().rstrip("\n")
    if not rows:
        return "No exceptions with status " + ", ".join(wanted) + "."
    shown = [
        {
            **row,
            "finding": flag_words(row["exception"]),
            "amount": f"{Decimal(row['amount']):,} {row['currency']}" if row["amount"] else "",
        }
        for row in rows
    ]
    table = _table(shown, _TABLE_COLUMNS)
    return f"{table}\n{_counts(cases)}"


def _in_order(cases: Sequence[CaseView]) -> list[CaseView]:
    """The report's order (Needs action): what needs action, then the owned, then the closed;
    in each, the most urgent kind first, then the most money at stake, then the newest run's
    first, each run's ids as numbers (E2-2 before E2-10)."""
    group = {CaseState.OPEN: 0, CaseState.ACKNOWLEDGED: 1, CaseState.SNOOZED: 1}

    def key(case: CaseView) -> tuple[int, int, int, int, int]:
        stake = (read_facts(case.last_facts) or {}).get("at_stake_minor")
        run, _, n = case.exception_id.removeprefix("E").partition("-")
        numbers = (int(run), int(n)) if run.isdigit() and n.isdigit() else (0, 0)
        urgency = URGENCY.get(case.flag, len(URGENCY))
        run_first = (-numbers[0], numbers[1])
        return (group.get(CaseState(case.state), 2), urgency, -int(stake or 0), *run_first)

    return sorted(cases, key=key)


def _counts(cases: Sequence[CaseView]) -> str:
    """``3 problems need action · 1 acknowledged``: the report's count is the open cases."""
    states = Counter(c.state for c in cases)
    need = states.pop(CaseState.OPEN.value, 0)
    noun = "problem needs" if need == 1 else "problems need"
    return " · ".join(
        [f"{need:,} {noun} action", *(f"{n:,} {s}" for s, n in sorted(states.items()))]
    )


def _list_row(case: CaseView, facts: ItemFacts | None, zone: ZoneInfo) -> dict[str, Any]:
    minor, code = (facts.amount_minor, (facts.currency or "").upper()) if facts else (None, "")
    known = minor is not None and bool(code)
    return {
        "exception_id": case.exception_id,
        # A store that keeps one account reads cases without one: they are the default account's.
        "provider_account": case.provider_account,
        "state": case.state,
        "exception": case.flag,
        "label": flag_label(case.flag),
        "item_kind": case.item_kind,
        "item_id": case.item_id,
        "amount": format_minor(int(minor), code) if known and minor is not None else "",
        "currency": code if known else "",
        "merchant_reference": (facts.merchant_reference if facts else None) or "",
        "first_seen": _when(case.opened_at, zone),
        "owner": case.owner or "",
        "until": _day(case.until, zone),
        "note": case.note or "",
        "detail": case_detail(case.flag, case.last_facts, case.detail, zone=str(zone)),
    }


def history_text(database_url: str, exception_id: str, *, zone: ZoneInfo) -> str:
    """``recon exceptions history ID``: the case, each run that reported it, each action."""
    with schema_engine(database_url) as engine, engine.connect() as conn:
        case = case_record(conn, exception_id)
        if case is None:
            raise InputError(f"no exception {exception_id!r}")
        reported = case_runs(conn, exception_id)
        actions = case_actions(conn, [exception_id])[exception_id]
    lines = [
        f"{case.exception_id}: {flag_words(case.flag)} on {case.item_kind} {case.item_id}",
        f"  now: {case.state}"
        + (f" (ended in run {case.ended_run_id})" if case.ended_run_id else ""),
        f"  first seen: {_when(case.opened_at, zone)} (run {case.opened_run_id})",
    ]
    if case.owner:
        lines.append(
            f"  owner: {case.owner}" + (f", until {_day(case.until, zone)}" if case.until else "")
        )
    if case.previous_resolution:
        lines.append(f"  earlier: {case.previous_resolution}")
    lines.append("Runs:")
    lines += [
        f"  run {r} {_when(at, zone)} {status}: "
        + detail(case.flag, read_facts(facts), words, zone=str(zone))
        for r, at, status, facts, words in reported
    ]
    lines.append("Actions:" if actions else "Actions: none")
    for a in actions:
        until = f" until {_day(a.until, zone)}" if a.until else ""
        note = f": {change_note(a.note)}" if a.note else ""
        lines.append(
            f"  {_when(a.at, zone)} {a.by}{_decided(a.decided_by)} {a.action}"
            f" ({a.previous_state} -> {a.state}){until}{note} [{a.source}]"
        )
    return _terminal(lines)


def _decided(decided_by: str | None) -> str:
    """Who the file said decided, beside who ran ``apply``."""
    return f" (decided by {decided_by}, per the file)" if decided_by else ""


def _terminal(lines: Sequence[str]) -> str:
    """Lines for a terminal: each is one line, so a line break inside came from the data and is
    escaped with every other control character (:func:`recon.textsafe.terminal_text`)."""
    return "\n".join(terminal_text(line) for line in lines)


def _when(value: datetime | None, zone: ZoneInfo) -> str:
    return "-" if value is None else local_time(value, zone)


def _day(value: datetime | None, zone: ZoneInfo) -> str:
    return "" if value is None else value.astimezone(zone).strftime("%Y-%m-%d")


def _table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    rows = [{c: terminal_text(str(r[c])) for c in columns} for r in rows]
    widths = {c: min(40, max(len(c), *(len(str(r[c])) for r in rows))) for c in columns}

    def line(values: dict[str, Any]) -> str:
        return "  ".join(_cut(str(values[c]), widths[c]).ljust(widths[c]) for c in columns).rstrip()

    return "\n".join([line({c: c for c in columns}), *(line(r) for r in rows)])


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
