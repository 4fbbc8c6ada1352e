"""report.xlsx: the CSV pack as one workbook, the exception sheets ready to send back.

Sheets, in this order: ``Summary`` (a few lines about the run, then summary.csv), ``Needs action``
(open exceptions), ``Acknowledged`` (owned: acknowledged and snoozed, with their age), ``Payouts``,
``Returns``, ``Exceptions`` (every row of exceptions.csv), ``Roll-forward`` (rollforward.csv),
``Statement`` (the roll-forward per currency as a statement) and, with a journal configured,
``Journal`` (journal.csv; its totals per account and currency are lines of the Summary) and,
once a closing balance is recorded, ``Balance`` (balance.csv: the balance statements).
``Payouts`` holds the payouts the night needs read (``RECON_REPORT_WORKBOOK=night``,
:func:`recon.report.views.night_payouts`) or every payout of payouts.csv (``window``). The columns
are the CSVs' own (:mod:`recon.report.tables`); only the cells differ:

- amounts are numbers, formatted with their currency's ISO 4217 digits (JPY ``#,##0``, EUR
  ``#,##0.00``). Excel keeps doubles: the number written is the double nearest the exact amount
  (minor units divided by a power of ten, both exact, one correctly rounded division), so an
  amount of up to 15 significant digits shows exactly; the CSV files stay the exact source;
- times are Excel date-times in the report's time zone (naive local wall time, as Excel has no
  zones; the Summary sheet names the zone); ``until`` shows as a date;
- text is written as text, never as a formula or a number (the writer's ``strings_to_formulas``
  and ``strings_to_numbers`` are off, and every text cell goes through ``write_string``), after the
  same formula neutralisation as the CSVs (:func:`recon.textsafe.neutralise`), so a sheet saved
  as CSV again stays inert.

Every sheet has a frozen header row and an autofilter; widths, wrapping, the exception sheets'
column order and the print setup are :mod:`recon.report.sheetlayout`'s. The exception sheets have
``resolution`` (a drop-down of the verbs ``recon exceptions apply`` reads), ``note`` and ``until``
(a date) right after the id and the finding: the file can be sent back as it is.

A sheet holds at most 1,048,576 rows (Excel's limit): a longer table is cut there and its last row
says how many rows are only in the CSV file. XlsxWriter's ``constant_memory`` mode writes each row
as it goes, so a million payouts need no more memory than a block of them (docs/decisions.md,
"Workbook writer").
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date
from typing import Any, Literal
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from recon.constants import PERSON_ACTIONS
from recon.money import minor_digits
from recon.report.fees import fee_lines
from recon.report.fmt import text_array
from recon.report.journal import journal_summary_lines
from recon.report.model import ACCOUNT, OPEN_STATUSES, OWNED_STATUSES, ReportInput
from recon.report.rollforward import STATEMENT_COLUMNS, statement, statement_table
from recon.report.sheetlayout import (
    DATETIME_FORMAT,
    Styles,
    column_width,
    exception_sheet_order,
    print_setup,
    row_heights,
)
from recon.report.tables import (
    BALANCE_COLUMNS,
    EXCEPTIONS_COLUMNS,
    IDS,
    JOURNAL_COLUMNS,
    NUMERIC,
    PAYOUTS_COLUMNS,
    RETURNS_COLUMNS,
    ROLLFORWARD_COLUMNS,
    SUMMARY_COLUMNS,
    Amounts,
    Dates,
    Table,
    Times,
    balance_columns,
    exception_columns,
    journal_columns,
    payout_columns,
    return_columns,
    rollforward_columns,
    summary_columns,
)
from recon.report.views import (
    counts,
    exceptions_table,
    night_payouts,
    nights_text,
    payout_summary,
    problems_text,
    stake_lines,
    standing_text,
)
from recon.textsafe import neutralise, neutralise_text

# The Payouts sheet's rows (RECON_REPORT_WORKBOOK): the payouts the night needs read, or all.
PayoutRows = Literal["night", "window"]
SHEETS = (
    "Summary", "Needs action", "Acknowledged", "Payouts", "Returns", "Exceptions", "Roll-forward",
    "Statement",
)  # fmt: skip
JOURNAL_SHEET = "Journal"  # after the others, with a journal configured
BALANCE_SHEET = "Balance"  # last, once a closing balance is recorded
# The verbs of `recon exceptions apply`, offered in the `resolution` column's drop-down.
RESOLUTIONS: tuple[str, ...] = tuple(a.value for a in PERSON_ACTIONS)
SHEET_ROWS = 1_048_576  # Excel's rows per sheet, the header included
CELL_CHARS = 32_767  # Excel's characters per cell (xlsxwriter cuts longer text silently)
# Rows turned into cells at a time: Python objects for a whole million-row table would take GBs.
BLOCK_ROWS = 50_000
DATE_COLUMNS = frozenset({"until"})  # times shown as a date (the day a snooze ends)
_EXCEL_EPOCH = np.datetime64("1899-12-30T00:00:00", "s")  # serial 0 in the 1900 date system
_SECONDS_PER_DAY = 86_400.0
_EXCEL_DAY_ZERO = date(1899, 12, 30)


def render_workbook(
    data: ReportInput, *, payouts: PayoutRows = "night", sheet_rows: int = SHEET_ROWS
) -> bytes:
    """report.xlsx as bytes. ``payouts``: the Payouts sheet's rows, the night's or the whole
    window's; ``sheet_rows`` is the rows a sheet may hold (Excel's limit)."""
    out = io.BytesIO()
    book = xlsxwriter.Workbook(
        out,
        {
            "constant_memory": True,
            "strings_to_formulas": False,
            "strings_to_numbers": False,
            "strings_to_urls": False,
            "default_date_format": DATETIME_FORMAT,
        },
    )
    # The run's moment, not the clock's: the same report gives the same bytes.
    created = data.run.as_of.astimezone(UTC).replace(tzinfo=None)
    book.set_properties({"title": "recon report", "created": created})
    try:
        _write_sheets(book, data, payouts, sheet_rows)
    except BaseException:
        # Closing removes constant_memory's temporary files; the half-written bytes are dropped.
        with contextlib.suppress(Exception):
            book.close()
        raise
    book.close()
    return out.getvalue()


def _write_sheets(
    book: xlsxwriter.Workbook, data: ReportInput, rows: PayoutRows, sheet_rows: int
) -> None:
    styles = Styles(book)
    tz = data.timezone
    exc = exceptions_table(data)
    status = exc["status"].astype(object)
    payouts = night_payouts(data) if rows == "night" else data.payouts
    _summary_sheet(book.add_worksheet(SHEETS[0]), data, styles, len(payouts))
    needs = exc[status.isin(OPEN_STATUSES)]
    owned = exc[status.isin(OWNED_STATUSES)]
    order = exception_sheet_order(EXCEPTIONS_COLUMNS)
    sheets = [
        _Sheet(SHEETS[1], order, _rows_of(_to_fill(needs, tz)), len(needs),
               "exceptions.csv", resolution=True),
        _Sheet(SHEETS[2], exception_sheet_order(_with_age(EXCEPTIONS_COLUMNS)),
               _rows_of({**_to_fill(owned, tz), "age": owned["age"]}), len(owned),
               "exceptions.csv", resolution=True),
        _Sheet(SHEETS[3], PAYOUTS_COLUMNS,
               lambda start, stop: payout_columns(payouts.iloc[start:stop], tz), len(payouts),
               "payouts.csv"),
        _Sheet(SHEETS[4], RETURNS_COLUMNS, _rows_of(return_columns(data)), len(data.returns),
               "returns.csv"),
        _Sheet(SHEETS[5], order, _rows_of(_to_fill(exc, tz)), len(exc),
               "exceptions.csv", resolution=True),
        _Sheet(SHEETS[6], ROLLFORWARD_COLUMNS, _rows_of(rollforward_columns(data)),
               len(data.rollforward), "rollforward.csv"),
        _Sheet(SHEETS[7], STATEMENT_COLUMNS, _rows_of(statement_table(data)),
               sum(len(p["lines"]) for p in statement(data)), "rollforward.csv"),
    ]  # fmt: skip
    if data.journal is not None:
        sheets.append(_Sheet(JOURNAL_SHEET, JOURNAL_COLUMNS, _rows_of(journal_columns(data)),
                             len(data.journal), "journal.csv"))  # fmt: skip
    if data.balance is not None:
        sheets.append(_Sheet(BALANCE_SHEET, BALANCE_COLUMNS, _rows_of(balance_columns(data)),
                             len(data.balance), "balance.csv"))  # fmt: skip
    if data.several:
        sheets = [_labelled(sheet, data) for sheet in sheets]
    for sheet in sheets:
        _write_table(book.add_worksheet(sheet.name), sheet, styles, sheet_rows)


def _labelled(sheet: _Sheet, data: ReportInput) -> _Sheet:
    """Of several accounts, a sheet with ``provider_account`` has each row's label beside it
    (``account``: free text from the configuration, neutralised as every text cell; on a sheet
    with an ``account`` column of its own, the journal's ledger account, ``account_label``)."""
    if ACCOUNT not in sheet.order:
        return sheet
    at = list(sheet.order).index(ACCOUNT) + 1
    labels = {a: data.label(a) for a in data.accounts}
    block = sheet.block
    name = "account_label" if "account" in sheet.order else "account"

    def labelled(start: int, stop: int) -> Table:
        table = block(start, stop)
        names = table[ACCOUNT]
        assert isinstance(names, pd.Series)
        return {**table, name: names.astype(object).map(labels).fillna(names.astype(object))}

    order = [*sheet.order[:at], name, *sheet.order[at:]]
    return replace(sheet, order=order, block=labelled)


def _to_fill(exceptions: pd.DataFrame, tz: str) -> dict[str, Any]:
    """An exception sheet's columns: exceptions.csv's, and the sheets' own ``by`` (empty)."""
    return {**exception_columns(exceptions, tz), "by": pd.Series("", index=exceptions.index)}


def _with_age(order: Sequence[str]) -> list[str]:
    """The exceptions.csv columns with ``age`` (since first seen) right after ``first_seen``."""
    at = order.index("first_seen") + 1
    return [*order[:at], "age", *order[at:]]


# --- cells ------------------------------------------------------------------------------------

# A column turned into cells: (write method name, values, one format or one per row). ``None``
# values are left empty.
_Cells = tuple[str, list[Any], Format | list[Format] | None]


def _excel_serials(times: Times) -> list[float | None]:
    """Aware timestamps as Excel serial date-times of their local wall time (``None`` for NaT)."""
    aware = pd.to_datetime(times.values, utc=True)
    wall = aware.dt.tz_convert(times.timezone).dt.tz_localize(None).to_numpy(dtype="datetime64[s]")
    serial = (wall - _EXCEL_EPOCH).astype("timedelta64[s]").astype(np.float64) / _SECONDS_PER_DAY
    missing = aware.isna().to_numpy(dtype=bool)
    return [None if m else s for m, s in zip(missing.tolist(), serial.tolist(), strict=True)]


def _excel_days(dates: Dates) -> list[int | None]:
    """Calendar days as Excel serial dates (``None`` for none)."""
    return [None if d is None or d != d else (d - _EXCEL_DAY_ZERO).days for d in dates.values]


def _numbers(amounts: Amounts) -> tuple[list[float | None], list[int]]:
    """Each amount as the double nearest its exact value, and its currency's digits."""
    codes = amounts.currency.astype(object).where(amounts.currency.notna(), "")
    digit_of = {str(c): minor_digits(str(c)) for c in pd.unique(codes)}
    digits = codes.map(digit_of).to_numpy(dtype=np.int64)
    minor = amounts.minor.astype("Int64")
    missing = minor.isna().to_numpy(dtype=bool)
    # Both operands are exact doubles below 2**53 minor units, and IEEE division rounds correctly:
    # the same double as float(Decimal(minor).scaleb(-digits)), without a Decimal per row.
    values = minor.to_numpy(dtype=np.float64, na_value=0.0) / np.power(10.0, digits)
    numbers = [None if m else v for m, v in zip(missing.tolist(), values.tolist(), strict=True)]
    return numbers, digits.tolist()


def _cells(
    name: str, column: pd.Series | Amounts | Times | Dates, styles: Styles, wrap: bool = False
) -> _Cells:
    if isinstance(column, Amounts):
        numbers, digits = _numbers(column)
        return "write_number", numbers, [styles.money(d) for d in digits]
    if isinstance(column, Times):
        fmt = styles.date if name in DATE_COLUMNS else styles.datetime
        return "write_number", _excel_serials(column), fmt
    if isinstance(column, Dates):
        return "write_number", _excel_days(column), styles.date
    if pd.api.types.is_bool_dtype(column.dtype):
        return "write_boolean", column.tolist(), styles.text
    # A column of integers is numbers, whatever its name: the journal's ``line`` (a roll-forward
    # ``line`` is text, so the name alone cannot say).
    if name in NUMERIC or pd.api.types.is_integer_dtype(column.dtype):
        values = column.astype("Int64")
        ints = values.to_numpy(dtype=np.int64, na_value=0).tolist()
        missing = values.isna().to_numpy(dtype=bool).tolist()
        numbers = [None if m else v for m, v in zip(missing, ints, strict=True)]
        return "write_number", numbers, styles.text
    texts = neutralise(text_array(column), ids=name in IDS).tolist()
    fmt = styles.wrapped if wrap else styles.text
    return "write_string", [_fitted(t) if t else None for t in texts], fmt


def _fitted(text: str) -> str:
    """``text``, or, when longer than a cell holds, its start and a note that it was cut."""
    if len(text) <= CELL_CHARS:
        return text
    note = f" [cut at Excel's {CELL_CHARS:,} characters; the CSV holds all {len(text):,}]"
    return text[: CELL_CHARS - len(note)] + note


def _write_rows(
    sheet: Worksheet, first_row: int, cells: list[_Cells], heights: list[float | None]
) -> None:
    """Rows of cells, row by row (``constant_memory`` flushes a row when the next one starts);
    a row's height, when it has one, is set before its cells."""
    columns = [
        (col, getattr(sheet, method), values, fmt)
        for col, (method, values, fmt) in enumerate(cells)
    ]
    for i, height in enumerate(heights):
        row = first_row + i
        if height is not None:
            sheet.set_row(row, height)
        for col, write, values, fmt in columns:
            value = values[i]
            if value is not None:
                write(row, col, value, fmt[i] if isinstance(fmt, list) else fmt)


# --- sheets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sheet:
    """One table to write: its columns in order, its rows ``start:stop`` on demand, its CSV."""

    name: str
    order: Sequence[str]
    block: Callable[[int, int], Table]
    rows: int
    csv_name: str
    resolution: bool = False  # an exception sheet: a drop-down on `resolution`
    first_row: int = 0  # of the header


def _rows_of(table: Table) -> Callable[[int, int], Table]:
    """Rows ``start:stop`` of every column of a table at hand."""

    def block(start: int, stop: int) -> Table:
        out: Table = {}
        for name, column in table.items():
            if isinstance(column, Amounts):
                out[name] = Amounts(column.minor.iloc[start:stop], column.currency.iloc[start:stop])
            elif isinstance(column, Times):
                out[name] = Times(column.values.iloc[start:stop], column.timezone)
            elif isinstance(column, Dates):
                out[name] = Dates(column.values.iloc[start:stop])
            else:
                out[name] = column.iloc[start:stop]
        return out

    return block


def _write_table(sheet: Worksheet, table: _Sheet, styles: Styles, sheet_rows: int) -> None:
    """A header row, then the rows in blocks: frozen header, autofilter, fitted widths.

    Widths are fitted to the first block of rows (every row of all but the payouts of a very
    large run), so a million rows are not read twice.
    """
    top, order = table.first_row, list(table.order)
    room = sheet_rows - top - 1  # data rows below the header
    shown = table.rows if table.rows <= room else room - 1  # the last row says what is left out
    first = table.block(0, min(shown, BLOCK_ROWS))
    wrapped: dict[int, int] = {}  # column: width, of the columns whose text wraps
    for col, name in enumerate(order):
        width, wrap = column_width(name, first[name], DATE_COLUMNS)
        column_format = styles.date if name in DATE_COLUMNS else styles.wrapped if wrap else None
        sheet.set_column(col, col, width, column_format)
        if wrap:
            wrapped[col] = width
    sheet.write_row(top, 0, order, styles.header)
    sheet.freeze_panes(top + 1, 0)
    print_setup(sheet, table.name, top)
    last = top + max(shown, 1)
    sheet.autofilter(top, 0, last, len(order) - 1)
    if table.resolution:
        col = order.index("resolution")
        sheet.data_validation(
            top + 1,
            col,
            last,
            col,
            {
                "validate": "list",
                "source": list(RESOLUTIONS),
                "error_title": "resolution",
                "error_message": "One of: " + ", ".join(RESOLUTIONS) + " (or empty to skip).",
            },
        )
    for start in range(0, shown, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, shown)
        block = first if start == 0 else table.block(start, stop)
        cells = [
            _cells(name, block[name], styles, col in wrapped) for col, name in enumerate(order)
        ]
        heights = row_heights(
            [(cells[col][1], width) for col, width in wrapped.items()], stop - start
        )
        _write_rows(sheet, top + 1 + start, cells, heights)
    if shown < table.rows:
        sheet.write_string(
            top + 1 + shown,
            0,
            f"{table.rows - shown:,} more rows are in {table.csv_name}: a sheet holds"
            f" {sheet_rows:,} rows",
            styles.note,
        )


def _payouts_line(data: ReportInput, shown: int) -> str:
    """What the Payouts sheet holds, against payouts.csv."""
    window = f"of the last {data.window_days:g} days"
    if shown == len(data.payouts):
        return f"all {shown:,} {window} (sheet Payouts, as payouts.csv)"
    return (
        f"{shown:,} on sheet Payouts (changed tonight other than routinely, open or flagged); "
        f"payouts.csv has all {len(data.payouts):,} {window}"
    )


AS_OF_WIDTH = 18  # "2026-11-27 02:36" and a margin


def _stake_line(data: ReportInput) -> str:
    """The money at stake in one line: ``DKK 2,114.77 paid twice · 1 problem; EUR …``."""
    currencies = [
        f"{code or 'no amount'} {' · '.join([*parts, f'{n:,} problem' + ('' if n == 1 else 's')])}"
        for code, parts, n in stake_lines(data)
    ]
    return "; ".join(currencies) or "nothing"


def _summary_sheet(sheet: Worksheet, data: ReportInput, styles: Styles, shown: int) -> None:
    """A few lines about the run, a blank line, then summary.csv's table."""
    run = data.run
    c = counts(data)
    as_of = run.as_of.astimezone(ZoneInfo(data.timezone))
    lines: list[tuple[str, Any]] = [
        ("Accounts", nights_text(data))
        if data.several
        else ("Run", str(run.run_id) if run.run_id is not None else f"none ({run.status})"),
        ("Status", str(run.status)),
        ("As of", as_of.replace(tzinfo=None)),
        ("Times in", f"{data.timezone} (local time; the CSV files carry the UTC offset)"),
        ("Exceptions", " ".join(filter(None, (problems_text(c), standing_text(data))))),
        ("At stake", _stake_line(data)),
        ("Payouts", _payouts_line(data, shown)),
        ("Amounts", "numbers with the currency's decimals; the CSV files hold the exact text"),
        *fee_lines(data),
        *journal_summary_lines(data),
    ]
    for row, (label, value) in enumerate(lines):
        sheet.write_string(row, 0, label, styles.label)
        if isinstance(value, str):  # free text (an account's label) as every text cell
            sheet.write_string(row, 1, neutralise_text(value))
        else:
            sheet.write_datetime(row, 1, value, styles.datetime)
    table = summary_columns(data)
    rows = len(payout_summary(data))
    summary = _Sheet(SHEETS[0], SUMMARY_COLUMNS, _rows_of(table), rows, "summary.csv",
                     first_row=len(lines) + 1)  # fmt: skip
    _write_table(sheet, summary, styles, SHEET_ROWS)
    # Column B holds the lines' values too: wide enough for "As of" (a date and time, not ###).
    name = SUMMARY_COLUMNS[1]
    fitted, _ = column_width(name, summary.block(0, min(rows, BLOCK_ROWS))[name], DATE_COLUMNS)
    sheet.set_column(1, 1, max(fitted, AS_OF_WIDTH))
