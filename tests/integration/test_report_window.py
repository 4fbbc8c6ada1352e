"""The report covers its window (RECON_REPORT_DAYS) and totals from SQL; the export has the rest.

The night's report reads the payouts a window of runs changed, open and flagged
ones, and those its exceptions and returns name; `recon export payouts` streams every payout with
payouts.csv's columns, on SQLite, PostgreSQL and MariaDB.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path

import openpyxl
import pytest
from sqlalchemy import Engine, update

from recon.errors import ReportWriteError
from recon.report.build import from_store
from recon.report.csvpack import payouts_csv
from recon.report.export import ExportFormat, export_payouts
from recon.store import typed_read
from recon.store.db import write_transaction
from recon.store.report_reads import payouts_at_run
from recon.store.tables import payouts
from tests.integration.test_store_report_frames import T0, _store


def _with_latest_state(engine: Engine, run_id: int) -> None:
    """The payouts table as run ``run_id`` left it (what a real run writes beside history)."""
    with engine.connect() as conn:
        frame = payouts_at_run(conn, run_id).astype(object)
    frame = frame.where(frame.notna(), None)
    with write_transaction(engine) as conn:
        for row in frame.to_dict("records"):
            conn.execute(
                update(payouts)
                .where(payouts.c.transaction_id == row["transaction_id"])
                .values(
                    outcome=row["outcome"],
                    state=row["state"],
                    error_code=row["error_code"],
                    returned_minor=row["returned_minor"],
                    exceptions=row["exceptions"],
                    candidate_duplicates=row["candidate_duplicates"],
                    last_run_id=run_id,
                )
            )


def test_a_report_holds_the_payouts_its_window_changed_and_the_open_and_flagged_ones(
    engine: Engine,
) -> None:
    """Half a day back from the second run: what it changed, plus the flagged unknown one."""
    _, second = _store(engine)
    _with_latest_state(engine, second)
    narrow = from_store(engine, timezone="UTC", run_id=second, window_days=0.5)
    wide = from_store(engine, timezone="UTC", run_id=second, window_days=7)
    # tx-3 settled in the first run, unflagged: outside half a day; Tx-2 is flagged unknown.
    assert sorted(narrow.payouts["transaction_id"]) == ["Tx-2", "tx-1", "tx-2", "tx-4", "tx-5"]
    assert sorted(wide.payouts["transaction_id"]) == [
        "Tx-2", "tx-1", "tx-2", "tx-3", "tx-4", "tx-5",
    ]  # fmt: skip


def test_totals_count_the_outcomes_reached_in_the_window_and_the_month(engine: Engine) -> None:
    """Per currency and outcome, exact minor units; an unchanged outcome is not reached again."""
    _, second = _store(engine)
    data = from_store(engine, timezone="UTC", run_id=second, window_days=0.5)
    rows = sorted(
        (str(r.period), str(r.currency), str(r.outcome), int(r.payouts), int(r.amount_minor))
        for r in data.totals.itertuples()
    )
    assert rows == [
        ("month", "EUR", "delayed", 1, 99),
        ("month", "EUR", "settled", 2, 14510),
        ("month", "JPY", "unknown", 1, 300),
        ("month", "SEK", "failed", 1, 2000),
        ("month", "SEK", "returned", 1, 12345),
        ("window", "EUR", "delayed", 1, 99),
        ("window", "EUR", "settled", 1, 10010),
        ("window", "SEK", "returned", 1, 12345),
    ]
    assert data.totals["amount_minor"].dtype == "Int64"


def test_the_export_is_payouts_csv_of_every_payout_read_in_parts(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same columns and cells as the report's payouts.csv; parts of two rows change nothing."""
    _, second = _store(engine)
    _with_latest_state(engine, second)
    report = payouts_csv(from_store(engine, timezone="Europe/Stockholm", run_id=second))
    monkeypatch.setattr(typed_read, "PART_ROWS", 2)
    path = export_payouts(
        engine,
        tmp_path / "all.csv",
        since=T0 - timedelta(days=30),
        timezone="Europe/Stockholm",
        fmt=ExportFormat.CSV,
    )
    assert path.read_bytes() == report


