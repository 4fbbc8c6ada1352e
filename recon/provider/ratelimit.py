"""Pacing shared by every caller of one client: a requests-per-second cap and a Retry-After pause.

Both are per client, not per request: 50 workers polling through one client must together stay
under the cap, and when the provider answers one of them 429 with ``Retry-After``, none of them
sends anything before that deadline passes.
"""

from __future__ import annotations

import asyncio
import time

from recon.provider import retry


class Pacer:
    """Token bucket (``rate`` per second, burst of ``burst``, default 1) and one shared pause.

    ``rate=None`` means no cap. Time is ``time.monotonic``; waits go through
    :func:`recon.provider.retry.sleep`, so the testing mode makes them instant.
    """

    def __init__(self, rate: float | None = None, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else 1.0
        self._tokens = self.burst
        self._updated = time.monotonic()
        self._paused_until = 0.0
        self._lock = asyncio.Lock()

    def pause_for(self, seconds: float) -> None:
        """Hold every request back for ``seconds`` from now (extends, never shortens, a pause)."""
        self._paused_until = max(self._paused_until, time.monotonic() + max(0.0, seconds))

    @property
    def paused_for(self) -> float:
        """Seconds left of the current pause (0 when none)."""
        return max(0.0, self._paused_until - time.monotonic())

    async def acquire(self) -> None:
        """Wait until a request may be sent: after any pause, and within the rate cap."""
        # One waiter at a time keeps the bucket's arithmetic simple and the order fair (FIFO lock).
        async with self._lock:
            while True:
                pause = self.paused_for
                if pause > 0 and not retry.is_testing():
                    await retry.sleep(pause)
                    continue
                if self.rate is None:
                    return
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
                self._updated = now
                if self._tokens >= 1 or retry.is_testing():
                    self._tokens -= 1
                    return
                await retry.sleep((1 - self._tokens) / self.rate)
