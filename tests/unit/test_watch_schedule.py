"""The watch schedule: when a failed or settled payout is asked about again (pure, literal data)."""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd

from recon.reconcile.watch import WatchParams, next_checks
from recon.settings import Settings

T0 = pd.Timestamp("2026-01-01 02:00", tz="UTC")
DAY = pd.Timedelta(days=1)
_FIELDS: Any = Settings.model_fields
PARAMS = WatchParams(  # the defaults of RECON_WATCH_SCHEDULE, _WATCH_DAYS, _RETURN_WATCH_DAYS
    schedule_days=tuple(_FIELDS["watch_schedule"].default_factory()),
    watch_days=_FIELDS["watch_days"].default,
    return_watch_days=_FIELDS["return_watch_days"].default,
)


def due(outcome: str, checked_day: float, params: WatchParams = PARAMS) -> pd.Timestamp | None:
    """When a payout with ``outcome`` since T0, checked ``checked_day`` days later, is due."""
    result = next_checks(
        pd.Series([outcome]), pd.Series([T0]), T0 + checked_day * DAY, params
    ).iloc[0]
    return None if pd.isna(result) else result


def test_a_failed_payout_is_checked_on_the_days_of_the_schedule() -> None:
    """Every 6 days at first, then every 15: each check names the next day of the schedule."""
    days = [0, 6, 12, 18, 24, 30, 45, 60, 75]
    following = [6, 12, 18, 24, 30, 45, 60, 75, 90]
    assert [due("failed", d) for d in days] == [T0 + f * DAY for f in following]


def test_runs_skipped_for_a_week_are_caught_up_with_one_check() -> None:
    """A check on day 23 (the runs of days 12 and 18 never happened) is next due on day 24."""
    assert due("aborted", 23) == T0 + 24 * DAY


def test_a_change_in_the_first_30_days_is_seen_within_7_days_and_every_15_after() -> None:
    """The default schedule's gaps: at most 7 days up to day 30, at most 15 days after."""
    points = [0, *PARAMS.schedule_days]
    gaps = [(b - a, b) for a, b in itertools.pairwise(points)]
    assert max(gap for gap, day in gaps if day <= 30) <= 7
    assert max(gap for gap, day in gaps if day > 30) <= 15


def test_the_watch_ends_with_its_window() -> None:
    """After the last day of its window a payout is no longer due: failed at 90, settled at 30."""
    assert due("unknown", 89.5) == T0 + 90 * DAY
    assert due("unknown", 90) is None
    assert due("settled", 24) == T0 + 30 * DAY
    assert due("returned", 30) is None


def test_a_window_that_is_not_a_day_of_the_schedule_still_ends_with_a_check() -> None:
    """A 10-day return watch checks on days 6 and 10."""
    short = WatchParams(PARAMS.schedule_days, watch_days=90, return_watch_days=10)
    assert [due("settled", d, short) for d in (0, 6, 9)] == [
        T0 + 6 * DAY,
        T0 + 10 * DAY,
        T0 + 10 * DAY,
    ]
    assert due("settled", 10, short) is None


def test_open_outcomes_are_not_on_the_schedule() -> None:
    """Pending, delayed and unchecked payouts are polled every run, so they have no due time."""
    assert [due(o, 1) for o in ("pending", "delayed", "unchecked")] == [None, None, None]


def test_a_zero_window_turns_the_watch_off() -> None:
    """RECON_RETURN_WATCH_DAYS=0: settled payouts are never asked about again."""
    off = WatchParams(PARAMS.schedule_days, watch_days=90, return_watch_days=0)
    assert due("settled", 0, off) is None