def test_the_export_starts_at_since_and_writes_the_same_cells_to_xlsx(
    engine: Engine, tmp_path: Path
) -> None:
    """Payouts created before --since (or, without created, imported before it) are left out."""
    _, second = _store(engine)
    _with_latest_state(engine, second)
    since = T0 + timedelta(minutes=1)
    text = export_payouts(
        engine, tmp_path / "p.csv", since=since, timezone="UTC", fmt=ExportFormat.CSV
    ).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    # tx-1, tx-4 and tx-5 were created at T0 + 0.25 s... and so before since: none but the header.
    assert rows[0][0] == "transaction_id"
    early = export_payouts(
        engine,
        tmp_path / "p.xlsx",
        since=T0 - timedelta(days=1),
        timezone="UTC",
        fmt=ExportFormat.XLSX,
    )
    as_csv = export_payouts(
        engine,
        tmp_path / "q.csv",
        since=T0 - timedelta(days=1),
        timezone="UTC",
        fmt=ExportFormat.CSV,
    ).read_text(encoding="utf-8")
    book = openpyxl.load_workbook(early, read_only=True)
    try:
        rows = book["payouts"].iter_rows(values_only=True)
        cells = [[c if c is not None else "" for c in row] for row in rows]
    finally:
        book.close()  # read-only workbooks keep their file open until closed
    assert cells == list(csv.reader(io.StringIO(as_csv)))
    # tx-2 (created three days before T0) is left out; Tx-2 (no created, imported at T0) is in.
    ids = [row[0] for row in cells[1:]]
    assert "tx-2" not in ids
    assert "Tx-2" in ids
    assert "tx-3" in ids


def test_an_xlsx_export_longer_than_a_sheet_goes_on_in_further_sheets(
    engine: Engine, tmp_path: Path
) -> None:
    """Excel holds 1,048,576 rows a sheet; rows past it would be dropped without a word. The
    export goes on in sheets "payouts 2", "payouts 3"..., each under the same header (here a sheet
    of three rows: the header and two payouts)."""
    _, second = _store(engine)
    _with_latest_state(engine, second)
    since = T0 - timedelta(days=30)
    as_csv = export_payouts(
        engine, tmp_path / "all.csv", since=since, timezone="UTC", fmt=ExportFormat.CSV
    ).read_text(encoding="utf-8")
    header, *expected = list(csv.reader(io.StringIO(as_csv)))
    assert len(expected) == 6
    path = export_payouts(
        engine,
        tmp_path / "all.xlsx",
        since=since,
        timezone="UTC",
        fmt=ExportFormat.XLSX,
        sheet_rows=3,
    )
    book = openpyxl.load_workbook(path, read_only=True)
    try:
        sheets = {
            name: [
                [c if c is not None else "" for c in row]
                for row in book[name].iter_rows(values_only=True)
            ]
            for name in book.sheetnames
        }
    finally:
        book.close()
    assert list(sheets) == ["payouts", "payouts 2", "payouts 3"]
    assert all(rows[0] == header and len(rows) <= 3 for rows in sheets.values())
    assert [row for rows in sheets.values() for row in rows[1:]] == expected


def test_an_xlsx_export_with_a_cell_too_long_for_excel_fails_naming_it_and_writes_nothing(
    engine: Engine, tmp_path: Path
) -> None:
    """Excel cuts a cell at 32,767 characters; the export says which and leaves no file."""
    _, second = _store(engine)
    _with_latest_state(engine, second)
    with write_transaction(engine) as conn:
        conn.execute(
            update(payouts)
            .where(payouts.c.transaction_id == "tx-1")
            .values(exceptions="x" * 40_000)
        )
    with pytest.raises(ReportWriteError, match=r"exceptions of tx-1 does not fit in a cell"):
        export_payouts(
            engine,
            tmp_path / "all.xlsx",
            since=T0 - timedelta(days=30),
            timezone="UTC",
            fmt=ExportFormat.XLSX,
        )
    assert list(tmp_path.glob("*all.xlsx*")) == []  # nor the temporary file beside it
