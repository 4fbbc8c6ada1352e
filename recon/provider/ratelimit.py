"""Pacing shared by every caller of one client: a requests-per-second cap and a Retry-After pause.

Both are per client, not per request: 50 workers polling through one client must together stay
under the cap, and when the provider answers one of them 429 with ``Retry-After``, none of them
sends anything before that deadline passes.
"""

from __future__ import annotations

import asyncio
import time

from recon import retry


class Pacer:
    """A rate cap (``rate`` per second, burst of ``burst``, default 1) and one shared pause.

    The cap is a schedule of send slots ``1 / rate`` apart (GCRA, the token bucket as a timetable):
    each request takes the next slot before it waits, so a wake-up a little late does not push
    every later slot back (a bucket refilled only up to one token lost part of the rate to the
    event loop's timer lag; docs/decisions.md, "Rate cap"). Idle time earns at most ``burst``
    back-to-back requests. ``rate=None`` means no cap. Time is ``time.monotonic``; waits go through
    :func:`recon.retry.sleep`, so the testing mode makes them instant.
    """

    def __init__(self, rate: float | None = None, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else 1.0
        self._next_slot = 0.0
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
                interval = 1.0 / self.rate
                now = time.monotonic()
                slot = max(self._next_slot, now - (self.burst - 1) * interval)
                if slot > now and not retry.is_testing():
                    await retry.sleep(slot - now)
                    if self.paused_for > 0:
                        continue  # a 429 arrived meanwhile: nothing goes out before its deadline
                self._next_slot = slot + interval
                return
