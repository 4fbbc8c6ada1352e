"""``recon export payouts``: the whole payout history as payouts.csv's columns, in constant memory.

The report covers the night and its window (``RECON_REPORT_DAYS``); the history is this export.
Rows come from the store a part at a time (:mod:`recon.store.export_reads`) and are written as they
come: CSV with payouts.csv's own renderer (:func:`recon.report.csvpack.payouts_block`, the same
columns and cells), XLSX with xlsxwriter's ``constant_memory`` mode (each row flushed once
written), the same cells as text, so amounts stay exact; past Excel's 1,048,576 rows a sheet the
rows go on in sheets "payouts 2", "payouts 3"..., each under the header. Either file appears whole
or not at all (written beside, then renamed).

The partial file written beside holds customer data, so it never outlives the export: it is
removed when the export fails, or is stopped by SIGTERM or SIGINT (:mod:`recon.signals`); one left
by an export killed outright is swept by the next export into the same directory
(:func:`recon.files.sweep_partials`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import time
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime
from enum import StrEnum
from pathlib import Path

import pandas as pd
import xlsxwriter
from sqlalchemy import Engine

from recon.errors import ReportWriteError
from recon.files import (
    DEFAULT_MODE,
    discard,
    make_private_dirs,
    partial_dir,
    sweep_partials,
    write_atomic_chunks,
)
from recon.report.csvpack import PAYOUTS_COLUMNS, payouts_block
from recon.report.model import ACCOUNT
from recon.report.tables import account_of
from recon.report.workbook import SHEET_ROWS
from recon.signals import stopping_raises
from recon.store.export_reads import accounts_with_payouts, payout_history_parts


class ExportFormat(StrEnum):
    """The file formats ``recon export payouts`` writes."""

    CSV = "csv"
    XLSX = "xlsx"


def _csv_blocks(
    parts: Iterable[pd.DataFrame], timezone: str, accounts: Collection[str] | None = None
) -> Iterator[bytes]:
    first = True
    for part in parts:
        if accounts is not None:
            part = part[account_of(part).astype(object).isin(list(accounts)).to_numpy(dtype=bool)]
        yield payouts_block(part, timezone, header=first)
        first = False
    if first:  # no payouts: the header alone, as payouts.csv
        yield (",".join(PAYOUTS_COLUMNS) + "\n").encode("utf-8")


def _write_xlsx(path: Path, blocks: Iterable[bytes], mode: int, sheet_rows: int) -> None:
    # In constant_memory mode xlsxwriter writes the rows to files of its own before zipping them:
    # in the partial directory, not /tmp, so that they are private and go with it.
    work = partial_dir(path)
    try:
        tmp = work / path.name
        book = xlsxwriter.Workbook(
            str(tmp), {"constant_memory": True, "strings_to_numbers": False, "tmpdir": str(work)}
        )
        try:
            _fill(book, blocks, path, sheet_rows)
        except BaseException:
            with contextlib.suppress(Exception):
                book.close()  # unclosed, xlsxwriter complains from its destructor
            raise
        book.close()
        tmp.chmod(mode)
        os.replace(tmp, path)
    finally:
        discard(work)


def _fill(book: xlsxwriter.Workbook, blocks: Iterable[bytes], path: Path, sheet_rows: int) -> None:
    """The CSV blocks' cells as text; a further sheet, under the same header, whenever one is
    full (xlsxwriter ignores a row past the limit: it returns -1 and writes nothing)."""
    sheet = book.add_worksheet("payouts")
    sheets, row = 1, 0
    header: list[str] = []
    for block in blocks:
        for cells in csv.reader(io.StringIO(block.decode("utf-8"), newline="")):
            if not header:
                header = cells
            elif row == sheet_rows:
                sheets += 1
                sheet = book.add_worksheet(f"payouts {sheets}")
                sheet.write_row(0, 0, header)
                row = 1
            for col, cell in enumerate(cells):
                if sheet.write_string(row, col, cell) != 0:  # -2: over 32,767 characters
                    raise ReportWriteError(
                        f"{path}: {header[col]} of {cells[0]} does not fit in a cell "
                        f"({len(cell):,} characters); export --format csv instead"
                    )
            row += 1


def export_payouts(
    engine: Engine,
    path: Path,
    *,
    since: datetime,
    timezone: str,
    fmt: ExportFormat,
    mode: int = DEFAULT_MODE,
    sheet_rows: int = SHEET_ROWS,
    accounts: Collection[str] | None = None,
) -> Path:
    """Write every reconciled payout created since ``since`` to ``path``; returns ``path``.
    ``sheet_rows``: the rows an XLSX sheet may hold, the header included (Excel's limit);
    ``accounts``: only these provider accounts' payouts (``--account``; None: every account).

    The directory is created (0700) if missing, and cleared of earlier exports' partial files.
    """
    started = time.time()
    make_private_dirs(path.parent)
    sweep_partials(path.parent, before=started)
    with stopping_raises(), engine.connect() as conn:
        parts = (
            part.assign(**{ACCOUNT: account})
            for account in (
                sorted(accounts) if accounts is not None else accounts_with_payouts(conn)
            )
            for part in payout_history_parts(conn, since=since, account=account)
        )
        blocks = _csv_blocks(parts, timezone, accounts)
        if fmt is ExportFormat.CSV:
            write_atomic_chunks(path, blocks, mode=mode)
        else:
            _write_xlsx(path, blocks, mode, sheet_rows)
    return path
