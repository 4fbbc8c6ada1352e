"""The night's match reads the export bounded: only rows settled since its bound, only the days
from it on, never the whole history. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from recon.export_rows import ExportKind, ExportRow
from recon.reconcile.export_match import ExportRowsIn, match_since
from recon.store.export_match_reads import read_export
from recon.store.export_rows import day_window, store_export

UTC_ZONE = ZoneInfo("UTC")
AS_OF = datetime(2026, 6, 30, 2, tzinfo=UTC)
SINCE = match_since(AS_OF, watch_days=90, lookback_days=3)
BOUND_DAY = date(2026, 3, 29)  # 93 days before 2026-06-30


def _store(engine: Engine, day: date, tid: str) -> None:
    """One complete file of ``day`` (UTC) holding a settled payout row ``tid`` settled at noon."""
    settled = datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=12)
    row = ExportRow(
        line=2, transaction_id=tid, kind=ExportKind.PAYOUT, type_raw="1", state=6,
        state_raw="6", amount_minor=1000, currency="EUR", merchant_reference=None,
        settled=settled, created=settled,
    )  # fmt: skip
    start, end = day_window(day, day, UTC_ZONE)
    store_export(
        engine, account="brand_a", settled_from=start, settled_to=end,
        data_sha256=hashlib.sha256(tid.encode()).hexdigest(), headers=("id",), rows=[row],
        source="file", name=f"{day}.csv", row_cap=100_000,
        now=AS_OF - timedelta(hours=1),
    )  # fmt: skip


def test_the_match_reads_rows_and_days_since_its_bound_only(engine: Engine) -> None:
    """A row settled the day before the bound and that day's coverage are not read; the bound's
    own day and later are, with when their file was stored."""
    assert SINCE.date() == BOUND_DAY
    _store(engine, date(2026, 3, 28), "old")
    _store(engine, date(2026, 3, 29), "first")
    _store(engine, date(2026, 6, 29), "recent")
    with engine.connect() as conn:
        reads = read_export(conn, since=SINCE, account="brand_a")
    assert sorted(reads.rows[ExportRowsIn.TRANSACTION_ID]) == ["first", "recent"]
    assert set(reads.rows[ExportRowsIn.SEEN_AT]) == {AS_OF - timedelta(hours=1)}
    assert reads.covered == {date(2026, 3, 29), date(2026, 6, 29)}
    assert reads.record.empty
