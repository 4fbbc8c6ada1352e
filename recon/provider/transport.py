"""How the provider client sends requests: an httpx transport on aiohttp's connection pool.

httpx's own pool (httpcore) is many times slower at 50 concurrent requests (encode/httpx#3215; the
numbers are in docs/decisions.md, "HTTP transport"). Keeping httpx as the client API means tests can
still use ``httpx.MockTransport`` and ``httpx.ASGITransport``; only the wire is aiohttp's.

This adapter, rather than ``httpx_aiohttp.AiohttpTransport``, because the client must know whether a
failed request could have reached the provider (a create call then has an unknown outcome), and
httpx_aiohttp maps a refused connection and a dropped one alike to ``httpx.ConnectTimeout``. Here:

- could not connect (refused, DNS, connect timeout) -> ``httpx.ConnectError`` / ``ConnectTimeout``:
  the request was never sent;
- no answer in time -> ``httpx.ReadTimeout``; connection dropped mid-exchange ->
  ``httpx.RemoteProtocolError`` or ``httpx.ReadError``: the request may have been processed.

Bodies are small JSON documents, so each answer is read whole before it is handed to httpx.
"""

from __future__ import annotations

import importlib.util

import aiohttp
import httpx

# httpcore imports sniffio on every request and, when it is missing, repeats the failing import each
# time; fail loudly once instead.
if importlib.util.find_spec("sniffio") is None:  # pragma: no cover - a broken install
    raise ImportError("the sniffio package is required by httpx's async support; reinstall recon")


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` that sends over one shared ``aiohttp.ClientSession``.

    ``max_connections`` should equal the client's concurrency, so no request waits for a
    connection while another sits idle. The session is created on first use, inside the event loop.
    """

    def __init__(self, *, max_connections: int, keepalive_expiry: float = 15.0) -> None:
        self._max_connections = max_connections
        self._keepalive_expiry = keepalive_expiry
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections,
                limit_per_host=self._max_connections,
                keepalive_timeout=self._keepalive_expiry,
            )
            # auto_decompress off: httpx decodes Content-Encoding itself from the raw headers.
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=False, skip_auto_headers=("User-Agent",)
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send one request; aiohttp's errors come out as the matching httpx exceptions."""
        session = self._open()
        timeouts = request.extensions.get("timeout", {})
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=timeouts.get("pool"),
            sock_connect=timeouts.get("connect"),
            sock_read=timeouts.get("read"),
        )
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        body = await request.aread()
        try:
            async with session.request(
                request.method,
                str(request.url),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
            ) as answer:
                content = await answer.read()
                status = answer.status
                raw_headers = answer.raw_headers
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timeout", request=request) from exc
        except aiohttp.ServerTimeoutError as exc:
            raise httpx.ReadTimeout(str(exc) or "read timeout", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc) or "connect failed", request=request) from exc
        except aiohttp.ClientPayloadError as exc:
            raise httpx.ReadError(str(exc) or "incomplete answer", request=request) from exc
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            raise httpx.RemoteProtocolError(
                str(exc) or "connection closed", request=request
            ) from exc
        except TimeoutError as exc:  # aiohttp's pool wait ("connect") times out as a bare one
            raise httpx.PoolTimeout("no connection available in time", request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc
        return httpx.Response(
            status, headers=raw_headers, content=content, request=request, extensions={}
        )

    async def aclose(self) -> None:
        """Close the aiohttp session and its connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def default_transport(max_connections: int) -> httpx.AsyncBaseTransport:
    """The transport the client uses when none is given: aiohttp's pool sized to ``concurrency``."""
    return AiohttpTransport(max_connections=max_connections)
