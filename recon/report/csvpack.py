"""The CSV pack finance loads into spreadsheets: payouts, summary, exceptions, returns.

The file names and the first columns of each file are a contract (issue 4); more columns may follow.
Amounts are exact text with the currency's minor digits, built from integer minor units. Text cells
are neutralised against formula injection wherever a separator could start a cell (the rule is in
``recon.report.fmt.neutralise``); amount and count columns are numbers and are left alone, so
``-5.00`` stays a negative number, and an id of letters, digits, ``_ . -`` stays as it is.
Renderers return bytes in a :class:`CsvDialect` (``RECON_CSV_DIALECT``): ``standard`` is UTF-8
without a BOM, ``,`` and ``.``, ``\\n``; ``excel-eu`` is what Excel set to a Danish, Swedish,
Norwegian, German... locale opens on a double-click: ``;`` between cells, ``,`` as the decimal mark
of amounts, a UTF-8 BOM (else it reads the file as the locale's code page) and CRLF.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recon.report.actions import payout_actions
from recon.report.fmt import (
    TextArray,
    amounts_text,
    csv_quote,
    local_times_text,
    neutralise,
    text_array,
)
from recon.report.model import ReportInput
from recon.report.views import exceptions_table, outcome_summary

PAYOUTS_COLUMNS = [
    "transaction_id", "merchant_reference", "amount", "currency", "outcome", "state",
    "error_code", "returned_amount", "exceptions",
    "candidate_duplicates", "created", "eta", "previous_outcome", "action",
]  # fmt: skip
SUMMARY_COLUMNS = ["currency", "outcome", "count", "amount", "returned_amount", "net"]
EXCEPTIONS_COLUMNS = [
    "exception_id",
    "transaction_id", "exception", "status", "amount", "currency", "merchant_reference",
    "error_code", "action",
    "item_kind", "detail",
    # issue 14: who owns it, since when, the earlier resolution of a reopened one, and an empty
    # `resolution` to fill in and send back through `recon exceptions apply`
    "owner", "note", "until", "first_seen", "previous_resolution", "resolution",
]  # fmt: skip
RETURNS_COLUMNS = [
    "return_transaction_id", "original_transaction_id", "amount", "currency", "matched",
    "confirmed", "notified",
]  # fmt: skip


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

# Columns that hold numbers (or booleans): never prefixed, so spreadsheets read them as numbers.
_NUMERIC = frozenset(
    {"amount", "returned_amount", "net", "state", "count", "matched", "confirmed", "notified"}
)

# Columns of provider ids: "-" and letters or digits is left bare there (see fmt.neutralise).
_IDS = frozenset(
    {
        "exception_id",
        "transaction_id",
        "return_transaction_id",
        "original_transaction_id",
        "candidate_duplicates",
    }
)
# Amount columns: their decimal mark follows the dialect.
_AMOUNTS = frozenset({"amount", "returned_amount", "net"})


# payouts.csv is rendered in blocks of this many rows: numpy's fixed-width string arrays take
# 4 bytes per character of the longest line for EVERY row, so a million-row file rendered at once
# needed ~800 MB of temporaries (bench/, BENCHMARKS.md); a block needs a few tens of MB.
BLOCK_ROWS = 50_000


def _to_bytes(
    columns: dict[str, pd.Series | TextArray],
    order: list[str],
    *,
    header: bool = True,
    dialect: CsvDialect = STANDARD,
) -> bytes:
    """Join the columns into CSV text with numpy string ufuncs (pandas' writer is ~5x slower)."""
    sep = dialect.separator
    line: TextArray | None = None
    for name in order:
        column = columns[name]
        cells = column if isinstance(column, np.ndarray) else text_array(column)
        if name not in _NUMERIC:
            cells = csv_quote(neutralise(cells, ids=name in _IDS), sep)
        elif name in _AMOUNTS and dialect.decimal != ".":
            cells = np.strings.replace(cells, ".", dialect.decimal)
        line = cells if line is None else line + sep + cells
    end = dialect.line_end
    body = "" if line is None or len(line) == 0 else end.join(line.tolist()) + end
    head = ("\ufeff" if dialect.bom else "") + sep.join(order) + end if header else ""
    return (head + body).encode("utf-8")


def _bools(series: pd.Series) -> pd.Series:
    return series.astype(bool).map({True: "true", False: "false"}).astype(object)


def payouts_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """payouts.csv: one row per payout; ``action`` says what to do about it, if anything."""
    return b"".join(payouts_csv_blocks(data, dialect=dialect))


def payouts_csv_blocks(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> Iterator[bytes]:
    """payouts.csv in blocks of ``BLOCK_ROWS`` rows, the header first: to write as it renders."""
    p = data.payouts
    starts = range(0, len(p), BLOCK_ROWS) if len(p) else range(1)
    for start in starts:
        block = p.iloc[start : start + BLOCK_ROWS]
        yield _payouts_block(block, data.timezone, header=start == 0, dialect=dialect)


def _payouts_block(p: pd.DataFrame, timezone: str, *, header: bool, dialect: CsvDialect) -> bytes:
    return _to_bytes(
        {
            "transaction_id": p["transaction_id"],
            "merchant_reference": p["merchant_reference"],
            "amount": amounts_text(p["amount_minor"], p["currency"]),
            "currency": p["currency"],
            "outcome": p["outcome"],
            "state": p["state"].astype("Int64"),
            "error_code": p["error_code"],
            "returned_amount": amounts_text(p["returned_minor"], p["currency"]),
            "exceptions": p["exceptions"],
            "candidate_duplicates": p["candidate_duplicates"],
            "created": local_times_text(p["created"], timezone),
            "eta": local_times_text(p["eta"], timezone),
            "previous_outcome": p["prev_outcome"],
            "action": payout_actions(p),
        },
        PAYOUTS_COLUMNS,
        header=header,
        dialect=dialect,
    )


def summary_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """summary.csv: count and amount per currency and outcome present; for settled and returned
    payouts also the confirmed returns on them and the net (empty for other outcomes)."""
    s = outcome_summary(data.payouts)
    return _to_bytes(
        {
            "currency": s["currency"],
            "outcome": s["outcome"],
            "count": s["count"],
            "amount": amounts_text(s["amount_minor"].astype("Int64"), s["currency"]),
            "returned_amount": amounts_text(s["returned_minor"], s["currency"]),
            "net": amounts_text(s["net_minor"], s["currency"]),
        },
        SUMMARY_COLUMNS,
        dialect=dialect,
    )


def exceptions_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """exceptions.csv: one row per item and flag, open ones first, with the recommended action."""
    e = exceptions_table(data)
    return _to_bytes(
        {
            "transaction_id": e["item_id"],
            "exception": e["flag"],
            "status": e["status"],
            "amount": amounts_text(e["amount_minor"], e["currency"]),
            "currency": e["currency"],
            "merchant_reference": e["merchant_reference"],
            "error_code": e["error_code"],
            "action": e["action"],
            "item_kind": e["item_kind"],
            "detail": e["detail"],
            "exception_id": e["exception_id"],
            "owner": e["owner"],
            "note": e["note"],
            "until": e["until_text"],
            "first_seen": local_times_text(e["opened_at"], data.timezone),
            "previous_resolution": e["previous_resolution"],
            "resolution": pd.Series("", index=e.index, dtype=object),
        },
        EXCEPTIONS_COLUMNS,
        dialect=dialect,
    )


def returns_csv(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> bytes:
    """returns.csv: each returned-funds transaction, its original payout, how far it is proven."""
    r = data.returns
    return _to_bytes(
        {
            "return_transaction_id": r["return_id"],
            "original_transaction_id": r["original_id"],
            "amount": amounts_text(r["amount_minor"], r["currency"]),
            "currency": r["currency"],
            "matched": _bools(r["matched"]),
            "confirmed": _bools(r["confirmed"]),
            "notified": _bools(r["notified"]),
        },
        RETURNS_COLUMNS,
        dialect=dialect,
    )


CSV_FILES = {
    "payouts.csv": payouts_csv,
    "summary.csv": summary_csv,
    "exceptions.csv": exceptions_csv,
    "returns.csv": returns_csv,
}


def render_csvs(data: ReportInput, *, dialect: CsvDialect = STANDARD) -> dict[str, bytes]:
    """Every CSV of the pack, by file name."""
    return {name: render(data, dialect=dialect) for name, render in CSV_FILES.items()}
