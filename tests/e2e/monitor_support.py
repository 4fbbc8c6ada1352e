"""A heartbeat monitor on loopback for the tests: a real HTTP server recording every ping."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Monitor:
    """A healthchecks.io stand-in on loopback: every path it was sent, and each ping's body."""

    url: str
    pings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.pings]


@pytest.fixture
def monitor() -> Iterator[Monitor]:
    """A real HTTP server recording the pings it receives (GET or POST), answering 200."""
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            seen.append((self.path, self.rfile.read(length).decode("utf-8")))
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"OK")

        do_GET = do_POST = do_HEAD = _record

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Monitor(f"http://127.0.0.1:{server.server_address[1]}/ping/3f0e-check", seen)
    finally:
        server.shutdown()
        server.server_close()
