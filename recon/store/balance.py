"""Recorded closing balances kept, and the balance statements read from them and the export.

:func:`record_closing` adds a closing balance read from the provider's back office: never an
update, so a second figure for the same account, currency and day is kept beside the first, which
it restates. :func:`balance_statements` reads the records and, per account, the latest version of
each export row settled in the records' span and the settlement days the export covers, and hands
them to the pure core (:func:`recon.reconcile.balance.statements`).

The export reads here (:func:`_latest_rows`, :func:`_covered_days`) are this module's own minimal
ones, until the export store's (``recon.store.export_rows``) are on main.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Engine, exists, false, insert, select

from recon.decision import BalanceInputs
from recon.export_rows import Closing, ExportKind, ExportRow
from recon.reconcile.balance import Statement, statements
from recon.store.db import write_transaction
from recon.store.export_tables import balance_records, provider_export_files, provider_export_rows

_B = balance_records.c
_F = provider_export_files.c
_R = provider_export_rows.c


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
    first = min(r.day for r in records) + timedelta(days=1)
    last = max(r.day for r in records)
    rows: list[ExportRow] = []
    if first <= last:
        start, end = _midnight(first, zone), _midnight(last + timedelta(days=1), zone)
        rows = _latest_rows(conn, account, start, end)
    return BalanceInputs(tuple(records), tuple(rows), _covered_days(conn, account, zone), zone)


def balance_statements(
    conn: Connection, zone: ZoneInfo, account: str | None = None
) -> tuple[list[Statement], list[Closing]]:
    """Every balance statement of the recorded closings (of ``account``), and the records."""
    records = read_closings(conn, account)
    rows: dict[str, list[ExportRow]] = {}
    covered: dict[str, frozenset[date]] = {}
    for name in sorted({r.account for r in records}):
        mine = [r.day for r in records if r.account == name]
        first, last = min(mine) + timedelta(days=1), max(mine)
        if first > last:
            continue
        start, end = _midnight(first, zone), _midnight(last + timedelta(days=1), zone)
        rows[name] = _latest_rows(conn, name, start, end)
        covered[name] = _covered_days(conn, name, zone)
    return statements(records, rows, covered, zone), records


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)


def _latest_rows(
    conn: Connection, account: str, settled_from: datetime, settled_to: datetime
) -> list[ExportRow]:
    """The latest version of each of ``account``'s export rows settled in the window."""
    later = provider_export_rows.alias("later")
    newer = exists().where(
        later.c.provider_account == _R.provider_account,
        later.c.kind == _R.kind,
        later.c.transaction_id == _R.transaction_id,
        later.c.version > _R.version,
    )
    query = select(provider_export_rows).where(
        _R.provider_account == account,
        _R.settled >= settled_from,
        _R.settled < settled_to,
        ~newer,
    )
    return [
        ExportRow(
            line=int(r.line),
            transaction_id=r.transaction_id,
            kind=ExportKind(r.kind),
            type_raw=r.type_raw,
            state=r.state,
            state_raw=r.state_raw,
            amount_minor=int(r.amount_minor),
            currency=str(r.currency).strip(),
            merchant_reference=r.merchant_reference,
            settled=r.settled,
            created=r.created,
            fee_amount_minor=r.fee_amount_minor,
            fee_id=r.fee_id,
            related_transaction_id=r.related_transaction_id,
            extra=json.loads(r.extra) if r.extra else {},
        )
        for r in conn.execute(query)
    ]


def _covered_days(conn: Connection, account: str, zone: ZoneInfo) -> frozenset[date]:
    """The settlement days in ``zone`` that ``account``'s files not cut at the cap cover whole."""
    query = select(_F.settled_from, _F.settled_to).where(
        _F.provider_account == account, _F.capped == false()
    )
    days: set[date] = set()
    for start, end in conn.execute(query):
        days.update(_whole_days(start, end, zone))
    return frozenset(days)


def _whole_days(start: datetime, end: datetime, zone: ZoneInfo) -> Iterable[date]:
    day = start.astimezone(zone).date()
    if _midnight(day, zone) < start:
        day += timedelta(days=1)
    while _midnight(day + timedelta(days=1), zone) <= end:
        yield day
        day += timedelta(days=1)
