"""Compare HTTP client transports for the provider client (a measurement, not a test).

Serves a trivial JSON endpoint with uvicorn (httptools, uvloop) on loopback in a subprocess and
times N POST requests at concurrency C through:

1. a default ``httpx.AsyncClient`` (httpcore's pool),
2. ``httpx.AsyncClient`` on ``httpx_aiohttp.AiohttpTransport``,
3. recon's own wire, ``recon.provider.wire.AiohttpWire`` (what recon uses),
4. bare ``aiohttp.ClientSession``.

Usage: ``.venv/bin/python bench/transport_compare.py [--requests 5000] [--concurrency 50]``.
The numbers and the choice they led to are written down in docs/decisions.md ("HTTP transport").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

BODY = json.dumps(
    {"id": "tx-1", "state": 6, "type": 1, "amount": 11.01, "currency_id": "eur"}
).encode()


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A minimal ASGI app: read the body, answer a transaction-like JSON object."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": BODY})


def _serve(port: int) -> None:
    import uvicorn

    uvicorn.run(
        _app, host="127.0.0.1", port=port, loop="uvloop", http="httptools", log_level="warning"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not start")


async def _drive(send_one: Callable[[], Awaitable[None]], total: int, concurrency: int) -> float:
    """Run ``total`` requests with ``concurrency`` workers; return elapsed seconds."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await send_one()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start


async def _httpx_default(url: str, total: int, concurrency: int) -> float:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits) as client:

        async def one() -> None:
            response = await client.post(url, content=b'{"id":"tx-1"}')
            response.raise_for_status()
            response.json()

        await _drive(one, concurrency, concurrency)  # warm the pool
        return await _drive(one, total, concurrency)


async def _httpx_aiohttp(url: str, total: int, concurrency: int) -> float:
    import httpx
    from httpx_aiohttp import AiohttpTransport

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(transport=AiohttpTransport(limits=limits)) as client:

        async def one() -> None:
            response = await client.post(url, content=b'{"id":"tx-1"}')
            response.raise_for_status()
            response.json()

        await _drive(one, concurrency, concurrency)
        return await _drive(one, total, concurrency)


async def _recon_wire(url: str, total: int, concurrency: int) -> float:
    from urllib.parse import urlsplit

    from recon.provider.wire import AiohttpWire, Timeouts

    parts = urlsplit(url)
    wire = AiohttpWire(
        f"{parts.scheme}://{parts.netloc}",
        max_connections=concurrency,
        timeouts=Timeouts(connect=10, read=65),
    )
    try:

        async def one() -> None:
            answer = await wire.post(parts.path, b'{"id":"tx-1"}', {})
            if answer.status != 200:
                raise RuntimeError(f"HTTP {answer.status}")
            json.loads(answer.content)

        await _drive(one, concurrency, concurrency)
        return await _drive(one, total, concurrency)
    finally:
        await wire.aclose()


async def _aiohttp(url: str, total: int, concurrency: int) -> float:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> None:
            async with session.post(url, data=b'{"id":"tx-1"}') as response:
                response.raise_for_status()
                await response.json()

        await _drive(one, concurrency, concurrency)
        return await _drive(one, total, concurrency)


CANDIDATES: dict[str, Callable[[str, int, int], Coroutine[Any, Any, float]]] = {
    "httpx default": _httpx_default,
    "httpx + AiohttpTransport": _httpx_aiohttp,
    "recon wire (aiohttp)": _recon_wire,
    "bare aiohttp": _aiohttp,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="best of N rounds per candidate")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return

    port = _free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        _wait_for(port)
        url = f"http://127.0.0.1:{port}/api/transaction.get"
        results: dict[str, float] = {}
        for name, run in CANDIDATES.items():
            best = min(
                asyncio.run(run(url, args.requests, args.concurrency)) for _ in range(args.rounds)
            )
            results[name] = best
        baseline = results["bare aiohttp"]
        print(f"{args.requests} requests at concurrency {args.concurrency}, best of {args.rounds}")
        print(f"{'transport':<28}{'seconds':>9}{'req/s':>10}{'x aiohttp':>11}")
        for name, seconds in results.items():
            rate = args.requests / seconds
            print(f"{name:<28}{seconds:>9.3f}{rate:>10.0f}{seconds / baseline:>11.2f}")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
