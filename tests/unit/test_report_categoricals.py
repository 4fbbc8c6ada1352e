"""Reports from frames with categorical columns, as the store reads them, are byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.report.chart import daily_volume, volume_chart_png
from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.pack import write_pack
from recon.report.text import render_text
from tests.unit.report_fixtures import (
    many_payouts,
    report_input,
    with_categoricals,
    with_string_dtypes,
)

PNG = b"\x89PNG\r\n\x1a\nfake"


def _variants(data: ReportInput) -> list[ReportInput]:
    return [with_categoricals(data), with_categoricals(with_string_dtypes(data))]


@pytest.mark.parametrize("timezone", ["Europe/Stockholm", "UTC"])
def test_categorical_columns_give_the_same_csvs(timezone: str) -> None:
    """Every CSV, byte for byte (missing error codes, previous outcomes and currencies too)."""
    plain = render_csvs(report_input(timezone))
    for data in _variants(report_input(timezone)):
        assert render_csvs(data) == plain


def test_categorical_columns_give_the_same_html_and_text() -> None:
    """report.html (every table, the changes and their moves) and the plain-text email."""
    plain = report_input()
    html = render_report(plain, row_cap=200, chart_png=PNG)
    capped = render_report(plain, row_cap=2, chart_png=PNG)
    text = render_text(plain, row_cap=3)
    for data in _variants(plain):
        assert render_report(data, row_cap=200, chart_png=PNG) == html
        assert render_report(data, row_cap=2, chart_png=PNG) == capped
        assert render_text(data, row_cap=3) == text


def test_categorical_columns_give_the_same_chart() -> None:
    """The daily table and the PNG."""
    plain = report_input().payouts
    for data in _variants(report_input()):
        assert daily_volume(data.payouts, "Europe/Stockholm").equals(
            daily_volume(plain, "Europe/Stockholm")
        )
        assert volume_chart_png(data.payouts, "Europe/Stockholm") == volume_chart_png(
            plain, "Europe/Stockholm"
        )


def test_categorical_columns_give_the_same_large_pack(tmp_path: Path) -> None:
    """Several CSV blocks of payouts, written as a pack: the same files."""
    data = report_input(payouts=many_payouts(2_500))
    write_pack(tmp_path / "plain", data, row_cap=50)
    write_pack(tmp_path / "categorical", with_categoricals(data), row_cap=50)
    names = sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "categorical").iterdir())
    for name in names:
        plain = (tmp_path / "plain" / name).read_bytes()
        assert (tmp_path / "categorical" / name).read_bytes() == plain, name
