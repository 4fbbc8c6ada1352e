"""The report warns when the run it compares with is older than RECON_MAX_RUN_AGE."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from recon.report.html import render_report
from recon.report.model import ReportInput
from tests.unit.report_fixtures import report_input

DAY = timedelta(hours=24)


def _previous_before(gap: timedelta) -> ReportInput:
    data = report_input("UTC")
    return replace(data, run=replace(data.run, previous_as_of=data.run.as_of - gap))


def test_a_gap_longer_than_the_max_run_age_is_a_warning_at_the_top() -> None:
    """Run 41 three days before run 42: the page says a run is missing, and how long the gap is."""
    html = render_report(
        _previous_before(3 * DAY), row_cap=50, chart_png=None, max_gap=timedelta(hours=26)
    )
    assert "A run is missing." in html
    assert "run 41, was as of 2026-11-17 05:00 UTC, 3 days before this one" in html
    assert html.index("A run is missing.") < html.index("problems need action")


def test_a_nightly_gap_shows_no_warning() -> None:
    """The run compared with is last night's: nothing to say."""
    html = render_report(_previous_before(DAY), row_cap=50, chart_png=None, max_gap=26 * DAY / 24)
    assert "A run is missing" not in html


def test_without_a_previous_run_or_a_limit_there_is_no_warning() -> None:
    """The first run has nothing to miss; a renderer given no limit judges nothing."""
    assert "A run is missing" not in render_report(
        report_input("UTC"), row_cap=50, chart_png=None, max_gap=DAY
    )
    assert "A run is missing" not in render_report(
        _previous_before(9 * DAY), row_cap=50, chart_png=None
    )


def test_the_plain_text_email_says_a_run_is_missing_under_its_first_lines() -> None:
    """The text alternative carries the same sentence, right after the as-of line."""
    from recon.report.text import render_text

    lines = render_text(_previous_before(3 * DAY), max_gap=timedelta(hours=26)).splitlines()
    assert lines[2].startswith("A RUN IS MISSING. The previous complete run, run 41, was as of")
