"""The limits a public HTTP endpoint needs, added to uvicorn's h11 protocol.

uvicorn closes idle keep-alive connections, but nothing bounds how long a client may take to send
a request, how large its headers may grow (with httptools) or how many connections it may hold
open. On the open internet each of these lets one client exhaust the receiver (half-sent
requests held open, idle connections using up the file descriptors, a huge header held in memory;
measured in docs/reliability.md). Here:

========================  =====================================================================
limit                     what happens past it
========================  =====================================================================
``header_timeout``        from the connection's start (or the end of the previous response) to
                          the end of the request's headers: 408 and the connection is closed
``body_timeout``          from the end of the headers to the end of the body: 408 and closed
                          (the app sees a disconnect and stores nothing)
``max_header_bytes``      request line and headers together, enforced by h11 while reading:
                          400 and closed
``max_connections``       a new connection past it closes the connection that has waited
                          longest for its request's headers (408); when every connection is
                          busy with a request, the new one's request gets 503 and is closed
(not a limit: framing)    a request with both ``Content-Length`` and ``Transfer-Encoding``: 400
                          and closed, before the app sees it (below)
========================  =====================================================================

h11 reads such a request by its chunks and ignores ``Content-Length``, then keeps the connection.
A proxy in front that trusts ``Content-Length`` disagrees about where the request ends, and a
second request hidden in the body is answered as a request of its own (request smuggling, issue
27). RFC 9112 (section 6.3) lets a server reject such a request and requires it to close the
connection after answering; the receiver rejects it, as nginx does.

The deadlines are timers on the event loop, one per connection, re-armed when the h11 state of
the client moves (waiting for headers, sending a body, done); they cost nothing per byte.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: 16\r\n"
    b"connection: close\r\n"
    b"\r\n"
    b"request timeout\n"
)

Phase = Literal["headers", "body", "app"]

DESCRIPTOR_RESERVE = 128  # for the database pool, the event loop, logs, connections closing
MAX_DESCRIPTORS = 65536  # the soft limit is raised towards the hard one, this far at most

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a request may take to arrive, how large its headers, how many connections."""

    header_timeout: float
    body_timeout: float
    max_header_bytes: int
    max_connections: int

    def uvicorn_options(self) -> dict[str, Any]:
        """The uvicorn ``Config`` options that put these limits in force."""
        return {
            "http": limited_protocol(self),
            "h11_max_incomplete_event_size": self.max_header_bytes,
            # uvicorn answers 503 to a request once this many connections are open; eviction
            # (below) keeps the count at max_connections while any of them is idle.
            "limit_concurrency": self.max_connections + 1,
            "timeout_keep_alive": max(1, min(5, int(self.header_timeout))),
        }


class UnambiguousConnection(h11.Connection):
    """An h11 server connection refusing requests whose length is stated two ways (see module)."""

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            names = {name for name, _ in event.headers}  # h11 gives them lower-cased
            if b"content-length" in names and b"transfer-encoding" in names:
                # uvicorn answers this error with 400 and closes the connection
                raise h11.RemoteProtocolError(
                    "both Content-Length and Transfer-Encoding", error_status_hint=400
                )
        return event


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with request deadlines and a connection cap (see the module).

    A subclass because uvicorn has no public header or body deadline and its cap refuses the
    newest connection, not the idlest; an ASGI middleware runs only after the headers (checked
    against uvicorn 0.54: docs/decisions.md, "The callback receiver's server").
    """

    limits: ClassVar[ConnectionLimits]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = UnambiguousConnection(
            h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes
        )
        self._phase: Phase = "headers"
        self._deadline: asyncio.TimerHandle | None = None
        # When this connection began waiting for a request's headers; None while it is busy.
        self.waiting_since: float | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._enter("headers")
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.waiting_since = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_client()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_client()

    # --- deadlines ------------------------------------------------------------------------------

    def _follow_client(self) -> None:
        if self.transport.is_closing():
            self._cancel_deadline()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            phase: Phase = "headers"
        elif state is h11.SEND_BODY:
            phase = "body"
        else:  # the request is in; the app (or the close) takes it from here
            phase = "app"
        if phase != self._phase:
            self._enter(phase)

    def _enter(self, phase: Phase) -> None:
        self._cancel_deadline()
        self._phase = phase
        self.waiting_since = time.monotonic() if phase == "headers" else None
        if phase != "app":
            seconds = self.limits.header_timeout if phase == "headers" else self.limits.body_timeout
            self._deadline = self.loop.call_later(seconds, self.expire)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def expire(self) -> None:
        """Answer 408 and close: the request did not arrive in time (or room was needed)."""
        self._deadline = None
        self.waiting_since = None
        if not self.transport.is_closing():
            self.transport.write(TIMEOUT_RESPONSE)
            self.transport.close()
        # Counted out now, not when the loop reports the close: the cap must see the room at once.
        self.connections.discard(self)

    # --- the connection cap ---------------------------------------------------------------------

    def _make_room(self) -> None:
        idle = [
            other
            for other in self.connections
            if other is not self
            and isinstance(other, LimitedH11Protocol)
            and other.waiting_since is not None
        ]
        if idle:
            min(idle, key=lambda other: other.waiting_since or 0.0).expire()
        # else: every other connection is busy; uvicorn answers this one's request 503


def fit_to_descriptors(limits: ConnectionLimits) -> ConnectionLimits:
    """``limits`` with a connection cap the process's file descriptors can hold.

    The soft descriptor limit is first raised to the hard one (as systemd's ``LimitNOFILE`` sets
    it, or the shell's ``ulimit -Hn``); the cap is then lowered, with a warning, to leave a
    quarter of the descriptors (at most 128) for the database, the event loop and connections
    being closed. Past the descriptors, accept() fails and nobody is let in, the provider included.
    """
    if sys.platform == "win32":  # pragma: no cover - no RLIMIT_NOFILE
        return limits
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_DESCRIPTORS if hard == resource.RLIM_INFINITY else min(hard, MAX_DESCRIPTORS)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return limits
    room = max(1, soft - min(DESCRIPTOR_RESERVE, soft // 4))
    if limits.max_connections <= room:
        return limits
    log.warning(
        "only %d file descriptors: at most %d connections instead of %d "
        "(raise LimitNOFILE or ulimit -n)",
        soft,
        room,
        limits.max_connections,
    )
    return replace(limits, max_connections=room)


def limited_protocol(limits: ConnectionLimits) -> type[LimitedH11Protocol]:
    """A protocol class for uvicorn's ``http`` option, bound to ``limits``."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits})
