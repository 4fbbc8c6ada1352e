"""Backoff for the provider client: exponential with full jitter, ``Retry-After``, a testing mode.

The testing mode works like stamina's ``set_testing``: with it on, every wait is zero but attempts
are still counted and still limited, so tests exercise the real retry path without sleeping and
without patching ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_testing = False


def set_testing(testing: bool) -> None:
    """Switch waiting off (``True``) or on (``False``) for every client in this process."""
    global _testing  # a process-wide switch, like stamina's
    _testing = testing


def is_testing() -> bool:
    """Whether waits are currently switched off."""
    return _testing


async def sleep(seconds: float) -> None:
    """Wait ``seconds`` (never in testing mode, though the event loop still gets a turn)."""
    await asyncio.sleep(0 if _testing or seconds <= 0 else seconds)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter, for ``attempts`` tries in all (the first included)."""

    attempts: int = 4
    initial: float = 0.5
    maximum: float = 30.0

    def wait(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry).

        Full jitter (AWS architecture blog, "Exponential Backoff And Jitter") spreads the retries
        of 50 concurrent callers instead of sending them back in one burst. A ``Retry-After`` from
        the provider is a floor: never come back sooner than asked.
        """
        ceiling = min(self.maximum, self.initial * 2 ** (retry - 1))
        jittered = random.uniform(0, ceiling)
        return max(jittered, retry_after or 0.0)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta seconds or an HTTP date; else None."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
