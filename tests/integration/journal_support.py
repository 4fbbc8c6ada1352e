"""Journal lines in a store for the report's tests: the core's entries from literal money facts,
inserted as a night's journal step would insert them (a run's lines carry its ``run_id``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, func, insert, select

from recon.reconcile.journal import (
    JournalLine,
    JournalParams,
    PayoutMoney,
    Role,
    booked_entries,
    journal_entries,
)
from recon.store.journal_reads import run_journal
from recon.store.journal_tables import journal_lines

CODES = {
    Role.PAYOUTS_PAYABLE: "2890",
    Role.PROVIDER_BALANCE: "1940",
    Role.FEE_EXPENSE: "6570",
    Role.SUSPENSE: "2999",
}


def _all_lines(conn: Connection, account: str) -> list[JournalLine]:
    runs = conn.execute(
        select(journal_lines.c.run_id).where(journal_lines.c.provider_account == account).distinct()
    ).scalars()
    return [line for run_id in runs for line in run_journal(conn, int(run_id), account)]


def book(
    conn: Connection,
    run_id: int,
    money: Sequence[PayoutMoney],
    as_of: datetime,
    *,
    account: str = "default",
    timezone: str = "Europe/Stockholm",
    locked_through: datetime | None = None,
) -> list[JournalLine]:
    """The entries run ``run_id`` makes from ``money`` against what ``account``'s journal holds,
    inserted with its run id; the lines made."""
    before = _all_lines(conn, account)
    last = conn.execute(
        select(func.max(journal_lines.c.number)).where(journal_lines.c.provider_account == account)
    ).scalar()
    params = JournalParams(
        provider_account=account,
        codes=CODES,
        zone=ZoneInfo(timezone),
        as_of=as_of,
        locked_through=None if locked_through is None else locked_through.date(),
    )
    made = journal_entries(money, booked_entries(before), params, next_number=(last or 0) + 1)
    if made:
        rows = [
            {**asdict(line), "event": line.event.value, "role": line.role.value, "run_id": run_id}
            for line in made
        ]
        conn.execute(insert(journal_lines), rows)
    return made
