"""Serving an ASGI app with uvicorn: in the foreground (commands) or in a thread (demo, tests)."""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn


def event_loop() -> Literal["uvloop", "asyncio"]:
    """uvloop where it is installed (every platform but Windows), else the standard loop."""
    return "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"


def uvicorn_config(app: Any, **overrides: Any) -> uvicorn.Config:
    """recon's uvicorn settings: httptools, uvloop, no access log (callers log what matters)."""
    options: dict[str, Any] = {
        "http": "httptools",
        "loop": event_loop(),
        "access_log": False,
        "log_config": None,
        "backlog": 2048,
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


@contextmanager
def serve_in_thread(app: Any, *, host: str = "127.0.0.1", **overrides: Any) -> Iterator[str]:
    """Serve ``app`` on ``host`` and a free port in a daemon thread; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, **overrides))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def bound_urls(server: uvicorn.Server) -> list[str]:
    """The ``http://host:port`` of every socket a started server listens on."""
    urls = []
    for listener in getattr(server, "servers", []):
        for sock in listener.sockets:
            host, port = sock.getsockname()[:2]
            urls.append(f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}")
    return urls


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that says where it listens once it does (the port may have been 0)."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[str], None]) -> None:
        super().__init__(config)
        self.announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            for url in bound_urls(self):
                self.announce(url)
