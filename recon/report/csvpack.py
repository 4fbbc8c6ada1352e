"""The CSV pack finance loads into spreadsheets: payouts, summary, exceptions, returns, the
roll-forward, fees, with a journal configured the night's journal lines, and once a closing
balance is recorded the balance statements.

The file names and the first columns of each file are a contract; more columns may follow.
The columns themselves are defined once, in :mod:`recon.report.tables` (the workbook writes the
same ones); this module encodes them as text. Amounts are exact text with the currency's minor
digits, built from integer minor units. Text cells are neutralised against formula injection
wherever a separator could start a cell (the rule is in ``recon.textsafe.neutralise``); amount and
count columns are numbers and are left alone, so ``-5.00`` stays a negative number, and an id of
letters, digits, ``_ . -`` stays as it is.
Renderers return bytes in a :class:`CsvDialect` (``RECON_CSV_DIALECT``): ``standard`` is UTF-8
without a BOM, ``,`` and ``.``, ``\\n``; ``excel-eu`` is what Excel set to a Danish, Swedish,
Norwegian, German... locale opens on a double-click: ``;`` between cells, ``,`` as the decimal mark
of amounts, a UTF-8 BOM (else it reads the file as the locale's code page) and CRLF.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recon.report.fmt import (
    TextArray,
    amounts_text,
    csv_quote,
    local_times_text,
    text_array,
)
from recon.report.model import ReportInput
from recon.report.tables import (
    BALANCE_COLUMNS,
    EXCEPTIONS_COLUMNS,
    FEES_COLUMNS,
    IDS,
    JOURNAL_COLUMNS,
    NUMERIC,
    PAYOUTS_COLUMNS,
    RETURNS_COLUMNS,
    ROLLFORWARD_COLUMNS,
    SUMMARY_COLUMNS,
    Amounts,
    Column,
    Dates,
    Table,
    Times,
    balance_columns,
    exception_columns,
    fee_columns,
    journal_columns,
    journal_line_columns,
    payout_columns,
    return_columns,
    rollforward_columns,
    summary_columns,
)
from recon.report.views import exceptions_table
from recon.textsafe import neutralise

__all__ = [
    "DIALECTS",
    "EXCEL_EU",
    "EXCEPTIONS_COLUMNS",
    "PAYOUTS_COLUMNS",
    "RETURNS_COLUMNS",
    "STANDARD",
    "SUMMARY_COLUMNS",
    "CsvDialect",
    "exceptions_csv",
    "payouts_csv",
    "payouts_csv_blocks",
    "render_csvs",
    "returns_csv",
    "summary_csv",
]


@dataclass(frozen=True)
class CsvDialect:
    """How the CSV files are written: separator, decimal mark of amounts, BOM, line end."""

    name: str
    separator: str
    decimal: str
    bom: bool
    line_end: str


STANDARD = CsvDialect("standard", separator=",", decimal=".", bom=False, line_end="\n")
EXCEL_EU = CsvDialect("excel-eu", separator=";", decimal=",", bom=True, line_end="\r\n")
DIALECTS: dict[str, CsvDialect] = {d.name: d for d in (STANDARD, EXCEL_EU)}

# payouts.csv is rendered in blocks of this many rows: numpy's fixed-width string arrays take
# 4 bytes per character of the longest line for EVERY row, so a million-row file rendered at once
# needed hundreds of MB of temporaries (BENCHMARKS.md); a block's temporaries stay small.
BLOCK_ROWS = 50_000


def _text(column: Column) -> TextArray:
    """One column's cells as text (before neutralising)."""
    if isinstance(column, Amounts):
        return amounts_text(column.minor, column.currency)
    if isinstance(column, Times):
        return local_times_text(column.values, column.timezone)
    if isinstance(column, Dates):
        return text_array(column.values.map(lambda d: None if d is None else d.isoformat()))
    if pd.api.types.is_bool_dtype(column.dtype):
        return text_array(column.map({True: "true", False: "false"}).astype(object))
    return text_array(column)


