"""Write the report pack (report.html, the four CSVs, chart.png) into a directory, atomically.

The only place in ``recon.report`` that writes files. Each file goes to a temporary file in the same
directory, is flushed and fsynced, then renamed over the old one with ``os.replace``, so a reader
(or a run killed half-way) never sees a half-written file: it sees the old version or the new one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from recon.report.chart import volume_chart_png
from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.model import ReportInput

HTML_NAME = "report.html"
CHART_NAME = "chart.png"


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

    @property
    def csvs(self) -> list[Path]:
        """The CSV files, in the order finance reads them."""
        return [self.payouts, self.summary, self.exceptions, self.returns]


def write_atomic(path: Path, content: bytes) -> None:
    """Replace ``path`` with ``content`` all at once (temp file, fsync, rename, fsync the dir)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not possible on every platform.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def write_pack(out_dir: Path, data: ReportInput, *, row_cap: int) -> ReportFiles:
    """Render everything, then write each file atomically into ``out_dir`` (created if needed)."""
    data.check()
    chart = volume_chart_png(data.payouts, data.timezone) if len(data.payouts) else None
    contents: dict[str, bytes] = render_csvs(data)
    contents[HTML_NAME] = render_report(data, row_cap=row_cap, chart_png=chart).encode("utf-8")
    if chart is not None:
        contents[CHART_NAME] = chart
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, content in contents.items():
        write_atomic(out_dir / name, content)
    return ReportFiles(
        out_dir=out_dir,
        html=out_dir / HTML_NAME,
        payouts=out_dir / "payouts.csv",
        summary=out_dir / "summary.csv",
        exceptions=out_dir / "exceptions.csv",
        returns=out_dir / "returns.csv",
        chart=out_dir / CHART_NAME if chart is not None else None,
    )
