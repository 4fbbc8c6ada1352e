"""Pings to a dead man's switch (``RECON_HEARTBEAT_URL``), the healthchecks.io convention.

``URL/start`` when a run starts, ``URL`` when it ends with exit code 0, ``URL/fail`` when it ends
with any other code or an error. The monitor alerts when the pings stop coming, which is the one
failure a job cannot report itself: a night on which it never started.

A ping never changes the run: it is tried a few times with a short timeout and, failing that,
logged as a warning. The URL usually holds the check's secret id, so it is never logged (the CLI
teaches the scrubber its value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

import httpx

from recon.constants import ExitCode
from recon.errors import ReconError

if TYPE_CHECKING:
    from recon.night.end import NightEnd

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10.0
ATTEMPTS = 3
MAX_BODY_CHARS = 10_000  # healthchecks.io keeps up to 100 kB of a ping's body; a summary is enough


class Ping(StrEnum):
    """Which event a ping reports: the suffix added to the URL."""

    START = "/start"
    SUCCESS = ""
    FAIL = "/fail"


def ping_url(base: str, event: Ping) -> str:
    """``base`` with the event's suffix (a trailing ``/`` of ``base`` is not doubled)."""
    return base.rstrip("/") + event.value if event.value else base


def ping(
    base: str | None, event: Ping, body: str = "", *, transport: httpx.BaseTransport | None = None
) -> bool:
    """Send one ping (POST, ``body`` as its log text); whether the monitor took it.

    Nothing happens without a URL. Errors and non-2xx answers are retried, then logged.
    """
    if not base:
        return False
    url = ping_url(base, event)
    content = body[:MAX_BODY_CHARS].encode("utf-8")
    problem = ""
    with httpx.Client(timeout=TIMEOUT_SECONDS, transport=transport) as client:
        for _ in range(ATTEMPTS):
            try:
                answer = client.post(url, content=content, headers={"user-agent": "recon"})
            except httpx.HTTPError as exc:
                problem = type(exc).__name__
                continue
            if answer.is_success:
                return True
            problem = f"HTTP {answer.status_code}"
    log.warning("the heartbeat %s ping was not delivered (%s)", event.name.lower(), problem)
    return False


class HeartbeatPings:
    """A night's pings: :meth:`start` before it, then (as one of its end's hooks) success when
    it ends with exit code 0, ``/fail`` otherwise, with the outcome as the ping's text: the lines
    the command ``said``, or the error after the lines the night attached to it (the failed
    night's line first), each through ``scrub``."""

    def __init__(
        self, url: str, *, scrub: Callable[[str], str], said: Callable[[], list[str]]
    ) -> None:
        self.url = url
        self.scrub = scrub
        self.said = said

    def start(self) -> None:
        """The ``/start`` ping, before the night."""
        ping(self.url, Ping.START)

    def __call__(self, end: NightEnd) -> None:
        error = end.error
        if isinstance(error, ReconError):
            ping(self.url, Ping.FAIL, self.scrub(_noted(error, f"recon: error: {error}")))
        elif error is not None:
            stopped = f"recon: stopped by {type(error).__name__}"
            ping(self.url, Ping.FAIL, self.scrub(_noted(error, stopped)))
        else:
            outcome = Ping.SUCCESS if end.exit_code == ExitCode.OK else Ping.FAIL
            lines = "\n".join(self.said())
            text = f"{lines}\nrecon: exit code {end.exit_code}".lstrip()
            ping(self.url, outcome, self.scrub(text))


def _noted(exc: BaseException, text: str) -> str:
    return "\n".join([*getattr(exc, "__notes__", ()), text])