def _to_bytes(
    table: Table, order: list[str], *, header: bool = True, dialect: CsvDialect = STANDARD
) -> bytes:
    """Join the columns into CSV text with numpy string ufuncs (faster than pandas' writer)."""
    sep = dialect.separator
    line: TextArray | None = None
    for name in order:
        column = table[name]
        cells = _text(column)
        if name not in NUMERIC:
            cells = csv_quote(neutralise(cells, ids=name in IDS), sep)
        elif isinstance(column, Amounts) and dialect.decimal != ".":
            cells = np.strings.replace(cells, ".", dialect.decimal)
        line = cells if line is None else line + sep + cells
    end = dialect.line_end
    body = "" if line is None or len(line) == 0 else end.join(line.tolist()) + end
    head = ("\ufeff" if dialect.bom else "") + sep.join(order) + end if header else ""
    return (head + body).encode("utf-8")


def payouts_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """payouts.csv: one row per payout; ``action`` says what to do about it, if anything."""
    return b"".join(payouts_csv_blocks(data, dialect=dialect))


def payouts_csv_blocks(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> Iterator[bytes]:
    """payouts.csv in blocks of ``BLOCK_ROWS`` rows, the header first: to write as it renders."""
    p = data.payouts
    starts = range(0, len(p), BLOCK_ROWS) if len(p) else range(1)
    for start in starts:
        block = p.iloc[start : start + BLOCK_ROWS]
        yield payouts_block(block, data.timezone, header=start == 0, dialect=dialect)


def payouts_block(
    p: pd.DataFrame, timezone: str, *, header: bool, dialect: CsvDialect = STANDARD
) -> bytes:
    """Rows of payouts.csv for the payouts frame ``p`` (the header line first when ``header``)."""
    return _to_bytes(payout_columns(p, timezone), PAYOUTS_COLUMNS, header=header, dialect=dialect)


def summary_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """summary.csv: count and amount per currency and outcome present; for settled and returned
    payouts also the confirmed returns on them and the net (empty for other outcomes)."""
    return _to_bytes(summary_columns(data), SUMMARY_COLUMNS, dialect=dialect)


def exceptions_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """exceptions.csv: one row per item and flag, open ones first, with the recommended action."""
    table = exception_columns(exceptions_table(data), data.timezone)
    return _to_bytes(table, EXCEPTIONS_COLUMNS, dialect=dialect)


def returns_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """returns.csv: each returned-funds transaction, its original payout, how far it is proven."""
    return _to_bytes(return_columns(data), RETURNS_COLUMNS, dialect=dialect)


def rollforward_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """rollforward.csv: the night's roll-forward, one line (count and amount) per row."""
    return _to_bytes(rollforward_columns(data), ROLLFORWARD_COLUMNS, dialect=dialect)


def fees_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """fees.csv: each payout with a fee charged or agreed: the fees, their difference, the entry."""
    return _to_bytes(fee_columns(data), FEES_COLUMNS, dialect=dialect)


def journal_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """journal.csv: each line of the journal entries the nights made (only with a journal)."""
    return _to_bytes(journal_columns(data), JOURNAL_COLUMNS, dialect=dialect)


def journal_lines_csv(journal: pd.DataFrame, *, dialect: CsvDialect = STANDARD) -> bytes:
    """A journal frame's lines (:func:`recon.report.journal.journal_frame`) in its order, as
    journal.csv writes them: ``recon journal export --format csv`` writes a batch with this."""
    return _to_bytes(journal_line_columns(journal), JOURNAL_COLUMNS, dialect=dialect)


CSV_FILES = {
    "payouts.csv": payouts_csv,
    "summary.csv": summary_csv,
    "exceptions.csv": exceptions_csv,
    "returns.csv": returns_csv,
    "rollforward.csv": rollforward_csv,
    "fees.csv": fees_csv,
}


JOURNAL_NAME = "journal.csv"
BALANCE_NAME = "balance.csv"


def balance_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """balance.csv: each line of each balance statement (only once a closing is recorded)."""
    return _to_bytes(balance_columns(data), BALANCE_COLUMNS, dialect=dialect)


def csv_files(data: ReportInput) -> dict[str, Callable[..., bytes]]:
    """The CSV files of ``data``'s pack and how each renders: :data:`CSV_FILES`, journal.csv
    when a journal is configured, and balance.csv once a closing balance is recorded."""
    files = dict(CSV_FILES)
    if data.journal is not None:
        files[JOURNAL_NAME] = journal_csv
    if data.balance is not None:
        files[BALANCE_NAME] = balance_csv
    return files


def render_csvs(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> dict[str, bytes]:
    """Every CSV of the pack, by file name."""
    return {name: render(data, dialect=dialect) for name, render in csv_files(data).items()}
