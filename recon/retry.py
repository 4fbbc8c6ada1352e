"""Retries for every edge that talks to another system: the provider's API and the SMTP server.

One rule for both: a fixed number of attempts, exponential backoff with full jitter between them,
a wait the other side asked for (``Retry-After``) taken as a floor, and no retry at all when it asks
for longer than the backoff's maximum (a pause that long would stall the run; better to report).
Which failures are worth another attempt is the caller's to say (``retry_on``)::

    attempts = retry.Attempts(Backoff(attempts=3), retry_on=transient, on_retry=log)
    retry.call(send, attempts)          # or: await retry.acall(fetch, attempts)

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


def _not_asked(exc: Exception) -> float | None:
    return None


def _silent(exc: Exception, attempt: int, seconds: float) -> None:
    return None


@dataclass(slots=True)
class Attempts:
    """The attempts of one call: the ``backoff``, which failures are worth another attempt
    (``retry_on``), the wait the other side asked for (``retry_after``), whom to tell
    (``on_retry``), and ``number``, the attempt under way (1 for the first)."""

    backoff: Backoff
    retry_on: RetryOn
    retry_after: AskedWait = _not_asked
    on_retry: OnRetry = _silent
    number: int = 1

    def next_wait(self, exc: Exception) -> float:
        """Seconds to wait before the next attempt; raises ``exc`` when there is none to make."""
        if self.number >= self.backoff.attempts or not self.retry_on(exc):
            raise exc
        asked = self.retry_after(exc)
        if asked is not None and asked > self.backoff.maximum:
            raise exc  # a pause that long would stall the run: fail now, and let it be reported
        seconds = self.backoff.wait(self.number, asked)
        self.on_retry(exc, self.number, seconds)
        self.number += 1
        return seconds


def call(func: Callable[[], T], attempts: Attempts) -> T:
    """``func()``, tried again as ``attempts`` allows; the last failure is raised."""
    while True:
        try:
            return func()
        except Exception as exc:
            seconds = attempts.next_wait(exc)
        sleep_sync(seconds)


async def acall(func: Callable[[], Awaitable[T]], attempts: Attempts) -> T:
    """The async form of :func:`call`."""
    while True:
        try:
            return await func()
        except Exception as exc:
            seconds = attempts.next_wait(exc)
        await sleep(seconds)


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
