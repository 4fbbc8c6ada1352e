"""Retries for every edge that talks to another system: the provider's API and the SMTP server.

One rule for both: a fixed number of attempts, exponential backoff with full jitter between them,
a wait the other side asked for (``Retry-After``) taken as a floor, and no retry at all when it asks
for longer than the backoff's maximum (a pause that long would stall the run; better to report).
Which failures are worth another attempt is the caller's to say (``retry_on``).

The testing mode works like stamina's ``set_testing``: with it on, every wait is zero but attempts
are still counted and still limited, so tests exercise the real retry path without sleeping and
without patching ``sleep``. It is one process-wide switch for the client, its pacer and the mailer.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

T = TypeVar("T")
RetryOn = Callable[[Exception], bool]
AskedWait = Callable[[Exception], "float | None"]
OnRetry = Callable[[Exception, int, float], None]  # the failure, its attempt number, the wait

_testing = False


def set_testing(testing: bool) -> None:
    """Switch every retry wait off (``True``) or on (``False``), process-wide."""
    global _testing  # a process-wide switch, like stamina's
    _testing = testing


def is_testing() -> bool:
    """Whether waits are currently switched off."""
    return _testing


async def sleep(seconds: float) -> None:
    """Wait ``seconds`` (never in testing mode, though the event loop still gets a turn)."""
    await asyncio.sleep(0 if _testing or seconds <= 0 else seconds)


def sleep_sync(seconds: float) -> None:
    """Block for ``seconds`` (never in testing mode)."""
    if not _testing and seconds > 0:
        time.sleep(seconds)


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
        the other side is a floor: never come back sooner than asked.
        """
        ceiling = min(self.maximum, self.initial * 2 ** (retry - 1))
        jittered = random.uniform(0, ceiling)
        return max(jittered, retry_after or 0.0)

    def after_failure(
        self, attempt: int, exc: Exception, retry_on: RetryOn, retry_after: AskedWait
    ) -> float | None:
        """Seconds to wait before the next attempt, or ``None``: give up and raise ``exc``."""
        if attempt >= self.attempts or not retry_on(exc):
            return None
        asked = retry_after(exc)
        if asked is not None and asked > self.maximum:
            return None
        return self.wait(attempt, asked)


def _not_asked(exc: Exception) -> float | None:
    return None


def _silent(exc: Exception, attempt: int, seconds: float) -> None:
    return None


def call(
    func: Callable[[], T],
    backoff: Backoff,
    *,
    retry_on: RetryOn,
    retry_after: AskedWait = _not_asked,
    on_retry: OnRetry = _silent,
) -> T:
    """``func()``, tried again after failures that ``retry_on`` accepts; the last failure raises."""
    attempt = 1
    while True:
        try:
            return func()
        except Exception as exc:
            seconds = backoff.after_failure(attempt, exc, retry_on, retry_after)
            if seconds is None:
                raise
            on_retry(exc, attempt, seconds)
        sleep_sync(seconds)
        attempt += 1


async def acall(
    func: Callable[[], Awaitable[T]],
    backoff: Backoff,
    *,
    retry_on: RetryOn,
    retry_after: AskedWait = _not_asked,
    on_retry: OnRetry = _silent,
) -> T:
    """The async form of :func:`call`: ``await func()`` under the same rules."""
    attempt = 1
    while True:
        try:
            return await func()
        except Exception as exc:
            seconds = backoff.after_failure(attempt, exc, retry_on, retry_after)
            if seconds is None:
                raise
            on_retry(exc, attempt, seconds)
        await sleep(seconds)
        attempt += 1


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
