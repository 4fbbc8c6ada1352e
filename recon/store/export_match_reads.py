"""What the export's match reads: the latest version of each export row of an account settled
since the night's bound, the settlement days (UTC) its complete files cover from then on, and the
recorded payouts the rows concern (with what the latest answer about each said).

The rows, the files and the days are the export store's reads (:mod:`recon.store.export_rows`);
the record's side (payouts and their answers) is this module's. A few queries, never one per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pandas as pd
from sqlalchemy import ColumnElement, Connection, and_, func, select

from recon.conform import typed
from recon.constants import DEFAULT_ACCOUNT, ObsStatus, Outcome
from recon.export_rows import ExportKind
from recon.reconcile.export_match import ExportRecord, ExportRowsIn, WatchDue
from recon.run_frames import Answers
from recon.store._batch import any_of
from recon.store.export_rows import (
    FileWindow,
    complete_files,
    days_covered,
    latest_rows_query,
    settled_between,
)
from recon.store.export_tables import provider_export_rows
from recon.store.tables import observations, payouts
from recon.store.typed_read import frame_of

# The match judges settlement days in UTC (recon.reconcile.export_match._missing).
_UTC = ZoneInfo("UTC")


@dataclass(frozen=True)
class ExportReads:
    """The rows (:class:`ExportRowsIn`), the days covered, the record (:class:`ExportRecord`)."""

    rows: pd.DataFrame
    covered: frozenset[date]
    record: pd.DataFrame


def read_export(
    conn: Connection, *, since: datetime, account: str = DEFAULT_ACCOUNT
) -> ExportReads:
    """The latest version of each row settled since ``since`` (a UTC midnight), when a file last
    showed it, the UTC days from ``since`` on that complete files cover, and the recorded payouts
    named by such a row or settled on such a day."""
    query = latest_rows_query(account, since, None, file_stored_at=ExportRowsIn.SEEN_AT)
    rows = typed(frame_of(conn, query)[ExportRowsIn.names()], ExportRowsIn)
    # The complete files ending after ``since`` are all that covers a day from ``since`` on.
    files = complete_files(conn, account, ending_after=since)
    rows = _last_shown(rows, files)
    first = since.astimezone(_UTC).date()
    covered = frozenset(d for d in days_covered(files, _UTC) if d >= first)
    return ExportReads(rows, covered, _record(conn, covered, since, account=account))


def _last_shown(rows: pd.DataFrame, files: list[FileWindow]) -> pd.DataFrame:
    """A row seen again unchanged adds no version: it was last shown by the latest complete file
    whose window holds its settlement time (or the file of its version)."""
    seen = rows[ExportRowsIn.SEEN_AT].copy()
    settled = rows[ExportRowsIn.SETTLED]
    for file in files:
        start, end = _utc(file.settled_from), _utc(file.settled_to)
        stored = _utc(file.stored_at)
        inside = ((settled >= start) & (settled < end)).fillna(False)
        seen = seen.where(~inside | (seen >= stored), stored)
    return rows.assign(**{ExportRowsIn.SEEN_AT: seen})


def _utc(value: object) -> pd.Timestamp:
    stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _record(
    conn: Connection, covered: frozenset[date], since: datetime, *, account: str
) -> pd.DataFrame:
    """Recorded payouts named by a payout or fee row settled since ``since``, or settled on a
    covered day, with the latest ok answer's amount and currency (the state is the record's,
    which the last answer set)."""
    p, r, o = payouts.c, provider_export_rows.c, observations.c
    read = settled_between(account, since, None)
    named = select(r.transaction_id).where(read, r.kind == ExportKind.PAYOUT.value)
    fee_named = select(r.related_transaction_id).where(
        read, r.kind == ExportKind.FEE.value, r.related_transaction_id.is_not(None)
    )
    wanted: list[ColumnElement[bool]] = [
        p.transaction_id.in_(named),
        p.transaction_id.in_(fee_named),
    ]
    if covered:
        first, last = _utc(min(covered)), _utc(max(covered) + timedelta(days=1))
        wanted.append(and_(p.settled_at >= first, p.settled_at < last))
    last_ok = (
        select(o.transaction_id, func.max(o.id).label("id"))
        .where(
            o.provider_account == account,
            o.status == ObsStatus.OK.value,
            o.transaction_id.in_(named),
        )
        .group_by(o.transaction_id)
        .subquery()
    )
    query = (
        select(
            p.transaction_id,
            p.amount_minor,
            p.currency,
            p.outcome,
            p.fee_minor,
            p.fee_id,
            p.settled_at,
            p.last_checked_at,
            p.state.label(ExportRecord.ANSWER_STATE),
            o.amount_minor.label(ExportRecord.ANSWER_AMOUNT_MINOR),
            o.currency.label(ExportRecord.ANSWER_CURRENCY),
        )
        .select_from(payouts)
        .outerjoin(last_ok, last_ok.c.transaction_id == p.transaction_id)
        .outerjoin(observations, o.id == last_ok.c.id)
        .where(any_of(p.provider_account == account, wanted))
    )
    return typed(frame_of(conn, query), ExportRecord)


def read_watch_due(
    conn: Connection, ids: list[str], *, as_of: datetime, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """The settled payouts due for a check at ``as_of`` among ``ids`` (:class:`WatchDue`): each
    one's latest ok answer, outcome and last check. One query for every due settled payout; the
    ids pick from it (the night leaves out those with evidence to spend)."""
    if not ids:
        return typed(pd.DataFrame(columns=WatchDue.names()), WatchDue)
    p, o = payouts.c, observations.c
    due_when = (
        p.provider_account == account,
        p.outcome == Outcome.SETTLED.value,
        p.next_check_at.is_not(None),
        p.next_check_at <= as_of,
    )
    due = select(p.transaction_id).where(*due_when)
    last_ok = (
        select(o.transaction_id, func.max(o.id).label("id"))
        .where(
            o.provider_account == account,
            o.status == ObsStatus.OK.value,
            o.transaction_id.in_(due),
        )
        .group_by(o.transaction_id)
        .subquery()
    )
    answer = [
        observations.c[str(c)].label(str(c)) for c in Answers if str(c) != Answers.TRANSACTION_ID
    ]
    query = (
        select(p.transaction_id, *answer, p.outcome, p.last_checked_at)
        .select_from(payouts)
        .join(last_ok, last_ok.c.transaction_id == p.transaction_id)
        .join(observations, o.id == last_ok.c.id)
        .where(*due_when)
    )
    frame = frame_of(conn, query)
    frame = frame[frame[WatchDue.TRANSACTION_ID].isin(ids)]
    return typed(frame[WatchDue.names()].reset_index(drop=True), WatchDue)
