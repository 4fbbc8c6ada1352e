"""``recon export payouts``: the whole payout history as payouts.csv's columns, in constant memory.

The report covers the night and its window (``RECON_REPORT_DAYS``); the history is this export.
Rows come from the store a part at a time (:mod:`recon.store.export_reads`) and are written as they
come: CSV with payouts.csv's own renderer (:func:`recon.report.csvpack.payouts_block`, the same
columns and cells), XLSX with xlsxwriter's ``constant_memory`` mode (each row flushed once
written), the same cells as text, so amounts stay exact. Either file appears whole or not at all
(written beside, then renamed).
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable, Iterator
from datetime import datetime
from enum import StrEnum
from pathlib import Path

import pandas as pd
import xlsxwriter
from sqlalchemy import Engine

from recon.report.csvpack import PAYOUTS_COLUMNS, payouts_block
from recon.report.pack import DEFAULT_MODE, write_atomic_chunks
from recon.store.export_reads import payout_history_parts


class ExportFormat(StrEnum):
    """The file formats ``recon export payouts`` writes."""

    CSV = "csv"
    XLSX = "xlsx"


def _csv_blocks(parts: Iterable[pd.DataFrame], timezone: str) -> Iterator[bytes]:
    first = True
    for part in parts:
        yield payouts_block(part, timezone, header=first)
        first = False
    if first:  # no payouts: the header alone, as payouts.csv
        yield (",".join(PAYOUTS_COLUMNS) + "\n").encode("utf-8")


def _write_xlsx(path: Path, blocks: Iterable[bytes], mode: int) -> None:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        book = xlsxwriter.Workbook(str(tmp), {"constant_memory": True, "strings_to_numbers": False})
        sheet = book.add_worksheet("payouts")
        row = 0
        for block in blocks:
            for cells in csv.reader(io.StringIO(block.decode("utf-8"), newline="")):
                for col, cell in enumerate(cells):
                    sheet.write_string(row, col, cell)
                row += 1
        book.close()
        tmp.chmod(mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def export_payouts(
    engine: Engine,
    path: Path,
    *,
    since: datetime,
    timezone: str,
    fmt: ExportFormat,
    mode: int = DEFAULT_MODE,
) -> Path:
    """Write every reconciled payout created since ``since`` to ``path``; returns ``path``."""
    with engine.connect() as conn:
        blocks = _csv_blocks(payout_history_parts(conn, since=since), timezone)
        if fmt is ExportFormat.CSV:
            write_atomic_chunks(path, blocks, mode=mode)
        else:
            _write_xlsx(path, blocks, mode)
    return path
