"""Progress of a run: a bar on a terminal, periodic plain log lines under cron."""

from __future__ import annotations

import logging
import sys
import time
from typing import Protocol

log = logging.getLogger("recon.progress")


class Progress(Protocol):
    """What the run reports while it polls."""

    def start(self, label: str, total: int) -> None: ...
    def advance(self, n: int) -> None: ...
    def stop(self) -> None: ...


class LogProgress:
    """Plain lines, at most one every ``every`` seconds: for cron logs, which a bar would garble."""

    def __init__(self, every: float = 10.0) -> None:
        self.every = every
        self.label = ""
        self.total = 0
        self.done = 0
        self._started = 0.0
        self._last = 0.0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self._started = self._last = time.monotonic()
        log.info("%s: %d to fetch", label, total)

    def advance(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._last >= self.every or self.done >= self.total:
            self._last = now
            rate = self.done / max(now - self._started, 1e-9)
            log.info("%s: %d/%d (%.0f/s)", self.label, self.done, self.total, rate)

    def stop(self) -> None:
        pass


class BarProgress:
    """A rich progress bar on standard error."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            transient=True,
        )
        self._task: object | None = None
        self._bar.start()

    def start(self, label: str, total: int) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)  # type: ignore[arg-type]
        self._task = self._bar.add_task(label, total=total)

    def advance(self, n: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)  # type: ignore[arg-type]

    def stop(self) -> None:
        self._bar.stop()


def for_terminal() -> Progress:
    """A bar when standard error is a terminal, log lines otherwise (cron)."""
    return BarProgress() if sys.stderr.isatty() else LogProgress()
