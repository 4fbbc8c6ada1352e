"""Recorded closing balances kept, and the balance statements read from them and the export.

:func:`record_closing` adds a closing balance read from the provider's back office: never an
update, so a second figure for the same account, currency and day is kept beside the first, which
it restates. :func:`balance_statements` reads the records and, per account, the latest version of
each export row settled in the records' span and the settlement days the export covers (through
the export store's reads, :mod:`recon.store.export_rows`), and hands them to the pure core
(:func:`recon.reconcile.balance.statements`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Engine, insert, select

from recon.decision import BalanceInputs
from recon.export_rows import Closing, ExportRow
from recon.reconcile.balance import Statement, statements
from recon.store.db import write_transaction
from recon.store.export_rows import covered_days, day_window, latest_rows
from recon.store.export_tables import balance_records

_B = balance_records.c


def record_closing(
    engine: Engine,
    *,
    account: str,
    currency: str,
    day: date,
    closing_minor: int,
    note: str | None,
    by: str,
    now: datetime | None = None,
) -> tuple[Closing, list[Closing]]:
    """Keep one closing balance; returns it and the earlier records of the same account,
    currency and day (which it restates)."""
    at = now or datetime.now(UTC)
    with write_transaction(engine) as conn:
        earlier = [
            c for c in read_closings(conn, account) if (c.currency, c.day) == (currency, day)
        ]
        new_id = conn.execute(
            insert(balance_records).values(
                provider_account=account,
                currency=currency,
                day=day,
                closing_minor=closing_minor,
                note=note,
                recorded_at=at,
                recorded_by=by,
            )
        ).inserted_primary_key
    assert new_id is not None
    record = Closing(account, currency, day, closing_minor, int(new_id[0]), note, at, by)
    return record, earlier


def read_closings(conn: Connection, account: str | None = None) -> list[Closing]:
    """Every recorded closing (of ``account``), by account, currency, day and recording."""
    query = select(balance_records).order_by(_B.provider_account, _B.currency, _B.day, _B.id)
    if account is not None:
        query = query.where(_B.provider_account == account)
    return [
        Closing(
            account=r.provider_account,
            currency=str(r.currency).strip(),
            day=r.day,
            closing_minor=int(r.closing_minor),
            record_id=int(r.id),
            note=r.note,
            recorded_at=r.recorded_at,
            recorded_by=r.recorded_by,
        )
        for r in conn.execute(query)
    ]


def balance_inputs(conn: Connection, account: str, zone: ZoneInfo) -> BalanceInputs | None:
    """What a night of ``account`` needs for its balance statements; None when it has no
    closing recorded (one read, nothing more)."""
    records = read_closings(conn, account)
    if not records:
        return None
    rows, covered = _export_side(conn, account, records, zone)
    return BalanceInputs(tuple(records), tuple(rows), covered, zone)


def balance_statements(
    conn: Connection, zone: ZoneInfo, account: str | None = None
) -> tuple[list[Statement], list[Closing]]:
    """Every balance statement of the recorded closings (of ``account``), and the records."""
    records = read_closings(conn, account)
    rows: dict[str, list[ExportRow]] = {}
    covered: dict[str, frozenset[date]] = {}
    for name in sorted({r.account for r in records}):
        mine = [r for r in records if r.account == name]
        rows[name], covered[name] = _export_side(conn, name, mine, zone)
    return statements(records, rows, covered, zone), records


def _export_side(
    conn: Connection, account: str, records: Sequence[Closing], zone: ZoneInfo
) -> tuple[list[ExportRow], frozenset[date]]:
    """``account``'s export rows settled after the first of ``records``' days through the last
    (none when they are one day), and the settlement days its export covers."""
    first = min(r.day for r in records) + timedelta(days=1)
    last = max(r.day for r in records)
    rows = latest_rows(conn, account, *day_window(first, last, zone)) if first <= last else []
    return rows, covered_days(conn, account, zone).days
