"""Which settlement days a pull asks for, and each day's window in epoch seconds."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from recon.night.export_pull import day_window, days_to_pull


def test_nothing_pulled_yet_is_yesterday_and_the_lookback_before_it() -> None:
    """No day pulled: yesterday and the lookback's days before it, oldest first."""
    assert days_to_pull(None, date(2026, 3, 9), 2) == [date(2026, 3, d) for d in (7, 8, 9)]


def test_the_days_since_the_last_pulled_with_the_lookback_before_them() -> None:
    """Pulled through the 5th: the 6th to yesterday, and the lookback's two days before the
    6th (pulled again: a late change there is seen)."""
    assert days_to_pull(date(2026, 3, 5), date(2026, 3, 9), 2) == [
        date(2026, 3, d) for d in range(4, 10)
    ]


def test_a_last_pulled_day_of_yesterday_still_pulls_the_lookback() -> None:
    """Pulled through yesterday already: the lookback days up to yesterday again."""
    assert days_to_pull(date(2026, 3, 9), date(2026, 3, 9), 1) == [
        date(2026, 3, 8),
        date(2026, 3, 9),
    ]


def test_a_day_is_its_calendar_day_in_the_zone_with_its_dst_length() -> None:
    """The spring-forward day in Stockholm is 23 hours long, from local midnight."""
    start, end = day_window(date(2026, 3, 29), ZoneInfo("Europe/Stockholm"))
    assert start == 1774738800  # 2026-03-28T23:00:00Z
    assert end - start == 23 * 3600
    assert day_window(date(2026, 3, 29), ZoneInfo("UTC")) == (1774742400, 1774828800)
