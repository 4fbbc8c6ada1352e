"""The demo's finance team answering the first night's mail through the workbook."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import openpyxl

from recon.ops.findings import applied_lines, perform, requests_from_file
from recon.settings import Settings


def work_the_queue(settings: Settings, work_dir: Path) -> list[str]:
    """Finance answers the first night's mail: in report.xlsx's "Needs action" sheet they
    acknowledge the first exception and resolve the second, and send the file back through
    ``recon exceptions apply`` (the same code). The second night's report shows the difference."""
    book = openpyxl.load_workbook(work_dir / "report-night-1" / "report.xlsx")
    rows = book["Needs action"].iter_rows()
    header = [c.value for c in next(rows)]
    at = {name: header.index(name) for name in ("resolution", "note")}
    answers = [
        ("acknowledge", "finance: asking the provider"),
        ("resolve", "finance: known, nothing to recover"),
    ]
    for row, (resolution, note) in zip(rows, answers, strict=False):
        row[at["resolution"]].value, row[at["note"]].value = resolution, note
    filled = work_dir / "report-night-1" / "report-answered.xlsx"
    book.save(filled)
    now = datetime.now(UTC)
    requests = requests_from_file(
        filled,
        by="maria",
        zone=settings.zone,
        today=now.astimezone(settings.zone).date(),
        max_bytes=settings.apply_max_bytes,
    )
    if not requests:
        return ["no exception to work on after the first night"]
    applied = perform(settings.database_url, requests, now=now, source=filled.name)
    return [
        f"finance answered in {filled.name}; recon exceptions apply {filled.name}:",
        *(f"  {line}" for line in applied_lines(applied)),
    ]
