"""A provider stand-in over a real socket: a raw HTTP/1.1 server whose answers a test scripts.

The sandbox answers as the interface says; this stand-in answers as a broken or hostile provider
might: bodies of any size made on demand, bytes dripped one at a time, any status on
``merchant.authorize``. Each answer closes its connection (``Connection: close``), so a body need
not announce its length. The server counts the body bytes it managed to write for each request,
which shows whether the client stopped reading.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

TOKEN = "standin-token"


@dataclass
class Reply:
    """One answer: status, body (bytes or chunks made on demand), and the length to announce."""

    status: int
    body: bytes | Callable[[], AsyncIterator[bytes]]
    length: int | None = None  # Content-Length to send; None: the length of ``body`` if bytes

    @classmethod
    def json(cls, status: int, text: str) -> Reply:
        """An answer of JSON text, sent as given (exact numbers, any oddity)."""
        return cls(status, text.encode())


def token_answer() -> Reply:
    """merchant.authorize's ordinary answer: a token valid until 2100."""
    return Reply.json(200, json.dumps({"access_token": TOKEN, "expires": 4102444800}))


Script = Callable[[str, dict[str, Any]], Reply]  # (operation, request body) -> answer


@dataclass
class StandIn:
    """A served stand-in: its base URL and, per (operation, id), the body bytes written."""

    url: str
    written: dict[tuple[str, str], int] = field(default_factory=dict)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, Any]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    length = int(next((v for k, v in headers.items() if k.lower() == "content-length"), "0"))
    body = json.loads(await reader.readexactly(length)) if length else {}
    return path.rpartition("/api/")[2], body


async def _write_reply(writer: asyncio.StreamWriter, reply: Reply) -> int:
    length = reply.length
    if length is None and isinstance(reply.body, bytes):
        length = len(reply.body)
    head = [f"HTTP/1.1 {reply.status} X", "Content-Type: application/json", "Connection: close"]
    if length is not None:
        head.append(f"Content-Length: {length}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    written = 0
    chunks = _once(reply.body) if isinstance(reply.body, bytes) else reply.body()
    try:
        async for chunk in chunks:
            writer.write(chunk)
            await writer.drain()  # waits while the client is not reading; fails once it left
            written += len(chunk)
    except (ConnectionError, OSError):
        pass
    return written


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


@contextmanager
def serve_standin(script: Script) -> Iterator[StandIn]:
    """Serve ``script`` on a free loopback port in a thread; yields the stand-in."""
    loop = asyncio.new_event_loop()
    box: dict[str, Any] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            operation, body = await _read_request(reader)
            reply = script(operation, body)
            written = await _write_reply(writer, reply)
            standin.written[(operation, str(body.get("id", "")))] = written
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Stopped mid-answer (a drip): end quietly, or asyncio's stream callback logs the
            # cancelled task as an error.
            pass
        finally:
            writer.close()
            with suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def start() -> None:
        box["server"] = await asyncio.start_server(handle, "127.0.0.1", 0)

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    server = box["server"]
    port = server.sockets[0].getsockname()[1]
    standin = StandIn(f"http://127.0.0.1:{port}")
    try:
        yield standin
    finally:

        async def stop() -> None:
            server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
