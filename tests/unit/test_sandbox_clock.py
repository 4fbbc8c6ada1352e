"""The sandbox clock: real time plus an offset that only grows."""

from __future__ import annotations

import math

import pytest

from recon.sandbox.clock import SandboxClock


def test_the_clock_follows_its_time_source_plus_the_offset() -> None:
    """now() is the time source plus every advance so far."""
    ticks = iter([1000.0, 1000.5, 1001.0])
    clock = SandboxClock(lambda: next(ticks))
    assert clock.now() == 1000.0
    assert clock.advance(60) == 1060.5
    assert clock.now() == 1061.0
    assert clock.offset == 60


@pytest.mark.parametrize("seconds", [-1.0, math.nan])
def test_the_clock_never_goes_back(seconds: float) -> None:
    """A negative (or NaN) advance is refused and leaves the clock unchanged."""
    clock = SandboxClock(lambda: 0.0)
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(seconds)
    assert clock.offset == 0
