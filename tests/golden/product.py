"""The golden harness's one door into recon: every recon import the replay and the recorders use.

A refactor that moves an import path, or changes how one of these steps is called, adjusts this
module and nothing else of tests/golden/. Each function is the product's own entry for that step
(the import, the receiver's store, ``recon exceptions``, ``recon run``), called as the CLI or the
receiver calls it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, select, text

from recon import retry
from recon.constants import CaseAction, NotificationSource
from recon.decision import ActionRequest
from recon.ingest.accounts import ImportAccounts
from recon.ingest.notifications import parse_body

# The two the demo calls itself are re-exported: tests/golden/record_demo.py wraps them.
from recon.ingest.payouts import import_payouts_csv as import_payouts_csv
from recon.night.nights import run_nights as run_nights
from recon.night.run import RunOptions
from recon.night.run import run_reconciliation as run_reconciliation
from recon.ops.findings import perform
from recon.reconcile.pricing import DEFAULT_ACCOUNT
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine
from recon.store.notifications import store_notifications
from recon.store.tables import exception_actions, exception_cases, notifications, runs

# The actions a person takes (``recon exceptions ack|resolve|snooze|reopen``); a run's own
# (facts_changed, snooze_ended) are outputs, never recorded as inputs.
PERSON_ACTIONS = frozenset(
    {CaseAction.ACKNOWLEDGE, CaseAction.RESOLVE, CaseAction.SNOOZE, CaseAction.REOPEN}
)


@dataclass(frozen=True)
class NightEnd:
    """How ``recon run`` ended: what a shell sees besides the files (one account's night, or
    each account's night in ``nights``: name, status, summary)."""

    exit_code: int
    status: str
    summary: str
    nights: tuple[tuple[str, str, str], ...] = ()

    def text(self) -> str:
        """run.txt of the golden pack."""
        if not self.nights:
            return f"exit code: {self.exit_code}\nstatus: {self.status}\nsummary: {self.summary}\n"
        lines = [f"exit code: {self.exit_code}"]
        for account, status, summary in self.nights:
            lines += [f"account {account}: status: {status}", f"account {account}: {summary}"]
        return "\n".join(lines) + "\n"


def settings(database_url: str, overrides: Mapping[str, Any]) -> Settings:
    """recon's settings for a replayed or recorded night: ``overrides`` on the defaults."""
    return Settings(database_url=database_url, **overrides)


def account_names(settings: Settings) -> list[str]:
    """The accounts of ``settings``, in name order (``default`` without tables)."""
    return [account.name for account in settings.provider_accounts]


def new_store(database_url: str) -> Engine:
    """An engine on a store with the current schema (``recon db upgrade``)."""
    engine = make_engine(database_url)
    ensure_schema(engine)
    return engine


def import_payouts(
    engine: Engine, path: Path, *, zone: Any, now: datetime, settings: Settings
) -> None:
    """``recon import payouts FILE.csv`` at ``now``, with ``settings``' accounts."""
    accounts = ImportAccounts.of(settings)
    import_payouts_csv(engine, path, zone=zone, now=now, accounts=accounts)


def store_notification(
    engine: Engine,
    body: str,
    *,
    query: str,
    source: str,
    received_at: datetime,
    account: str = DEFAULT_ACCOUNT,
) -> None:
    """One body as the receiver (or ``recon import notifications``) stores it at ``received_at``,
    under ``account`` (the receiver's ``/callbacks/NAME``)."""
    record = parse_body(
        body,
        source=NotificationSource(source),
        query=query,
        received_at=received_at,
        account=account,
    )
    store_notifications(engine, [record])


def case_of(engine: Engine, finding: Mapping[str, str]) -> str:
    """The exception id a person acts on, named by its finding (item, kind): the latest case of
    that item, else the latest one of that kind whose problem has the item among its members (a
    group filed under another member). Ids are the night's outputs; the finding is the input."""
    c = exception_cases.c
    query = select(c.exception_id, c.item_id, c.facts).where(c.flag == finding["flag"])
    with engine.connect() as conn:
        rows = conn.execute(query.order_by(c.opened_run_id, c.exception_id)).all()
    own = [r.exception_id for r in rows if r.item_id == finding["item"]]
    grouped = [
        r.exception_id
        for r in rows
        if r.facts and finding["item"] in (json.loads(r.facts).get("members") or [])
    ]
    found = own or grouped
    if not found:
        raise LookupError(f"no case of {finding['flag']} on {finding['item']}")
    return str(found[-1])


def act(database_url: str, requests: Sequence[Mapping[str, Any]], *, now: datetime) -> None:
    """People's actions (``recon exceptions …`` or a file sent back), all at ``now``; each names
    its case by the finding, and one problem is acted on once."""
    engine = make_engine(database_url)
    try:
        named = [{**r, "exception_id": case_of(engine, r["finding"])} for r in requests]
    finally:
        engine.dispose()
    once = list({r["exception_id"]: r for r in reversed(named)}.values())[::-1]
    perform(
        database_url,
        [
            ActionRequest(
                exception_id=r["exception_id"],
                action=CaseAction(r["action"]),
                note=r["note"],
                by=r["by"],
                until=datetime.fromisoformat(r["until"]) if r.get("until") else None,
                where=r.get("where") or "command line",
                decided_by=r.get("decided_by"),
            )
            for r in once
        ],
        now=now,
        source="command line",
    )


def run_night(
    night_settings: Settings,
    out_dir: Path,
    *,
    as_of: datetime,
    transport: httpx.AsyncBaseTransport,
    email: bool,
) -> NightEnd:
    """``recon run --as-of AS_OF --out OUT_DIR`` against ``transport``: each account's night,
    then the pack over them (one account without tables: its night, as before)."""
    options = RunOptions(out_dir=out_dir, as_of=as_of, email=email)
    if not night_settings.accounts:
        result = run_reconciliation(night_settings, options, transport=transport)
        return NightEnd(int(result.exit_code), str(result.status), result.summary)
    done = run_nights(
        night_settings, options, night_settings.provider_accounts, transport=transport
    )
    nights = tuple((e.account, str(e.status), e.summary) for e in done.ends)
    return NightEnd(done.exit_code, "", "", nights)


@contextmanager
def no_retry_waits() -> Iterator[None]:
    """Retries still counted and limited, without their waits (recon's testing switch)."""
    before = retry.is_testing()
    retry.set_testing(True)
    try:
        yield
    finally:
        retry.set_testing(before)


# --- reading a recorded store back (the recorders) ------------------------------------------------


def stored_notifications(engine: Engine, after_id: int = 0) -> list[dict[str, Any]]:
    """The notifications stored after ``after_id``, in the order they were stored."""
    n = notifications.c
    query = (
        select(n.id, n.body, n.query, n.source, n.received_at, n.provider_account)
        .where(n.id > after_id)
        .order_by(n.id)
    )
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def last_notification_id(engine: Engine) -> int:
    """The id of the latest stored notification (0 when none)."""
    with engine.connect() as conn:
        return int(conn.scalar(text("SELECT coalesce(max(id), 0) FROM notifications")) or 0)


def person_actions(engine: Engine) -> list[dict[str, Any]]:
    """Every action people took on cases, in order."""
    a = exception_actions.c
    query = select(
        a.exception_id, a.at, a.by, a.action, a.note, a.until, a.source, a.decided_by
    ).order_by(a.id)
    with engine.connect() as conn:
        rows = [dict(row._mapping) for row in conn.execute(query)]
    return [r for r in rows if r["action"] in PERSON_ACTIONS]


def run_log(engine: Engine) -> list[dict[str, Any]]:
    """Each run's id, start, as-of and account, in order."""
    r = runs.c
    with engine.connect() as conn:
        query = select(r.id, r.started_at, r.as_of, r.provider_account).order_by(r.id)
        return [dict(row._mapping) for row in conn.execute(query)]


def execute(engine: Engine, statements: Sequence[Mapping[str, Any]]) -> None:
    """Change the store behind recon's back, in one transaction (a roll-forward break)."""
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement["sql"]), dict(statement.get("params", {})))


def cases(engine: Engine) -> list[dict[str, Any]]:
    """Every case: its exception id, item, finding and state (who acts names a case by its id)."""
    c = exception_cases.c
    query = select(c.exception_id, c.item_id, c.flag, c.state, c.ended_run_id).order_by(
        c.opened_run_id, c.exception_id
    )
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]
