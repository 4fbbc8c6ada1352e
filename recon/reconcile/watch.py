"""The watch schedules: when a payout whose outcome a bank can still change is asked about again.

Failed, aborted and unknown payouts stay watched for ``watch_days`` on ``schedule_days`` (the
interface's 2/3 -> 5 -> 6 transition has no time limit); settled and returned ones are re-checked
for returns for ``return_watch_days`` on ``return_schedule_days`` (a returned-funds notification
can be lost). Two schedules, because the groups differ in size: failed payouts are a few percent
of the volume and are checked daily at first, while the return watch of every settled payout is
most of a night's polls and thins out from the start.

Schedule days are calendar days in ``zone`` (``RECON_TIMEZONE``), counted from the local date the
outcome was first seen (``outcome_since``): a check on day ``d`` is due from the start of the local
day ``d`` days after that date. So a run at 06:00 after a spring-forward night (23 hours after the
previous one), or a cron job starting a few minutes early, still finds the day's checks due. Each
window ends with a check on its last day. A check is due once a day of the schedule has begun since
the local day of the last check, so a night without a run (or a week of them) skips nothing: the
next run asks once.

Pure: frames and "now" in, a column of due times (UTC) out (``NaT``: not watched, or the window is
over).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon.constants import RETURN_WATCHED_OUTCOMES, WATCHED_OUTCOMES, Outcome

_DUE = "datetime64[us, UTC]"


@dataclass(frozen=True)
class Window:
    """One watched group of outcomes: its window in days and the check days inside it."""

    outcomes: frozenset[Outcome]
    days: int
    points: npt.NDArray[np.int64]


@dataclass(frozen=True)
class WatchParams:
    """The two schedules (calendar days after the outcome), their windows and the zone of a day."""

    schedule_days: tuple[int, ...]
    return_schedule_days: tuple[int, ...]
    watch_days: int
    return_watch_days: int
    zone: ZoneInfo | str = "UTC"

    @property
    def tz(self) -> ZoneInfo:
        """The zone whose calendar days the schedules count."""
        return self.zone if isinstance(self.zone, ZoneInfo) else ZoneInfo(self.zone)

    def windows(self) -> Sequence[Window]:
        """Each watched group of outcomes with its window and check days."""
        return (
            Window(WATCHED_OUTCOMES, self.watch_days, points(self.schedule_days, self.watch_days)),
            Window(
                RETURN_WATCHED_OUTCOMES,
                self.return_watch_days,
                points(self.return_schedule_days, self.return_watch_days),
            ),
        )

    def return_points(self) -> npt.NDArray[np.int64]:
        """The return watch's check days (settled payouts and returned-funds claims)."""
        return points(self.return_schedule_days, self.return_watch_days)

    def window_start(self, as_of: datetime, days: int) -> pd.Timestamp:
        """The earliest ``outcome_since`` still inside a window of ``days`` at ``as_of``: the start
        of the local day ``days - 1`` days before as_of's (an outcome seen then has its last check
        due today; one seen the day before has none left)."""
        today = pd.Timestamp(as_of).tz_convert(self.tz).tz_localize(None).normalize()
        start = pd.Series([today - pd.Timedelta(days=days - 1)])
        return pd.Timestamp(_day_start(start, self.tz).iloc[0])


def points(schedule: Sequence[int], window: int) -> npt.NDArray[np.int64]:
    """The check days inside a window, ending with the window's last day (none: window 0)."""
    inside = [d for d in schedule if d < window]
    return np.array([*inside, window] if window > 0 else [], dtype=np.int64)


def next_checks(
    outcome: pd.Series, since: pd.Series, as_of: pd.Timestamp, params: WatchParams
) -> pd.Series:
    """For a payout checked at ``as_of``: when its next check falls due (``NaT``: none)."""
    due = pd.Series(pd.NaT, index=outcome.index, dtype=_DUE)
    text = outcome.astype("string")
    for window in params.windows():
        rows = text.isin([o.value for o in window.outcomes]).fillna(False).to_numpy(dtype=bool)
        if rows.any():
            # Payouts share the time their outcome was seen (a run's): each time is counted once.
            at, seen = pd.factorize(since[rows].fillna(as_of))
            base = pd.Series(seen)
            checked = pd.Series(as_of, index=base.index)
            due[rows] = next_after(base, checked, window.points, params.tz).array.take(at)
    return due


def next_after(
    base: pd.Series, checked: pd.Series, points: npt.NDArray[np.int64], zone: ZoneInfo
) -> pd.Series:
    """The start (in ``zone``) of the first day of ``points`` after ``base``'s local date that
    comes after ``checked``'s local date, in UTC (``NaT``: none left)."""
    if not len(points):
        return pd.Series(pd.NaT, index=base.index, dtype=_DUE)
    base_day = _local_day(base, zone)
    elapsed = (_local_day(checked, zone) - base_day).dt.days.to_numpy(dtype=np.float64)
    at = np.searchsorted(points, elapsed, side="right")
    days = np.where(at < len(points), points[np.minimum(at, len(points) - 1)], np.nan)
    return _day_start(base_day + pd.to_timedelta(days, unit="D"), zone)


def _local_day(moments: pd.Series, zone: ZoneInfo) -> pd.Series:
    """Each moment's local date in ``zone``, as a naive midnight."""
    utc = pd.to_datetime(moments, utc=True)
    return utc.dt.tz_convert(zone).dt.tz_localize(None).dt.normalize()


def _day_start(days: pd.Series, zone: ZoneInfo) -> pd.Series:
    """The first instant of each local date (naive midnights) in ``zone``, in UTC.

    Where a zone's clocks skip midnight the day starts when they resume; where midnight comes
    twice, at the first.
    """
    first = np.ones(len(days), dtype=bool)  # ambiguous midnight: the DST (earlier) one
    local = days.dt.tz_localize(zone, ambiguous=first, nonexistent="shift_forward")
    utc: pd.Series = local.dt.tz_convert("UTC").astype(_DUE)
    return utc
