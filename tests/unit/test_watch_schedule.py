"""The watch schedules: when a failed or settled payout is asked again (pure, literal data)."""

from __future__ import annotations

import itertools
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from recon.reconcile.watch import WatchParams, next_after, next_checks, points
from recon.settings import DEFAULT_RETURN_WATCH_SCHEDULE, DEFAULT_WATCH_SCHEDULE

T0 = pd.Timestamp("2026-01-01 02:00", tz="UTC")
DAY = pd.Timedelta(days=1)
MIDNIGHT = pd.Timestamp("2026-01-01 00:00", tz="UTC")  # the start of T0's day in UTC
WATCH = (1, 2, 3, 4, 5, 6, 7, 12, 18, 24, 30, 45, 60, 75, 90)
RETURN_WATCH = (6, 12, 18, 24, 30)
PARAMS = WatchParams(WATCH, RETURN_WATCH, watch_days=90, return_watch_days=30)
STOCKHOLM = WatchParams(WATCH, RETURN_WATCH, watch_days=90, return_watch_days=30,
                        zone="Europe/Stockholm")  # fmt: skip


def due(
    outcome: str, since: pd.Timestamp, checked: pd.Timestamp, params: WatchParams = PARAMS
) -> pd.Timestamp | None:
    """When a payout with ``outcome`` since ``since``, checked at ``checked``, is next due."""
    result = next_checks(pd.Series([outcome]), pd.Series([since]), checked, params).iloc[0]
    return None if pd.isna(result) else result


def utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def test_the_settings_defaults_are_the_schedules_these_tests_use() -> None:
    """RECON_WATCH_SCHEDULE daily for a week then thinning to 90; the return watch every 6 days."""
    assert (DEFAULT_WATCH_SCHEDULE, DEFAULT_RETURN_WATCH_SCHEDULE) == (WATCH, RETURN_WATCH)


def test_a_failed_payout_is_checked_daily_for_a_week_then_on_the_thinning_days() -> None:
    """Each check names the start of the next schedule day (counted from the outcome's date)."""
    days = [0, 1, 2, 3, 4, 5, 6, 7, 12, 18, 24, 30, 45, 60, 75]
    following = [1, 2, 3, 4, 5, 6, 7, 12, 18, 24, 30, 45, 60, 75, 90]
    assert [due("failed", T0, T0 + d * DAY) for d in days] == [
        MIDNIGHT + f * DAY for f in following
    ]


def test_a_settled_payout_is_checked_on_the_return_schedule_only() -> None:
    """Settled and returned payouts follow RECON_RETURN_WATCH_SCHEDULE, not the daily one."""
    days = [0, 6, 12, 18, 24]
    following = [6, 12, 18, 24, 30]
    assert [due("settled", T0, T0 + d * DAY) for d in days] == [
        MIDNIGHT + f * DAY for f in following
    ]
    assert due("returned", T0, T0 + DAY) == MIDNIGHT + 6 * DAY


def test_a_check_is_due_from_the_start_of_its_local_day() -> None:
    """A failure seen at 02:00 is due at 00:00 the next day: a run at 01:55 asks about it."""
    next_day = due("failed", T0, T0)
    assert next_day == utc("2026-01-02 00:00")
    assert next_day <= T0 + DAY - pd.Timedelta(minutes=5)


def test_a_check_a_few_minutes_early_still_counts_for_its_day() -> None:
    """A run at 01:55 on day 1 serves day 1: the next check is day 2, not day 1 again."""
    assert due("failed", T0, T0 + DAY - pd.Timedelta(minutes=5)) == utc("2026-01-03 00:00")


def test_the_spring_forward_night_asks_about_a_failure_seen_the_morning_before() -> None:
    """Europe/Stockholm, 2027-03-28: the run at 06:00 CEST comes 23 hours after the one of
    03-27 06:00 CET that saw the failure; day 1 began at midnight CET, so that run asks."""
    seen = utc("2027-03-27 05:00")  # 06:00 CET
    next_run = utc("2027-03-28 04:00")  # 06:00 CEST, 23 hours later
    first = due("failed", seen, seen, STOCKHOLM)
    assert first == utc("2027-03-27 23:00")  # 2027-03-28 00:00 CET
    assert first <= next_run
    assert due("failed", seen, next_run, STOCKHOLM) == utc("2027-03-28 22:00")  # 03-29 00:00 CEST


def test_the_fall_back_night_counts_one_day_for_25_hours() -> None:
    """Europe/Stockholm, 2027-10-31: the run after the 25-hour night asks once, then next day."""
    seen = utc("2027-10-30 04:00")  # 06:00 CEST
    assert due("aborted", seen, seen, STOCKHOLM) == utc("2027-10-30 22:00")  # 10-31 00:00 CEST
    after = utc("2027-10-31 05:00")  # 06:00 CET, 25 hours later
    assert due("aborted", seen, after, STOCKHOLM) == utc("2027-10-31 23:00")  # 11-01 00:00 CET


