"""The watch schedule: when a payout whose outcome a bank can still change is asked about again.

Failed, aborted and unknown payouts stay watched for ``watch_days`` (the interface's 2/3 -> 5 -> 6
transition has no time limit); settled and returned ones are re-checked for returns for
``return_watch_days`` (a returned-funds notification can be lost). Checks thin out: they fall on
the schedule's days after the outcome was first seen (``outcome_since``), each window ending with
a check on its last day. A check is due once a point of the schedule has passed since the last
check, so a night without a run (or a week of them) skips nothing: the next run asks once.

Pure: frames and "now" in, a column of due times out (``NaT``: not watched, or the window is over).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon.constants import RETURN_WATCHED_OUTCOMES, WATCHED_OUTCOMES, Outcome

DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class WatchParams:
    """The schedule (days after the outcome) and how long each kind of outcome is watched."""

    schedule_days: tuple[float, ...]
    watch_days: float
    return_watch_days: float

    def points(self, window: float) -> npt.NDArray[np.float64]:
        """The check days inside a window, ending with the window's last day."""
        inside = [d for d in self.schedule_days if d < window]
        return np.array([*inside, window] if window > 0 else [], dtype=np.float64)

    def windows(self) -> Sequence[tuple[frozenset[Outcome], float]]:
        """Each watched group of outcomes with its window in days."""
        return (
            (WATCHED_OUTCOMES, self.watch_days),
            (RETURN_WATCHED_OUTCOMES, self.return_watch_days),
        )


def next_checks(
    outcome: pd.Series, since: pd.Series, as_of: pd.Timestamp, params: WatchParams
) -> pd.Series:
    """For a payout checked at ``as_of``: when its next check falls due (``NaT``: none)."""
    due = pd.Series(pd.NaT, index=outcome.index, dtype="datetime64[us, UTC]")
    text = outcome.astype("string")
    for outcomes, window in params.windows():
        rows = text.isin([o.value for o in outcomes]).fillna(False).to_numpy(dtype=bool)
        if rows.any():
            base = since[rows].fillna(as_of)
            checked = pd.Series(as_of, index=base.index)
            due[rows] = next_after(base, checked, params.points(window))
    return due


def next_after(base: pd.Series, checked: pd.Series, points: npt.NDArray[np.float64]) -> pd.Series:
    """The first day of ``points`` after ``base`` that falls after ``checked`` (NaT: none left)."""
    elapsed = ((checked - base).dt.total_seconds() / DAY_SECONDS).to_numpy(dtype=np.float64)
    if not len(points):
        return pd.Series(pd.NaT, index=base.index, dtype="datetime64[us, UTC]")
    at = np.searchsorted(points, elapsed, side="right")
    days = np.where(at < len(points), points[np.minimum(at, len(points) - 1)], np.nan)
    return (base + pd.to_timedelta(days * DAY_SECONDS, unit="s")).astype("datetime64[us, UTC]")
