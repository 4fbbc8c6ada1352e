"""The client's pacer: a schedule of send slots that a late wake-up does not push back."""

from __future__ import annotations

import asyncio
import time

import pytest

from recon import retry
from recon.provider.ratelimit import Pacer


@pytest.fixture(autouse=True)
def real_waits() -> object:
    """These tests need real waits (the suite may switch them off)."""
    before = retry.is_testing()
    retry.set_testing(False)
    yield
    retry.set_testing(before)


@pytest.mark.anyio
async def test_concurrent_callers_together_keep_to_the_rate() -> None:
    """40 requests at 200/s from 40 concurrent callers take at least 39 slots of 5 ms."""
    pacer = Pacer(200.0)
    sent: list[float] = []

    async def caller() -> None:
        await pacer.acquire()
        sent.append(time.monotonic())

    started = time.monotonic()
    await asyncio.gather(*(caller() for _ in range(40)))
    elapsed = time.monotonic() - started
    assert elapsed >= 39 / 200 - 0.002  # never faster than the cap
    assert len(sent) == 40
    # That the event loop's lateness is not added per request is a speed claim: `make bench`
    # measures it (the rate-limit row of BENCHMARKS.md), not a timed test.


@pytest.mark.anyio
async def test_nothing_passes_before_a_shared_pause_ends() -> None:
    """After pause_for(0.1), the next request waits out the pause even with no rate cap."""
    pacer = Pacer(None)
    pacer.pause_for(0.1)
    started = time.monotonic()
    await pacer.acquire()
    assert time.monotonic() - started >= 0.095
