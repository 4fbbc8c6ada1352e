"""The Journal section in a real browser: at a 390 px phone the page does not scroll sideways and
no table scrolls inside its box (headless Chromium; skipped without it, as the other layout
checks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from recon.report.html import render_report
from recon.report.journal import journal_frame
from tests.integration.test_report_phone import PHONE, measure
from tests.unit.accounts_fixtures import brand_a, brand_b
from tests.unit.test_report_journal import lines, with_journal


def test_the_journal_fits_a_390_px_phone(chromium: str, tmp_path: Path) -> None:
    """One account's entries (a reversal, late ones, long ids) and two accounts' together."""
    from recon.report.accounts import combine

    one = with_journal()
    two = combine(
        [replace(brand_a(), journal=journal_frame(lines("brand_a"))),
         replace(brand_b(), journal=journal_frame(lines("brand_b")))],
        labels={"brand_a": "Brand A (DK)"},
    )  # fmt: skip
    for data in (one, two):
        page = render_report(data, row_cap=200, chart_png=None)
        assert "<h2>Journal</h2>" in page
        probe = measure(chromium, page, tmp_path)
        assert probe["scrollWidth"] == probe["viewport"] == PHONE
        assert probe["over"] == []
