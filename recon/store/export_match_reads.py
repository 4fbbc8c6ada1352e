"""What the export's match reads: the latest version of every export row of an account, the
settlement days its complete files cover, and the recorded payouts the rows concern (with what the
latest answer about each said). Three queries and one small one for the files, never one per row.

A minimal read of the match's own; the export's store (:mod:`recon.store.export_rows`) owns how
files and rows are stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import pandas as pd
from sqlalchemy import ColumnElement, Connection, and_, func, or_, select

from recon.conform import typed
from recon.constants import DEFAULT_ACCOUNT, ObsStatus
from recon.export_rows import ExportKind
from recon.reconcile.export_match import ExportRecord, ExportRowsIn
from recon.store.export_tables import provider_export_files, provider_export_rows
from recon.store.tables import observations, payouts
from recon.store.typed_read import frame_of


@dataclass(frozen=True)
class ExportReads:
    """The rows (:class:`ExportRowsIn`), the days covered, the record (:class:`ExportRecord`)."""

    rows: pd.DataFrame
    covered: frozenset[date]
    record: pd.DataFrame


def has_export(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> bool:
    """Whether any export file of ``account`` is stored (without one, a night reads nothing)."""
    f = provider_export_files.c
    query = select(f.id).where(f.provider_account == account).limit(1)
    return conn.execute(query).first() is not None


def read_export(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> ExportReads:
    """Every row's latest version, when a file last showed it, the days complete files cover, and
    the recorded payouts named by a row or settled on a covered day."""
    f, r = provider_export_files.c, provider_export_rows.c
    files = frame_of(
        conn,
        select(f.id, f.settled_from, f.settled_to, f.capped, f.stored_at).where(
            f.provider_account == account
        ),
    )
    latest = (
        select(r.kind, r.transaction_id, func.max(r.version).label("version"))
        .where(r.provider_account == account)
        .group_by(r.kind, r.transaction_id)
        .subquery()
    )
    rows = frame_of(
        conn,
        select(
            *(r[c] for c in ExportRowsIn.names() if c != ExportRowsIn.SEEN_AT),
            f.stored_at.label(ExportRowsIn.SEEN_AT),
        )
        .join_from(
            provider_export_rows,
            latest,
            and_(
                r.kind == latest.c.kind,
                r.transaction_id == latest.c.transaction_id,
                r.version == latest.c.version,
            ),
        )
        .join(provider_export_files, f.id == r.file_id)
        .where(r.provider_account == account),
    )
    rows = _last_shown(typed(rows, ExportRowsIn), files)
    covered = _covered(files)
    return ExportReads(rows, covered, _record(conn, covered, account=account))


def _last_shown(rows: pd.DataFrame, files: pd.DataFrame) -> pd.DataFrame:
    """A row seen again unchanged adds no version: it was last shown by the latest complete file
    whose window holds its settlement time (or the file of its version)."""
    seen = rows[ExportRowsIn.SEEN_AT].copy()
    settled = rows[ExportRowsIn.SETTLED]
    for file in files[~files["capped"].astype(bool)].to_dict("records"):
        start, end = _utc(file["settled_from"]), _utc(file["settled_to"])
        stored = _utc(file["stored_at"])
        inside = ((settled >= start) & (settled < end)).fillna(False)
        seen = seen.where(~inside | (seen >= stored), stored)
    return rows.assign(**{ExportRowsIn.SEEN_AT: seen})


def _covered(files: pd.DataFrame) -> frozenset[date]:
    """UTC days some complete (not capped) file covers from start to end."""
    days: set[date] = set()
    for file in files[~files["capped"].astype(bool)].to_dict("records"):
        start, end = _utc(file["settled_from"]), _utc(file["settled_to"])
        day = start.ceil("D")
        while day + pd.Timedelta(days=1) <= end:
            days.add(day.date())
            day += pd.Timedelta(days=1)
    return frozenset(days)


def _utc(value: object) -> pd.Timestamp:
    stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _record(conn: Connection, covered: frozenset[date], *, account: str) -> pd.DataFrame:
    """Recorded payouts named by a payout or fee row, or settled on a covered day, with the
    latest ok answer's amount and currency (the state is the record's, which the last answer
    set)."""
    p, r, o = payouts.c, provider_export_rows.c, observations.c
    named = select(r.transaction_id).where(
        r.provider_account == account, r.kind == ExportKind.PAYOUT.value
    )
    fee_named = select(r.related_transaction_id).where(
        r.provider_account == account,
        r.kind == ExportKind.FEE.value,
        r.related_transaction_id.is_not(None),
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
            p.settled_at,
            p.last_checked_at,
            p.state.label(ExportRecord.ANSWER_STATE),
            o.amount_minor.label(ExportRecord.ANSWER_AMOUNT_MINOR),
            o.currency.label(ExportRecord.ANSWER_CURRENCY),
        )
        .select_from(payouts)
        .outerjoin(last_ok, last_ok.c.transaction_id == p.transaction_id)
        .outerjoin(observations, o.id == last_ok.c.id)
        .where(p.provider_account == account, or_(*wanted))
    )
    return typed(frame_of(conn, query), ExportRecord)
