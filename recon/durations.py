"""Durations as people read them in a run log, a status line or a report: ``3m 05s``, ``2d 4h``."""

from __future__ import annotations

from datetime import timedelta


def duration_text(delta: timedelta) -> str:
    """``42s``, ``3m 05s``, ``2h 07m``, ``3d 4h``: short, and exact enough for a run log."""
    seconds = max(int(delta.total_seconds()), 0)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"