def test_the_days_are_counted_in_the_zone_not_in_utc() -> None:
    """A failure seen at 23:30 UTC on 03-26 is seen on 03-27 in Stockholm: its day 1 is 03-28."""
    seen = utc("2027-03-26 23:30")  # 00:30 CET, 03-27
    assert due("failed", seen, seen, STOCKHOLM) == utc("2027-03-27 23:00")
    assert due("failed", seen, seen) == utc("2027-03-27 00:00")  # in UTC: day 1 is 03-27


def test_a_day_whose_midnight_the_clocks_skip_starts_when_they_resume() -> None:
    """America/Santiago moved 2024-09-08 00:00 to 01:00: that day starts at 01:00 local."""
    chile = WatchParams(WATCH, RETURN_WATCH, watch_days=90, return_watch_days=30,
                        zone=ZoneInfo("America/Santiago"))  # fmt: skip
    seen = utc("2024-09-07 10:00")  # 06:00 -04
    assert due("failed", seen, seen, chile) == utc("2024-09-08 04:00")  # 01:00 -03


def test_runs_skipped_for_a_week_are_caught_up_with_one_check() -> None:
    """A check on day 10 (the runs of days 7 to 9 never happened) is next due on day 12."""
    assert due("aborted", T0, T0 + 10 * DAY) == MIDNIGHT + 12 * DAY


def test_a_change_in_the_first_30_days_is_seen_within_7_days_and_every_15_after() -> None:
    """Both default schedules: gaps of at most 7 days up to day 30, at most 15 days after."""
    for schedule in (WATCH, RETURN_WATCH):
        gaps = [(b - a, b) for a, b in itertools.pairwise([0, *schedule])]
        assert max(gap for gap, day in gaps if day <= 30) <= 7
        assert max((gap for gap, day in gaps if day > 30), default=0) <= 15


def test_the_watch_ends_with_its_window() -> None:
    """After the last day of its window a payout is no longer due: failed at 90, settled at 30."""
    assert due("unknown", T0, T0 + 89 * DAY) == MIDNIGHT + 90 * DAY
    assert due("unknown", T0, T0 + 90 * DAY) is None
    assert due("settled", T0, T0 + 24 * DAY) == MIDNIGHT + 30 * DAY
    assert due("returned", T0, T0 + 30 * DAY) is None


def test_a_window_that_is_not_a_day_of_the_schedule_still_ends_with_a_check() -> None:
    """A 10-day return watch checks on days 6 and 10."""
    short = WatchParams(WATCH, RETURN_WATCH, watch_days=90, return_watch_days=10)
    assert [due("settled", T0, T0 + d * DAY, short) for d in (0, 6, 9)] == [
        MIDNIGHT + 6 * DAY,
        MIDNIGHT + 10 * DAY,
        MIDNIGHT + 10 * DAY,
    ]
    assert due("settled", T0, T0 + 10 * DAY, short) is None


def test_open_outcomes_are_not_on_the_schedule() -> None:
    """Pending, delayed and unchecked payouts are polled every run, so they have no due time."""
    assert [due(o, T0, T0 + DAY) for o in ("pending", "delayed", "unchecked")] == [None] * 3


def test_a_zero_window_turns_the_watch_off() -> None:
    """RECON_RETURN_WATCH_DAYS=0: settled payouts are never asked about again."""
    off = WatchParams(WATCH, (), watch_days=90, return_watch_days=0)
    assert due("settled", T0, T0, off) is None
    assert list(points((), 0)) == []


def test_a_claim_never_asked_about_has_no_due_day_and_one_asked_follows_the_return_schedule() -> (
    None
):
    """next_after over claims: (first ask, last ask); a missing pair gives NaT."""
    first = pd.Series([pd.NaT, T0], dtype="datetime64[us, UTC]")
    last = pd.Series([pd.NaT, T0 + 6 * DAY], dtype="datetime64[us, UTC]")
    result = next_after(first, last, PARAMS.return_points(), ZoneInfo("UTC"))
    assert pd.isna(result.iloc[0])
    assert result.iloc[1] == MIDNIGHT + 12 * DAY
    assert np.array_equal(PARAMS.return_points(), [6, 12, 18, 24, 30])


def test_a_window_starts_at_the_local_day_whose_outcomes_still_have_a_check() -> None:
    """Seen 29 local days before as_of: day 30 is today, still due; seen 30 days before: over."""
    as_of = utc("2027-04-10 04:00")  # 06:00 CEST
    assert STOCKHOLM.window_start(as_of.to_pydatetime(), 30) == utc("2027-03-11 23:00")
    assert PARAMS.window_start(as_of.to_pydatetime(), 0) == utc("2027-04-11 00:00")
