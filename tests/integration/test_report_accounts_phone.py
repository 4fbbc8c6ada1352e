"""report.html over two provider accounts at a phone's width (headless Chromium, as
tests/integration/test_report_phone.py lays it out): the filter, the labels on the rows and the
per-account sections fit 390 px."""

from __future__ import annotations

from pathlib import Path

from recon.report.accounts import combine
from recon.report.html import render_report
from tests.integration.test_report_phone import PHONE, measure
from tests.unit.accounts_fixtures import brand_a, brand_b

LONG = "Brand with a very long label that finance typed in one go without any space_or_break"


def test_two_accounts_fit_a_390_px_phone(chromium: str, tmp_path: Path) -> None:
    """The page does not scroll sideways, and no card or table scrolls inside its box."""
    data = combine([brand_a(), brand_b()], labels={"brand_a": LONG, "brand_b": "Brand B (SE)"})
    page = render_report(data, row_cap=50, chart_png=None)
    assert 'id="account-brand_b"' in page
    probe = measure(chromium, page, tmp_path)
    assert probe["scrollWidth"] == probe["viewport"] == PHONE
    assert probe["over"] == []
