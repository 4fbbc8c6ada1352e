"""The CSV pack finance loads into spreadsheets: payouts, summary, exceptions, returns.

The file names and the first columns of each file are a contract (issue 4); more columns may follow.
The columns themselves are defined once, in :mod:`recon.report.tables` (the workbook writes the
same ones); this module encodes them as text. Amounts are exact text with the currency's minor
digits, built from integer minor units. Text cells are neutralised against formula injection
wherever a separator could start a cell (the rule is in ``recon.report.fmt.neutralise``); amount and
count columns are numbers and are left alone, so ``-5.00`` stays a negative number, and an id that
is ``-`` and letters or digits stays as it is. Renderers return bytes (UTF-8, ``\\n``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from recon.report.fmt import (
    TextArray,
    amounts_text,
    csv_quote,
    local_times_text,
    neutralise,
    text_array,
)
from recon.report.model import ReportInput
from recon.report.tables import (
    EXCEPTIONS_COLUMNS,
    IDS,
    NUMERIC,
    PAYOUTS_COLUMNS,
    RETURNS_COLUMNS,
    SUMMARY_COLUMNS,
    Amounts,
    Column,
    Table,
    Times,
    exception_columns,
    payout_columns,
    return_columns,
    summary_columns,
)
from recon.report.views import exceptions_table

__all__ = [
    "EXCEPTIONS_COLUMNS",
    "PAYOUTS_COLUMNS",
    "RETURNS_COLUMNS",
    "SUMMARY_COLUMNS",
    "exceptions_csv",
    "payouts_csv",
    "payouts_csv_blocks",
    "render_csvs",
    "returns_csv",
    "summary_csv",
]

# payouts.csv is rendered in blocks of this many rows: numpy's fixed-width string arrays take
# 4 bytes per character of the longest line for EVERY row, so a million-row file rendered at once
# needed ~800 MB of temporaries (bench/, BENCHMARKS.md); a block needs a few tens of MB.
BLOCK_ROWS = 50_000


def _text(column: Column) -> TextArray:
    """One column's cells as text (before neutralising)."""
    if isinstance(column, Amounts):
        return amounts_text(column.minor, column.currency)
    if isinstance(column, Times):
        return local_times_text(column.values, column.timezone)
    if pd.api.types.is_bool_dtype(column.dtype):
        return text_array(column.map({True: "true", False: "false"}).astype(object))
    return text_array(column)


def _to_bytes(table: Table, order: list[str], *, header: bool = True) -> bytes:
    """Join the columns into CSV text with numpy string ufuncs (pandas' writer is ~5x slower)."""
    line: TextArray | None = None
    for name in order:
        cells = _text(table[name])
        if name not in NUMERIC:
            cells = csv_quote(neutralise(cells, ids=name in IDS))
        line = cells if line is None else line + "," + cells
    body = "" if line is None or len(line) == 0 else "\n".join(line.tolist()) + "\n"
    return ((",".join(order) + "\n" if header else "") + body).encode("utf-8")


def payouts_csv(data: ReportInput) -> bytes:
    """payouts.csv: one row per payout; ``action`` is the provider's advice for failed/aborted."""
    return b"".join(payouts_csv_blocks(data))


def payouts_csv_blocks(data: ReportInput) -> Iterator[bytes]:
    """payouts.csv in blocks of ``BLOCK_ROWS`` rows, the header first: to write as it renders."""
    p = data.payouts
    starts = range(0, len(p), BLOCK_ROWS) if len(p) else range(1)
    for start in starts:
        yield payouts_block(p.iloc[start : start + BLOCK_ROWS], data.timezone, header=start == 0)


def payouts_block(p: pd.DataFrame, timezone: str, *, header: bool) -> bytes:
    """Rows of payouts.csv for the payouts frame ``p`` (the header line first when ``header``)."""
    return _to_bytes(payout_columns(p, timezone), PAYOUTS_COLUMNS, header=header)


def summary_csv(data: ReportInput) -> bytes:
    """summary.csv: count and amount per currency and outcome present; for settled and returned
    payouts also the confirmed returns on them and the net (empty for other outcomes)."""
    return _to_bytes(summary_columns(data), SUMMARY_COLUMNS)


def exceptions_csv(data: ReportInput) -> bytes:
    """exceptions.csv: one row per item and flag, open ones first, with the recommended action."""
    return _to_bytes(exception_columns(exceptions_table(data), data.timezone), EXCEPTIONS_COLUMNS)


def returns_csv(data: ReportInput) -> bytes:
    """returns.csv: each returned-funds transaction, its original payout, how far it is proven."""
    return _to_bytes(return_columns(data), RETURNS_COLUMNS)


CSV_FILES = {
    "payouts.csv": payouts_csv,
    "summary.csv": summary_csv,
    "exceptions.csv": exceptions_csv,
    "returns.csv": returns_csv,
}


def render_csvs(data: ReportInput) -> dict[str, bytes]:
    """Every CSV of the pack, by file name."""
    return {name: render(data) for name, render in CSV_FILES.items()}
