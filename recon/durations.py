"""Durations as people read them in a run log, a status line or a report: ``3 min 5 s``,
``2 days 4 h``, ``1 day``."""

from __future__ import annotations

from datetime import timedelta


def duration_text(delta: timedelta) -> str:
    """``42 s``, ``3 min 5 s``, ``2 h 7 min``, ``1 day``, ``3 days 4 h``: in words, the two largest
    units that are not zero, exact enough for a run log."""
    seconds = max(int(delta.total_seconds()), 0)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} day{'' if days == 1 else 's'}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    if minutes:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    return f"{secs} s"
