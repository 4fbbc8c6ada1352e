"""The request deadline's one watchdog (recon/provider/deadline.py): late requests are cut and
told apart from any other cancellation; nothing is left running once no request is in flight."""

from __future__ import annotations

import asyncio

import pytest

from recon.provider.deadline import Deadlines


async def guarded(deadlines: Deadlines, seconds: float) -> str:
    """A request as the client makes one: ``late`` when the deadline cut it."""
    task = deadlines.enter()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if deadlines.expired(task):
            return "late"
        raise
    finally:
        deadlines.leave(task)
    return "answered"


@pytest.mark.anyio
async def test_only_the_requests_past_their_deadline_are_cut() -> None:
    """A request that answers in time is untouched; only the one past its deadline is cut."""
    deadlines = Deadlines(0.2)
    results = await asyncio.gather(guarded(deadlines, 0.01), guarded(deadlines, 5))
    assert results == ["answered", "late"]


@pytest.mark.anyio
async def test_a_cut_request_leaves_its_task_uncancelled() -> None:
    """The task goes on after a cut (the client retries or reports): no cancellation is left
    pending that would end it at its next await."""
    deadlines = Deadlines(0.1)

    async def request_then_more() -> tuple[str, int]:
        outcome = await guarded(deadlines, 5)
        await asyncio.sleep(0.01)  # would raise CancelledError if a cancellation were left
        current = asyncio.current_task()
        assert current is not None
        return outcome, current.cancelling()

    assert await request_then_more() == ("late", 0)


@pytest.mark.anyio
async def test_any_other_cancellation_stays_a_cancellation() -> None:
    """A cancellation that is not the deadline's reaches the caller as CancelledError."""
    deadlines = Deadlines(10)
    task = asyncio.ensure_future(guarded(deadlines, 5))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.anyio
async def test_the_watchdog_stops_when_no_request_is_in_flight() -> None:
    """With nothing in flight the watchdog ends instead of ticking for ever."""
    deadlines = Deadlines(0.2)
    assert await guarded(deadlines, 0.01) == "answered"
    await asyncio.sleep(0.2)  # more than one tick
    names = {t.get_coro().__qualname__ for t in asyncio.all_tasks()}  # type: ignore[union-attr]
    assert "Deadlines._watch" not in names
    assert await guarded(deadlines, 5) == "late"  # and starts again with the next request


@pytest.mark.anyio
async def test_a_late_request_cancelled_by_someone_else_too_stays_cancelled() -> None:
    """The deadline and another cancellation at once: the other one wins (the worker is being
    stopped), as with asyncio.timeout. The watchdog's cut is made here by hand, in the same
    turn of the loop as the other cancellation, so the two meet every time."""
    deadlines = Deadlines(60)
    task = asyncio.ensure_future(guarded(deadlines, 5))
    await asyncio.sleep(0.01)  # the request is in flight
    deadlines._expired.add(task)  # what the watchdog does when the deadline passes
    task.cancel()
    task.cancel()  # someone else's
    with pytest.raises(asyncio.CancelledError):
        await task
    alone = asyncio.ensure_future(guarded(deadlines, 5))
    await asyncio.sleep(0.01)
    deadlines._expired.add(alone)
    alone.cancel()  # the deadline alone: a timeout, not a cancellation
    assert await alone == "late"
