"""write_pack: every file of the pack, written atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.files import write_atomic
from recon.report.pack import write_pack
from tests.unit.report_fixtures import report_input


def test_the_pack_holds_the_report_the_csvs_the_workbook_and_the_chart(tmp_path: Path) -> None:
    """report.html, four CSVs, report.xlsx and chart.png are written and the paths returned."""
    files = write_pack(tmp_path / "out", report_input(), row_cap=200)
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == [
        "chart.png", "exceptions.csv", "fees.csv", "payouts.csv", "report.html", "report.xlsx",
        "returns.csv", "rollforward.csv", "summary.csv",
    ]  # fmt: skip
    assert files.workbook is not None
    assert files.workbook.read_bytes().startswith(b"PK")
    assert [p.name for p in files.csvs] == [
        "payouts.csv", "summary.csv", "exceptions.csv", "returns.csv",
    ]  # fmt: skip
    assert files.chart is not None
    assert files.chart.read_bytes().startswith(b"\x89PNG")
    html = files.html.read_text(encoding="utf-8")
    assert "data:image/png;base64," in html


def test_without_the_workbook_no_report_xlsx_is_written_or_left_behind(tmp_path: Path) -> None:
    """RECON_REPORT_WORKBOOK=off: the pack has no report.xlsx (an earlier run's goes with the
    renames, so the directory never shows another run's workbook) and the email attaches the
    CSVs only."""
    write_pack(tmp_path, report_input(), row_cap=200)
    assert (tmp_path / "report.xlsx").is_file()
    files = write_pack(tmp_path, report_input(), row_cap=200, workbook="off")
    assert files.workbook is None
    assert not (tmp_path / "report.xlsx").exists()
    assert files.attachments == files.csvs
    assert files.html.is_file()


def test_writing_again_replaces_the_files_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    """A second write replaces each file whole; no .tmp file is left behind."""
    write_pack(tmp_path, report_input(), row_cap=200)
    files = write_pack(tmp_path, report_input("UTC"), row_cap=200)
    assert "times in UTC" in files.html.read_text(encoding="utf-8")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_failed_write_keeps_the_old_file_whole(tmp_path: Path) -> None:
    """When the write fails after the temporary file exists, the old content stays, no debris."""
    target = tmp_path / "payouts.csv"
    write_atomic(target, b"old,complete\n")
    with pytest.raises(TypeError):
        write_atomic(target, "text, not bytes: the write itself fails")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old,complete\n"
    assert sorted(os.listdir(tmp_path)) == ["payouts.csv"]
