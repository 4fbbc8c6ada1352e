"""Write the report pack (report.html, the six CSVs, journal.csv with a journal configured,
balance.csv once a closing balance is recorded, report.xlsx, chart.png) into a directory,
atomically.

The only place in ``recon.report`` that writes files. Each file goes to a temporary file in the same
directory, is flushed and fsynced, then renamed over the old one with ``os.replace``, so a reader
(or a run killed half-way) never sees a half-written file: it sees the old version or the new one.
The temporary files are named and swept as :mod:`recon.files` says; the directory, when recon
creates it, is 0700.

Every file gets the permission bits asked for (``RECON_REPORT_MODE``, default 0600) whatever the
umask. A dry run's files are named ``dry-run-report.html``, ``dry-run-payouts.csv``,
``dry-run-report.xlsx``...: the name says what the file is wherever it is copied, the CSVs keep
their columns (a contract), and a dry run can never replace a real report's file, even when pointed
at the same directory.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal

from recon.constants import RunStatus
from recon.errors import ReportDirError, ReportWriteError
from recon.files import DEFAULT_MODE, discard, fsync_dir, make_private_dirs, staged_file
from recon.report.chart import volume_chart_png
from recon.report.csvpack import (
    BALANCE_NAME,
    DIALECTS,
    JOURNAL_NAME,
    STANDARD,
    CsvDialect,
    csv_files,
    payouts_csv_blocks,
)
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.workbook import PayoutRows, render_workbook
from recon.settings import Settings

HTML_NAME = "report.html"
WORKBOOK_NAME = "report.xlsx"
CHART_NAME = "chart.png"
DRY_RUN_PREFIX = "dry-run-"


@dataclass(frozen=True)
class ReportFiles:
    """Where the pack was written."""

    out_dir: Path
    html: Path
    payouts: Path
    summary: Path
    exceptions: Path
    returns: Path
    chart: Path | None  # None when there were no payouts to chart
    workbook: Path | None  # None with RECON_REPORT_WORKBOOK=off
    rollforward: Path | None = None  # the night's roll-forward
    fees: Path | None = None  # each payout's fee against the agreed one
    journal: Path | None = None  # the journal lines the nights made (None: no journal configured)
    balance: Path | None = None  # the balance statements (None: no closing recorded)

    @property
    def csvs(self) -> list[Path]:
        """The CSV files, in the order finance reads them."""
        return [self.payouts, self.summary, self.exceptions, self.returns]

    @property
    def attachments(self) -> list[Path]:
        """What the email carries: the CSV files, then the workbook."""
        return [*self.csvs, *([self.workbook] if self.workbook is not None else [])]


def file_prefix(data: ReportInput) -> str:
    """What every file name of this report starts with: ``dry-run-`` for a dry run, else nothing."""
    return DRY_RUN_PREFIX if data.run.status == RunStatus.DRY_RUN else ""


def write_pack(
    out_dir: Path,
    data: ReportInput,
    *,
    row_cap: int,
    mode: int = DEFAULT_MODE,
    max_gap: timedelta | None = None,
    dialect: CsvDialect = STANDARD,
    workbook: PayoutRows | Literal["off"] = "night",
) -> ReportFiles:
    """Render every file into a temporary file in ``out_dir`` (created 0700 if needed), then rename
    each.

    Nothing is replaced until everything has rendered. payouts.csv goes to its file block by block
    as it renders: held whole (twice while joined) it set the peak memory of a 1,000,000-payout
    report (BENCHMARKS.md, "Scale"). ``workbook`` (``RECON_REPORT_WORKBOOK``) is report.xlsx's
    Payouts sheet, the night's payouts or the window's; with ``off`` no report.xlsx is written,
    and an earlier one in ``out_dir`` goes with the others' renames, so that the directory never
    holds another run's workbook beside this report.
    """
    data.check()
    chart = volume_chart_png(data.payouts, data.timezone) if len(data.payouts) else None
    make_private_dirs(out_dir)
    prefix = file_prefix(data)

    def path(name: str) -> Path:
        return out_dir / f"{prefix}{name}"

    staged: dict[str, Path] = {}
    try:
        blocks = payouts_csv_blocks(data, dialect=dialect)
        staged["payouts.csv"] = staged_file(path("payouts.csv"), blocks, mode)
        for name, render in csv_files(data).items():
            if name not in staged:
                staged[name] = staged_file(path(name), [render(data, dialect=dialect)], mode)
        if workbook != "off":
            book = render_workbook(data, payouts=workbook)
            staged[WORKBOOK_NAME] = staged_file(path(WORKBOOK_NAME), [book], mode)
            del book
        html = render_report(data, row_cap=row_cap, chart_png=chart, max_gap=max_gap)
        html_bytes = html.encode("utf-8")
        staged[HTML_NAME] = staged_file(path(HTML_NAME), [html_bytes], mode)
        if chart is not None:
            staged[CHART_NAME] = staged_file(path(CHART_NAME), [chart], mode)
        for name, tmp in staged.items():
            os.replace(tmp, path(name))
        if workbook == "off":
            discard(path(WORKBOOK_NAME))
        if data.journal is None:  # no journal now: an earlier journal.csv is not this night's
            discard(path(JOURNAL_NAME))
        if data.balance is None:  # no closing recorded: an earlier balance.csv is not this one's
            discard(path(BALANCE_NAME))
    except BaseException:
        for partial in staged.values():
            discard(partial)
        raise
    fsync_dir(out_dir)
    return ReportFiles(
        out_dir=out_dir,
        html=path(HTML_NAME),
        payouts=path("payouts.csv"),
        summary=path("summary.csv"),
        exceptions=path("exceptions.csv"),
        returns=path("returns.csv"),
        chart=path(CHART_NAME) if chart is not None else None,
        workbook=path(WORKBOOK_NAME) if workbook != "off" else None,
        rollforward=path("rollforward.csv"),
        fees=path("fees.csv"),
        journal=path(JOURNAL_NAME) if data.journal is not None else None,
        balance=path(BALANCE_NAME) if data.balance is not None else None,
    )


# Errors that say the directory itself is wrong (a bad --out), not that writing into it failed.
_BAD_DIRECTORY = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.EISDIR}
)


def write_reports(
    out_dir: Path,
    data: ReportInput,
    *,
    row_cap: int,
    mode: int = DEFAULT_MODE,
    max_gap: timedelta | None = None,
    dialect: CsvDialect = STANDARD,
    workbook: PayoutRows | Literal["off"] = "night",
) -> ReportFiles:
    """:func:`write_pack`, with a file system's refusal as one clear error instead of a traceback.

    :class:`~recon.errors.ReportDirError` (a usage error) when ``out_dir`` cannot be written at
    all, :class:`~recon.errors.ReportWriteError` when writing failed (a full disk, an I/O error).
    """
    try:
        return write_pack(
            out_dir,
            data,
            row_cap=row_cap,
            mode=mode,
            max_gap=max_gap,
            dialect=dialect,
            workbook=workbook,
        )
    except OSError as exc:
        kind = ReportDirError if exc.errno in _BAD_DIRECTORY else ReportWriteError
        raise kind(f"cannot write the reports to {out_dir}: {exc.strerror or exc}") from None


def write_configured(settings: Settings, out_dir: Path, data: ReportInput) -> ReportFiles:
    """:func:`write_reports` as the settings say (row cap, file mode, the largest gap between
    runs, the CSV dialect, the workbook), for ``recon run`` and ``recon report`` alike."""
    return write_reports(
        out_dir,
        data,
        row_cap=settings.report_row_cap,
        mode=settings.report_mode,
        max_gap=settings.max_run_age,
        dialect=DIALECTS[settings.csv_dialect],
        workbook=settings.report_workbook,
    )
