"""How the provider client puts a request on the wire: aiohttp directly, or any httpx transport.

The client POSTs a small JSON body and reads the whole answer (:meth:`Wire.post`), and GETs an
export's file by its absolute URL (:meth:`Wire.get`, with a limit of its own); both return an
:class:`Answer` (status, headers, body bytes). The body is read in
chunks and given up as soon as it passes ``max_bytes`` (or announces a longer ``Content-Length``),
raising :class:`AnswerTooLarge`: a huge answer is never held, only its first ``max_bytes``.

- :class:`AiohttpWire` (the default) sends over one ``aiohttp.ClientSession``. It replaced an httpx
  client on an aiohttp transport: building httpx's request, URL and response objects cost more CPU
  per answer than aiohttp's whole exchange, and on a 2-core machine that CPU set the pace of a run
  (measured against httpx's own transport, the plain way, in docs/decisions.md, "HTTP
  transport").
- :class:`HttpxWire` sends through an ``httpx.AsyncClient`` on a given transport, so tests fake the
  provider at the HTTP boundary with ``httpx.ASGITransport`` (the sandbox in-process) or
  ``httpx.MockTransport`` (one odd answer), as STYLE.md asks.

Failures come out as httpx's exception classes, the vocabulary both wires share (httpx transports
raise them natively), and the client turns them into recon's own errors. The distinction that
matters is whether the request could have reached the provider, because a create call that may
have been processed must not be sent again blindly:

- could not connect (refused, DNS, connect timeout, no free connection in time) ->
  ``httpx.ConnectError`` / ``ConnectTimeout`` / ``PoolTimeout``: the request was never sent;
- no answer in time -> ``httpx.ReadTimeout``; connection dropped mid-exchange ->
  ``httpx.RemoteProtocolError`` or ``httpx.ReadError``: the request may have been processed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import aiohttp
import httpx


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP answer, read whole: status, headers (case-insensitive lookups), body."""

    status: int
    headers: Mapping[str, str]
    content: bytes


class AnswerTooLarge(Exception):
    """The answer's body is (or says it is) longer than the wire accepts; the client turns this
    into a malformed answer."""

    def __init__(self, limit: int, seen: int) -> None:
        self.limit = limit
        self.seen = seen
        super().__init__(f"the answer is over {limit} bytes (RECON_MAX_ANSWER_BYTES)")


def _check_declared(length: str | int | None, limit: int) -> None:
    try:
        declared = int(length) if length is not None else None
    except ValueError:
        return  # a bad header is the HTTP library's to refuse; the count below still holds
    if declared is not None and declared > limit:
        raise AnswerTooLarge(limit, declared)


class _Body:
    """Collects chunks of a body up to ``limit`` bytes."""

    __slots__ = ("chunks", "limit", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.chunks: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise AnswerTooLarge(self.limit, self.size)
        self.chunks.append(chunk)

    def content(self) -> bytes:
        return self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds allowed to connect and to wait for an answer (interface 5: up to 60 s)."""

    connect: float
    read: float


class Wire(Protocol):
    """What the provider client sends requests through."""

    async def post(self, path: str, content: bytes, headers: Mapping[str, str]) -> Answer:
        """POST ``content`` to ``path`` (relative to the base URL); the whole answer."""
        ...

    async def get(self, url: str, headers: Mapping[str, str], max_bytes: int) -> Answer:
        """GET the absolute ``url``; the whole answer, up to ``max_bytes``."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...


class AiohttpWire:
    """Requests over one shared ``aiohttp.ClientSession``, created on first use in the event loop.

    ``max_connections`` should equal the client's concurrency, so no request waits for a
    connection while another sits idle.
    """

    def __init__(
        self,
        base_url: str,
        *,
        max_connections: int,
        timeouts: Timeouts,
        max_bytes: int,
        keepalive_expiry: float = 15.0,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._max_bytes = max_bytes
        self._max_connections = max_connections
        self._keepalive_expiry = keepalive_expiry
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=None, sock_connect=timeouts.connect, sock_read=timeouts.read
        )
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections,
                limit_per_host=self._max_connections,
                keepalive_timeout=self._keepalive_expiry,
            )
            # No proxy variables (trust_env off): the provider allow-lists the merchant's own
            # server addresses (interface 5.4), so a proxy would only route around them.
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                skip_auto_headers=("User-Agent",),
                trust_env=False,
            )
        return self._session

    async def post(self, path: str, content: bytes, headers: Mapping[str, str]) -> Answer:
        """POST over aiohttp; its errors come out as the matching httpx exceptions."""
        return await self._send("POST", self._base_url + path, content, headers, self._max_bytes)

    async def get(self, url: str, headers: Mapping[str, str], max_bytes: int) -> Answer:
        """GET over aiohttp; its errors come out as the matching httpx exceptions."""
        return await self._send("GET", url, None, headers, max_bytes)

    async def _send(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        max_bytes: int,
    ) -> Answer:
        session = self._open()
        try:
            async with session.request(
                method, url, data=content, headers=headers, allow_redirects=False
            ) as answer:
                # Leaving the block before the end of the body closes the connection.
                _check_declared(answer.content_length, max_bytes)
                body = _Body(max_bytes)
                async for chunk in answer.content.iter_any():  # decompressed, if compressed
                    body.add(chunk)
                return Answer(answer.status, answer.headers, body.content())
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timeout") from exc
        except aiohttp.ServerTimeoutError as exc:
            raise httpx.ReadTimeout(str(exc) or "read timeout") from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc) or "connect failed") from exc
        except aiohttp.ClientPayloadError as exc:
            raise httpx.ReadError(str(exc) or "incomplete answer") from exc
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            raise httpx.RemoteProtocolError(str(exc) or "connection closed") from exc
        except TimeoutError as exc:  # aiohttp's wait for a pooled connection times out bare
            raise httpx.PoolTimeout("no connection available in time") from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        """Close the aiohttp session and its connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None


class HttpxWire:
    """Requests through an ``httpx.AsyncClient`` on ``transport`` (tests, in-process sandboxes)."""

    def __init__(
        self,
        base_url: str,
        transport: httpx.AsyncBaseTransport,
        *,
        timeouts: Timeouts,
        max_bytes: int,
    ) -> None:
        self._max_bytes = max_bytes
        self._http = httpx.AsyncClient(
            base_url=base_url,
            transport=transport,
            timeout=httpx.Timeout(
                connect=timeouts.connect, read=timeouts.read, write=timeouts.connect, pool=None
            ),
            follow_redirects=False,
            trust_env=False,
        )

    async def post(self, path: str, content: bytes, headers: Mapping[str, str]) -> Answer:
        """POST through the transport; its httpx exceptions pass through unchanged."""
        request = self._http.build_request("POST", path, content=content, headers=dict(headers))
        return await self._send(request, self._max_bytes)

    async def get(self, url: str, headers: Mapping[str, str], max_bytes: int) -> Answer:
        """GET through the transport; its httpx exceptions pass through unchanged."""
        return await self._send(
            self._http.build_request("GET", url, headers=dict(headers)), max_bytes
        )

    async def _send(self, request: httpx.Request, max_bytes: int) -> Answer:
        response = await self._http.send(request, stream=True)
        try:
            _check_declared(response.headers.get("content-length"), max_bytes)
            body = _Body(max_bytes)
            async for chunk in response.aiter_bytes():  # decompressed, if compressed
                body.add(chunk)
        finally:
            await response.aclose()
        return Answer(response.status_code, response.headers, body.content())

    async def aclose(self) -> None:
        """Close the httpx client (and its transport)."""
        await self._http.aclose()
