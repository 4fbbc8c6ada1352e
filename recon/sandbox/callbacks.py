"""Delivery of callbacks and returned-funds notifications (interface section 6).

Each notification is attempted at 0, 10, 30 and 60 minutes of the sandbox clock after the event,
until one attempt is answered 200; nothing is sent after the fourth. Attempts are events of the
sandbox's schedule, so advancing the clock by an hour runs all four at once, in order. Every
attempt is kept in a log (``GET /sandbox/deliveries``) for tests and the demo.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from recon import jsonparse

log = logging.getLogger(__name__)

RETRY_OFFSETS_SECONDS = (0.0, 600.0, 1800.0, 3600.0)
HEADERS = {
    "user-agent": "Service Callback",
    "content-type": "application/json",
    "accept-encoding": "gzip, deflate",
}

SUPPRESSED = "suppressed"

Schedule = Callable[[float, Callable[[float], Awaitable[None]]], None]


@dataclass(slots=True)
class Attempt:
    """One attempt to deliver one notification."""

    notification_id: int
    kind: str  # "session", "transaction" or "returned_funds"
    url: str | None
    body: dict[str, Any]
    attempt: int
    due: float
    status: int | None = None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status == 200

    def as_json(self) -> dict[str, Any]:
        return {
            "notification_id": self.notification_id,
            "kind": self.kind,
            "url": self.url,
            "body": self.body,
            "attempt": self.attempt,
            "due": self.due,
            "status": self.status,
            "error": self.error,
            "delivered": self.delivered,
        }


class CallbackDispatcher:
    """Schedules notifications on the sandbox's event queue and records every attempt."""

    def __init__(
        self,
        schedule: Schedule,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._schedule = schedule
        self._transport = transport
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._next_id = 0
        self.log: list[Attempt] = []

    def notify(self, kind: str, url: str | None, body: dict[str, Any], at: float) -> int:
        """Send ``body`` to ``url`` from sandbox time ``at``, retrying on the documented schedule.

        A returned-funds notification for a merchant without a back-office url is logged as not
        sent, so the demo can show why nothing arrived. Answers the notification's id.
        """
        self._next_id += 1
        notification_id = self._next_id
        if url is None:
            self.log.append(
                Attempt(notification_id, kind, None, body, 1, at, error="no url configured")
            )
            return notification_id
        self._schedule_attempt(notification_id, kind, url, body, at, 1)
        return notification_id

    def suppressed(self, kind: str, body: dict[str, Any], at: float) -> int:
        """Log a notification that is never sent (a scenario: only polling can find its news)."""
        self._next_id += 1
        self.log.append(Attempt(self._next_id, kind, None, body, 1, at, error=SUPPRESSED))
        return self._next_id

    def _schedule_attempt(
        self, notification_id: int, kind: str, url: str, body: dict[str, Any], at: float, n: int
    ) -> None:
        async def run(due: float) -> None:
            attempt = Attempt(notification_id, kind, url, body, n, due)
            self.log.append(attempt)
            await self._post(attempt)
            if not attempt.delivered and n < len(RETRY_OFFSETS_SECONDS):
                self._schedule_attempt(notification_id, kind, url, body, at, n + 1)

        self._schedule(at + RETRY_OFFSETS_SECONDS[n - 1], run)

    async def _post(self, attempt: Attempt) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport, timeout=self._timeout, follow_redirects=False
            )
        assert attempt.url is not None
        try:
            response = await self._client.post(
                attempt.url, content=jsonparse.dumpb(attempt.body), headers=HEADERS
            )
        except httpx.HTTPError as exc:
            attempt.error = f"{type(exc).__name__}: {exc}"
            # Only the host: a merchant's url may carry a secret path token.
            log.info("callback to %s failed: %s", httpx.URL(attempt.url).host, type(exc).__name__)
            return
        attempt.status = response.status_code

    async def aclose(self) -> None:
        """Close the HTTP client (the app does this on shutdown)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
