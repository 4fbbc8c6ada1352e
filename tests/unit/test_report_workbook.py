"""report.xlsx, read back with openpyxl: the CSVs' columns as typed cells, ready to send back."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from recon.report.csvpack import (
    EXCEPTIONS_COLUMNS,
    PAYOUTS_COLUMNS,
    RETURNS_COLUMNS,
    SUMMARY_COLUMNS,
    render_csvs,
)
from recon.report.model import ReportInput
from recon.report.workbook import render_workbook
from tests.unit.report_fixtures import many_payouts, report_input

SUMMARY_HEADER_ROW = 10  # eight lines about the run, a blank line, then the table
# What a person reads and fills in first, then the rest in exceptions.csv's order.
EXCEPTION_SHEET = [
    "exception_id", "transaction_id", "exception", "resolution", "note", "by", "until",
    "provider_account", "status", "amount", "currency", "merchant_reference", "error_code",
    "action", "item_kind", "detail", "owner", "first_seen", "previous_resolution", "members",
    "amount_at_stake",
]  # fmt: skip
WIDE_SHEETS = ("Needs action", "Acknowledged", "Payouts", "Exceptions")


def load(data: ReportInput, **options: Any) -> Workbook:
    return openpyxl.load_workbook(io.BytesIO(render_workbook(data, **options)))


@pytest.fixture(scope="module")
def book() -> Workbook:
    return load(report_input(), payouts="window")


@pytest.fixture(scope="module")
def csvs() -> dict[str, list[dict[str, str]]]:
    return {
        name: list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        for name, body in render_csvs(report_input()).items()
    }


def header(sheet: Worksheet, row: int = 1) -> list[Any]:
    return [cell.value for cell in sheet[row]]


def records(sheet: Worksheet, header_row: int = 1) -> list[dict[str, Any]]:
    """The rows below the header as dicts of cells (openpyxl cells, for values and formats)."""
    names = header(sheet, header_row)
    return [
        dict(zip(names, row, strict=True))
        for row in sheet.iter_rows(min_row=header_row + 1)
        if any(cell.value is not None for cell in row)
    ]


def test_the_workbook_has_its_eight_sheets_in_order(book: Workbook) -> None:
    """Summary, Needs action, Acknowledged, Payouts, Returns, Exceptions, Roll-forward, Statement:
    exactly, in order (the statement last, so that no sheet's place moved)."""
    assert book.sheetnames == [
        "Summary", "Needs action", "Acknowledged", "Payouts", "Returns", "Exceptions",
        "Roll-forward", "Statement",
    ]  # fmt: skip


def test_each_sheet_has_the_columns_of_its_csv(book: Workbook) -> None:
    """The header rows hold the CSVs' columns: the same order but for the exception sheets
    (Acknowledged adds the age after first_seen)."""
    assert header(book["Summary"], SUMMARY_HEADER_ROW) == SUMMARY_COLUMNS
    assert header(book["Needs action"]) == EXCEPTION_SHEET
    assert header(book["Exceptions"]) == EXCEPTION_SHEET
    assert sorted(set(EXCEPTION_SHEET) - {"by"}) == sorted(EXCEPTIONS_COLUMNS)  # by: sheets'
    at = EXCEPTION_SHEET.index("first_seen") + 1
    assert header(book["Acknowledged"]) == [*EXCEPTION_SHEET[:at], "age", *EXCEPTION_SHEET[at:]]
    assert header(book["Payouts"]) == PAYOUTS_COLUMNS
    assert header(book["Returns"]) == RETURNS_COLUMNS


def test_resolution_note_by_and_until_come_right_after_the_id_and_the_finding(
    book: Workbook, csvs: dict[str, list[dict[str, str]]]
) -> None:
    """On the exception sheets a person sees the exception, its payout and the finding, then
    fills in resolution, note, by (who decided) and until, columns D to G; exceptions.csv keeps
    its contract order, resolution after its columns of before, then the problem's members and
    the money at stake."""
    for name in ("Needs action", "Acknowledged", "Exceptions"):
        assert header(book[name])[:7] == [
            "exception_id", "transaction_id", "exception", "resolution", "note", "by", "until",
        ], name  # fmt: skip
    assert list(csvs["exceptions.csv"][0]) == EXCEPTIONS_COLUMNS
    assert EXCEPTIONS_COLUMNS[-8:] == [
        "owner", "note", "until", "first_seen", "previous_resolution", "resolution",
        "members", "amount_at_stake",
    ]  # fmt: skip


def test_every_sheet_has_a_frozen_header_and_a_filter_over_its_rows(book: Workbook) -> None:
    """The header row stays in view and every column can be filtered."""
    for name in book.sheetnames:
        sheet = book[name]
        top = SUMMARY_HEADER_ROW if name == "Summary" else 1
        assert sheet.freeze_panes == f"A{top + 1}", name
        ref = sheet.auto_filter.ref
        assert ref is not None
        assert ref.startswith(f"A{top}:"), name
        last = len(records(sheet, top))
        assert ref.endswith(str(top + max(last, 1))), (name, ref)


def widths(sheet: Worksheet, header_row: int = 1) -> dict[str, float]:
    """Each column's width by its header (a <col> may span several columns of one width)."""
    by_index: dict[int, float] = {}
    for dim in sheet.column_dimensions.values():
        for index in range(dim.min, dim.max + 1):
            by_index[index] = dim.width
    return {cell.value: by_index[cell.column] for cell in sheet[header_row]}


def test_column_widths_fit_the_content_and_are_capped(book: Workbook) -> None:
    """A long action column is capped; an id column is as wide as its widest id."""
    # Excel stores a width with its padding (+0.71 characters)
    payouts = {name: int(width) for name, width in widths(book["Payouts"]).items()}
    assert payouts["action"] == 42
    longest = max(len(r["merchant_reference"].value) for r in records(book["Payouts"]))
    assert payouts["merchant_reference"] >= longest
    assert payouts["transaction_id"] < 20


def test_long_text_wraps_in_its_capped_column_on_rows_tall_enough_to_show_it(
    book: Workbook,
) -> None:
    """action and detail are at most 42 characters wide and wrap; a row holding a wrapped text
    is as many lines tall as the text needs there, and its cells sit at the top."""
    sheet = book["Exceptions"]
    width = widths(sheet)
    for name in ("action", "detail"):
        assert 30 <= width[name] <= 43, name
    for row in records(sheet):
        action = row["action"]
        assert action.alignment.wrap_text, action.coordinate
        assert action.alignment.vertical == "top"
        assert row["exception_id"].alignment.vertical == "top"
        chars = len(action.value)
        height = sheet.row_dimensions[action.row].height
        if chars > 60:  # more than a line, counting a prose letter as 1.2 digits of width
            assert height is not None
            assert height >= 15 * -(-chars // 60), (action.coordinate, chars, height)


def test_the_columns_a_person_fills_in_have_room_and_every_date_fits(book: Workbook) -> None:
    """note is wide enough to type into and wraps, resolution holds "acknowledge" and its
    drop-down arrow, and every date or date-time column is as wide as its format."""
    for name in ("Needs action", "Acknowledged", "Exceptions"):
        width = widths(book[name])
        assert width["note"] >= 24, name
        assert width["resolution"] >= len("acknowledge") + 2, name
        assert width["until"] >= len("yyyy-mm-dd") + 1, name
    note = next(r["note"] for r in records(book["Acknowledged"]) if r["note"].value)
    assert note.alignment.wrap_text
    for name in book.sheetnames:
        sheet = book[name]
        top = SUMMARY_HEADER_ROW if name == "Summary" else 1
        width = widths(sheet, top)
        for row in sheet.iter_rows(min_row=top + 1):
            for cell in row:
                if cell.is_date and cell.row > top:
                    column = sheet.cell(top, cell.column).value
                    assert width[column] >= len(cell.number_format) + 1, (name, column)


def test_the_sheets_hold_the_rows_of_their_csvs(
    book: Workbook, csvs: dict[str, list[dict[str, str]]]
) -> None:
    """Payouts, Returns and Exceptions hold every CSV row, in the same order."""
    for sheet, name, key in (
        ("Payouts", "payouts.csv", "transaction_id"),
        ("Returns", "returns.csv", "return_transaction_id"),
        ("Exceptions", "exceptions.csv", "exception_id"),
    ):
        assert [r[key].value for r in records(book[sheet])] == [r[key] for r in csvs[name]]


def test_needs_action_and_acknowledged_split_the_exceptions_by_status(book: Workbook) -> None:
    """Open statuses in Needs action, owned ones (with owner, note, until, age) in Acknowledged."""
    needs = {r["status"].value for r in records(book["Needs action"])}
    assert needs == {"new", "persisting"}
    owned = records(book["Acknowledged"])
    assert {r["status"].value for r in owned} == {"acknowledged", "snoozed"}
    snoozed = next(r for r in owned if r["status"].value == "snoozed")
    assert snoozed["owner"].value == "anna"
    assert snoozed["note"].value == "waiting for the bank's answer"
    assert snoozed["age"].value == "9 days"
    # until is a date cell: the end of the snooze (AS_OF + 3 days) in Stockholm's local time
    assert snoozed["until"].value == datetime.fromisoformat("2026-11-23T06:00")
    assert snoozed["until"].number_format == "yyyy-mm-dd"


def test_amounts_are_numbers_with_their_currencys_decimals(
    book: Workbook, csvs: dict[str, list[dict[str, str]]]
) -> None:
    """Every amount equals the CSV's exact text; JPY shows no decimals, EUR and SEK two."""
    formats = {"JPY": "#,##0", "EUR": "#,##0.00", "SEK": "#,##0.00"}
    for row, text in zip(records(book["Payouts"]), csvs["payouts.csv"], strict=True):
        for column in ("amount", "returned_amount"):
            cell = row[column]
            assert cell.data_type == "n"
            assert Decimal(str(cell.value)) == Decimal(text[column])
            assert cell.number_format == formats[text["currency"]]
    summary = records(book["Summary"], SUMMARY_HEADER_ROW)
    jpy = next(
        r for r in summary if (r["currency"].value, r["outcome"].value) == ("JPY", "settled")
    )
    assert (jpy["amount"].value, jpy["amount"].number_format) == (15000, "#,##0")
    assert jpy["count"].value == 1


def test_times_are_excel_dates_in_the_reports_time_zone(
    book: Workbook, csvs: dict[str, list[dict[str, str]]]
) -> None:
    """created is a date-time cell holding the local wall time the CSV writes with its offset."""
    for row, text in zip(records(book["Payouts"]), csvs["payouts.csv"], strict=True):
        local = datetime.fromisoformat(text["created"]).replace(tzinfo=None)
        assert row["created"].is_date
        assert row["created"].value == local
        assert row["created"].number_format == "yyyy-mm-dd hh:mm:ss"
    assert "Europe/Stockholm" in str(book["Summary"]["B4"].value)
    assert book["Summary"]["B3"].value == datetime.fromisoformat("2026-11-20T06:00")


def test_the_summary_sheet_names_the_run_and_its_counts(book: Workbook) -> None:
    """Run id, status and "N need action (K new) · M failed to re-pay or contact" above the
    per-currency table."""
    lines = {row[0].value: row[1].value for row in book["Summary"].iter_rows(max_row=6, max_col=2)}
    assert lines["Run"] == "42"
    assert lines["Status"] == "complete"
    assert lines["Exceptions"] == "7 problems need action (4 new) · 2 failed to re-pay or contact"


def test_text_is_neutralised_and_stays_text(book: Workbook) -> None:
    """A reference starting with = comes back as text with a leading ', never a formula."""
    payouts = {r["transaction_id"].value: r for r in records(book["Payouts"])}
    hyperlink = payouts["tx-004"]["merchant_reference"]
    assert hyperlink.data_type == "s"
    assert hyperlink.value == '\'=HYPERLINK("http://x")'
    assert payouts["tx-015"]["merchant_reference"].value == "'-5 adjustment"
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            assert all(cell.data_type != "f" for cell in row), sheet.title


def test_text_that_looks_like_a_number_or_a_formula_is_written_as_text() -> None:
    """ "0123", "1E5" and "=1+1" references stay strings (the writer converts nothing)."""
    payouts = many_payouts(3)
    payouts["merchant_reference"] = ["0123", "1E5", "=1+1"]
    sheet = load(report_input(payouts=payouts), payouts="window")["Payouts"]
    refs = [r["merchant_reference"] for r in records(sheet)]
    assert [c.value for c in refs] == ["0123", "1E5", "'=1+1"]
    assert {c.data_type for c in refs} == {"s"}


def test_text_longer_than_an_excel_cell_is_cut_visibly_not_silently() -> None:
    """Excel holds 32,767 characters a cell (xlsxwriter cuts longer text without a word): the
    cell ends saying it was cut and that the CSV holds it whole; shorter text is untouched."""
    payouts = many_payouts(2)
    payouts["merchant_reference"] = ["r" * 40_000, "r" * 32_767]
    sheet = load(report_input(payouts=payouts), payouts="window")["Payouts"]
    long, full = (r["merchant_reference"].value for r in records(sheet))
    assert len(long) == 32_767
    assert long.startswith("r" * 32_000)
    assert long.endswith("[cut at Excel's 32,767 characters; the CSV holds all 40,000]")
    assert full == "r" * 32_767


def test_the_resolution_column_offers_the_four_verbs(book: Workbook) -> None:
    """Each exception sheet validates resolution against acknowledge, resolve, snooze, reopen."""
    for name in ("Needs action", "Acknowledged", "Exceptions"):
        sheet = book[name]
        letter = sheet.cell(1, header(sheet).index("resolution") + 1).column_letter
        rows = len(records(sheet))
        (validation,) = sheet.data_validations.dataValidation
        assert validation.type == "list"
        assert validation.formula1 == '"acknowledge,resolve,snooze,reopen"'
        assert str(validation.sqref) == f"{letter}2:{letter}{rows + 1}"
        assert all(r["resolution"].value is None for r in records(sheet))
    assert not book["Payouts"].data_validations.dataValidation


def test_a_table_longer_than_a_sheet_ends_with_a_row_pointing_to_its_csv() -> None:
    """With room for 10 rows, 20 payouts show 8 and a last row naming payouts.csv."""
    book = load(report_input(payouts=many_payouts(20)), payouts="window", sheet_rows=10)
    sheet = book["Payouts"]
    assert sheet.max_row == 10
    assert [sheet.cell(r, 1).value for r in range(2, 10)] == [f"tx-{i}" for i in range(8)]
    assert sheet.cell(10, 1).value == "12 more rows are in payouts.csv: a sheet holds 10 rows"


def test_a_report_without_payouts_or_exceptions_still_has_every_sheet(tmp_path: Path) -> None:
    """Empty tables give header rows, filters and validations that Excel accepts."""
    data = report_input(payouts=many_payouts(0))
    empty = ReportInput(
        run=data.run,
        payouts=data.payouts,
        exceptions=data.exceptions.iloc[0:0],
        returns=data.returns.iloc[0:0],
        changes=data.changes.iloc[0:0],
        timezone=data.timezone,
    )
    book = load(empty)
    assert len(book.sheetnames) == 8
    assert header(book["Exceptions"]) == EXCEPTION_SHEET
    assert records(book["Exceptions"]) == []
    assert date(2026, 11, 20) == book["Summary"]["B3"].value.date()


def test_the_payouts_sheet_holds_the_nights_payouts_and_the_csv_the_whole_window() -> None:
    """By default (RECON_REPORT_WORKBOOK=night) the sheet holds the payouts this run changed
    other than routinely and every open or flagged one; a payout that simply settled, or reached
    its outcome earlier in the window, is only in payouts.csv (the Summary sheet says so)."""
    data = report_input()
    p, c = data.payouts, data.changes
    routine = {
        str(tid)
        for tid, before, now in zip(c["transaction_id"], c["previous_outcome"], c["outcome"],
                                    strict=True)
        if (pd.isna(before) or before == "pending") and now in ("pending", "settled")
    }  # fmt: skip
    changed = {str(t) for t in c["transaction_id"]} - routine
    expected = {
        str(tid)
        for tid, outcome, flags, dups in zip(
            p["transaction_id"], p["outcome"], p["exceptions"], p["candidate_duplicates"],
            strict=True,
        )
        if tid in changed or outcome in ("pending", "delayed", "unchecked") or flags or dups
    }  # fmt: skip
    window = {str(t) for t in p["transaction_id"]}
    assert routine & window - expected  # the fixture has a routine settlement left off the sheet
    assert expected < window
    book = load(data)
    assert {str(r["transaction_id"].value) for r in records(book["Payouts"])} == expected
    summary = {row[0].value: row[1].value for row in book["Summary"].iter_rows(max_row=8)}
    assert summary["Payouts"] == (
        f"{len(expected)} on sheet Payouts (changed tonight other than routinely, open or "
        f"flagged); payouts.csv has all {len(window)} of the last 7 days"
    )
    every = load(data, payouts="window")
    assert {str(r["transaction_id"].value) for r in records(every["Payouts"])} == window


def test_the_summary_as_of_cell_is_wide_enough_for_its_date(book: Workbook) -> None:
    """ "As of" is a date and time: its column is wide enough to show it, not ### in a spreadsheet
    (``YYYY-MM-DD HH:MM`` is 16 characters)."""
    sheet = book["Summary"]
    assert sheet["A3"].value == "As of"
    assert sheet.column_dimensions["B"].width >= 17


def test_every_sheet_prints_landscape_with_its_header_on_each_page(book: Workbook) -> None:
    """Printing gives pages a person can read: landscape, the header repeated on every page, the
    narrow Summary and Returns fitted to one page wide, the wide sheets to two (at one their text
    is too small to read; at two the id, the finding, what to fill in and the amount are on the
    first page, the texts on the second)."""
    for name in book.sheetnames:
        sheet = book[name]
        top = SUMMARY_HEADER_ROW if name == "Summary" else 1
        assert sheet.page_setup.orientation == "landscape", name
        assert sheet.print_title_rows == f"${top}:${top}", name
    summary = book["Summary"]
    # fitToWidth is left out of the file when it is 1, its default in the format
    fit = (summary.page_setup.fitToWidth or 1, summary.page_setup.fitToHeight)
    assert fit == (1, 0)
    assert summary.sheet_properties.pageSetUpPr.fitToPage

    for name in WIDE_SHEETS:
        setup = book[name].page_setup
        assert (setup.fitToWidth, setup.fitToHeight) == (2, 0), name
        assert book[name].sheet_properties.pageSetUpPr.fitToPage
    returns = book["Returns"].page_setup
    assert (returns.fitToWidth or 1, returns.fitToHeight) == (1, 0)
