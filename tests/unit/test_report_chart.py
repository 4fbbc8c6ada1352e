"""The volume chart: a small PNG of payouts per local day by outcome."""

from __future__ import annotations

from recon.report.chart import daily_amounts, daily_volume, volume_chart_png
from recon.report.html import chart_size
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


def test_amounts_settled_and_failed_per_local_day_and_currency_are_exact_minor_units() -> None:
    """The chart's data: per local day and currency, the amount settled (settled or returned) and
    failed (failed or aborted), in integer minor units; quiet days are zero."""
    table = daily_amounts(report_input().payouts, "Europe/Stockholm")
    assert int(table.loc["2026-11-19", ("EUR", "failed")]) == 1201 + 4200
    assert int(table.loc["2026-11-18", ("EUR", "failed")]) == 1101
    assert int(table.loc["2026-11-16", ("EUR", "settled")]) == 77700 + 1401  # tx-003 returned
    assert int(table.loc["2026-11-11", ("EUR", "settled")]) == 0
    assert int(table[("SEK", "settled")].sum()) == 123450
    assert sorted({cur for cur, _ in table.columns}) == ["EUR", "JPY", "SEK"]


def test_the_chart_is_one_panel_per_currency_sized_for_a_phone() -> None:
    """Small multiples: shown at most 360 CSS px wide (a 390 px phone shows it unscaled, so its
    text stays legible), drawn at twice that for sharpness, taller with each currency."""
    payouts = report_input().payouts
    one = payouts[payouts["currency"] == "EUR"]
    width, height = chart_size(volume_chart_png(payouts, "Europe/Stockholm"))
    width_one, height_one = chart_size(volume_chart_png(one, "Europe/Stockholm"))
    assert width == width_one <= 360
    assert height > 2 * height_one * 0.8
