"""The volume chart: a small PNG of payouts per local day by outcome."""

from __future__ import annotations

from recon.report.chart import daily_volume, volume_chart_png
from tests.unit.report_fixtures import report_input


def test_the_chart_is_a_small_png() -> None:
    """The bytes are a PNG well under 100 kB, and the same data gives the same bytes."""
    payouts = report_input().payouts
    png = volume_chart_png(payouts, "Europe/Stockholm")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) < 100_000
    assert png == volume_chart_png(payouts, "Europe/Stockholm")


def test_days_are_local_and_quiet_days_are_zero() -> None:
    """Counts are per local day, every day between the first and last is present."""
    table = daily_volume(report_input().payouts, "Europe/Stockholm")
    assert list(table.index[:3]) == ["2026-11-10", "2026-11-11", "2026-11-12"]
    assert int(table.loc["2026-11-11"].sum()) == 0
    assert int(table.to_numpy().sum()) == 15
    assert int(table.loc["2026-11-19", "failed"]) == 2


def test_no_payouts_still_gives_an_image() -> None:
    """An empty frame renders a 'no payouts' PNG instead of failing."""
    payouts = report_input().payouts.iloc[0:0]
    assert volume_chart_png(payouts, "UTC").startswith(b"\x89PNG")
