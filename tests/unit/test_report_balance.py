"""The balance statements in the report: balance.csv, the Balance section of report.html and the
Balance sheet of report.xlsx, once a closing is recorded; none of it without one.

The statements are the core's (:func:`recon.reconcile.balance.statements`) from literal closings
and export rows: EUR ties over November, SEK breaks by 1.00.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import openpyxl

from recon.export_rows import Closing, ExportKind, ExportRow, days
from recon.reconcile.balance import statements
from recon.report.balance import balance_frame, statement_text
from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.workbook import render_workbook
from tests.unit.report_fixtures import report_input

ZONE = ZoneInfo("Europe/Stockholm")
NOV = days(date(2026, 11, 1), date(2026, 11, 30))
HEADER = "provider_account,currency,period_start,period_end,line,count,amount,status"


def _row(n: int, kind: ExportKind, amount: int, currency: str) -> ExportRow:
    return ExportRow(n + 2, f"t{n}", kind, str(kind), 6, "6", amount, currency,
                     settled=datetime(2026, 11, 10, 9, tzinfo=UTC))  # fmt: skip


def with_balance() -> ReportInput:
    records = [
        Closing("default", "EUR", date(2026, 10, 31), 100_000, 1),
        Closing("default", "EUR", date(2026, 11, 30), 100_000 - 10_010 - 30, 2),
        Closing("default", "SEK", date(2026, 10, 31), 0, 3),
        Closing("default", "SEK", date(2026, 11, 30), 50_000 - 100, 4),
    ]
    rows = [
        _row(0, ExportKind.PAYOUT, 10_010, "EUR"),
        _row(1, ExportKind.FEE, 30, "EUR"),
        _row(2, ExportKind.TOP_UP, 50_000, "SEK"),
    ]
    found = statements(records, {"default": rows}, {"default": NOV}, ZONE)
    return replace(report_input(), balance=balance_frame(found))


def _rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))


def test_balance_csv_has_the_contract_columns_one_row_per_line() -> None:
    """Nine lines per statement, exact amounts with the currency's digits, the status on each."""
    content = render_csvs(with_balance())["balance.csv"]
    assert content.decode("utf-8-sig").splitlines()[0] == HEADER
    got = _rows(content)
    assert len(got) == 18
    eur = {r["line"]: (r["count"], r["amount"], r["status"]) for r in got if r["currency"] == "EUR"}
    assert eur["opening"] == ("0", "1000.00", "tied")
    assert eur["payouts_settled"] == ("1", "100.10", "tied")
    assert eur["fees"] == ("1", "0.30", "tied")
    assert eur["difference"] == ("0", "0.00", "tied")
    sek = {r["line"]: (r["amount"], r["status"]) for r in got if r["currency"] == "SEK"}
    assert sek["difference"] == ("-1.00", "break")
    assert {(r["period_start"], r["period_end"]) for r in got} == {("2026-11-01", "2026-11-30")}


def test_no_closing_recorded_no_balance_anywhere() -> None:
    """Without a closing recorded the pack has no balance.csv, no Balance section or sheet."""
    data = report_input()
    assert "balance.csv" not in render_csvs(data)
    assert "<h2>Balance</h2>" not in render_report(data, row_cap=50, chart_png=None)
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(data)))
    assert "Balance" not in book.sheetnames


def test_the_balance_section_and_sheet_show_each_statement() -> None:
    """The section shows each statement's period, status and lines; the sheet holds balance.csv."""
    data = with_balance()
    html = render_report(data, row_cap=50, chart_png=None)
    section = html.split("<h2>Balance</h2>")[1].split("</section>")[0]
    assert "EUR 2026-11-01 to 2026-11-30" in section
    assert '<span class="badge yes">tied</span>' in section
    assert '<span class="badge no">break</span>' in section
    assert "- Payouts settled" in section
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(data)))
    sheet = book["Balance"]
    header = [c.value for c in next(sheet.iter_rows(max_row=1))]
    assert header == HEADER.split(",")
    assert sheet.max_row == 19


def test_balance_show_names_every_restated_record_once() -> None:
    """A restated opening (31 Oct), a restated closing between two periods (30 Nov) and a lone
    closing's restated record (SEK) are each listed, once, with what they said."""
    eur = [
        Closing("default", "EUR", date(2026, 10, 31), 500, 1),
        Closing("default", "EUR", date(2026, 10, 31), 0, 2),
        Closing("default", "EUR", date(2026, 11, 30), 700, 3),
        Closing("default", "EUR", date(2026, 11, 30), 0, 4),
        Closing("default", "EUR", date(2026, 12, 31), 0, 5),
    ]
    sek = [Closing("default", "SEK", date(2026, 11, 30), 900, 6),
           Closing("default", "SEK", date(2026, 11, 30), 800, 7)]  # fmt: skip
    records = eur + sek
    found = statements(records, {"default": []}, {"default": NOV}, ZONE)
    text = "\n".join(statement_text(found, records))
    for said in (
        "restated: record 1 of 2026-10-31 said 5.00 EUR",
        "restated: record 3 of 2026-11-30 said 7.00 EUR",
        "restated: record 6 of 2026-11-30 said 9.00 SEK",
    ):
        assert text.count(said) == 1, text
    assert text.count("restated:") == 3
