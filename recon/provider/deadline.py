"""One watchdog for the deadline of every request in flight (``RECON_REQUEST_DEADLINE``).

``asyncio.timeout`` around each request schedules and cancels a timer per request: ~12 µs each,
a few per cent of a night's CPU against a fast provider (bench/findings.md, "Fifth round"). Here a
request only notes when it is due (a dict entry); one task, running only while requests are in
flight, wakes every ``tick`` seconds and cancels the requests past their deadline, which
:meth:`Deadlines.expired` then tells apart from any other cancellation. A request is cut between
its deadline and one tick later (a tick is at most a second, and a quarter of the deadline).
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Deadlines"]


class Deadlines:
    """The requests in flight and when each is due; cancels the late ones."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._tick = min(1.0, seconds / 4)
        # When each request is due, and how many cancellations its task had pending at the start.
        self._due: dict[asyncio.Task[object], tuple[float, int]] = {}
        self._expired: set[asyncio.Task[object]] = set()
        self._watchdog: asyncio.Task[None] | None = None

    def enter(self) -> asyncio.Task[object]:
        """The current task starts a request: it is due ``seconds`` from now."""
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - requests are always made from a task
            raise RuntimeError("a request needs a running task")
        loop = task.get_loop()
        self._due[task] = (loop.time() + self.seconds, task.cancelling())
        if self._watchdog is None:
            self._watchdog = loop.create_task(self._watch())
        return task

    def leave(self, task: asyncio.Task[object]) -> None:
        """The request of ``task`` is over (answered, failed or cut)."""
        del self._due[task]
        if task in self._expired:  # cancelled by the watchdog, but the request finished anyway
            self._expired.discard(task)
            task.uncancel()

    def expired(self, task: asyncio.Task[object]) -> bool:
        """Whether ``task``'s cancellation was its deadline alone (then it is taken back: the
        caller raises a timeout instead); call it where the request sees ``CancelledError``. A
        task cancelled by someone else as well stays cancelled, as with ``asyncio.timeout``."""
        if task not in self._expired:
            return False
        self._expired.discard(task)
        _, pending_before = self._due[task]
        return task.uncancel() <= pending_before

    async def aclose(self) -> None:
        """Stop the watchdog (it also stops by itself once no request is in flight)."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._due:
                await asyncio.sleep(self._tick)
                now = loop.time()
                for task, (due, _) in list(self._due.items()):
                    if due <= now and task not in self._expired:
                        self._expired.add(task)
                        task.cancel()
        finally:
            if self._watchdog is asyncio.current_task():
                self._watchdog = None
