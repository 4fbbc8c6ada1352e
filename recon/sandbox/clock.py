"""The sandbox clock: real time plus an offset that only grows.

Advancing the offset is how tests and demos skip the five-minute delay of 13.01 or the hour of
callback retries without waiting. It never goes back, so timestamps the sandbox has already
answered stay in the past.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class SandboxClock:
    """Epoch seconds as the sandbox sees them."""

    def __init__(self, time_source: Callable[[], float] = time.time) -> None:
        self._time_source = time_source
        self._offset = 0.0

    @property
    def offset(self) -> float:
        """Seconds added to real time so far."""
        return self._offset

    def now(self) -> float:
        """The sandbox's current time, in epoch seconds."""
        return self._time_source() + self._offset

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (not negative); returns the new time."""
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"the clock only moves forward: seconds must be >= 0, got {seconds}")
        self._offset += seconds
        return self.now()
