"""The receiver's connection limits over real loopback sockets: slow, huge and idle clients."""

from __future__ import annotations

import json
import select
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import Engine, func
from sqlalchemy import select as sql_select

from recon.ingest.receiver import create_receiver_app, server_options
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.tables import notifications

# How long a test waits for the server to act before calling it a failure (never a measurement).
PATIENCE = 30.0
HEAD = b"POST /callbacks HTTP/1.1\r\nhost: receiver\r\ncontent-type: application/json\r\n"


@contextmanager
def receiver(engine: Engine, **settings: Any) -> Iterator[tuple[str, tuple[str, int]]]:
    """The receiver served as `recon serve callbacks` serves it; its URL and address."""
    config = Settings(**settings)
    with serve_in_thread(create_receiver_app(config, engine), **server_options(config)) as url:
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        yield url, (parts.hostname, parts.port)


def connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=PATIENCE)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or PATIENCE runs out)."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def callback(merchant: str) -> bytes:
    return json.dumps(
        {"merchant_id": merchant, "transaction_id": "t-1", "transaction_state": 6}
    ).encode()


def stored(engine: Engine, merchant: str) -> int:
    with engine.connect() as conn:
        query = sql_select(func.count()).where(notifications.c.merchant_id == merchant)
        return int(conn.execute(query).scalar_one())


def test_half_sent_requests_are_answered_408_and_closed_after_the_header_timeout(
    engine: Engine,
) -> None:
    """Requests whose headers never end do not hold their connections open."""
    with receiver(engine, receiver_header_timeout=0.5) as (_, address):
        socks = [connect(address) for _ in range(50)]
        try:
            for sock in socks:
                sock.sendall(HEAD + b"x-never-ending: ")
            answers = [read_until_closed(sock) for sock in socks]
        finally:
            for sock in socks:
                sock.close()
    assert {answer.split(b"\r\n", 1)[0] for answer in answers} == {b"HTTP/1.1 408 Request Timeout"}


def test_headers_dripped_byte_by_byte_are_cut_off_at_the_header_timeout(engine: Engine) -> None:
    """A client sending one header byte at a time cannot keep a connection past the deadline."""
    with receiver(engine, receiver_header_timeout=1.0) as (_, address), connect(address) as sock:
        sock.sendall(HEAD)
        sent = 0
        for _ in range(400):  # 400 bytes, one every 0.1 s: 40 s if nobody stops it
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            readable, _, _ = select.select([sock], [], [], 0.1)
            if readable:
                break
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408")
    assert sent < 400


def test_a_body_that_stops_arriving_is_answered_408_and_nothing_is_stored(engine: Engine) -> None:
    """The body deadline closes a request whose body stalls; the app stores nothing."""
    merchant = "m-" + uuid.uuid4().hex
    body = callback(merchant)
    with (
        receiver(engine, receiver_body_timeout=0.5) as (_, address),
        connect(address) as sock,
    ):
        sock.sendall(HEAD + f"content-length: {len(body)}\r\n\r\n".encode() + body[:10])
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408")
    assert stored(engine, merchant) == 0


def test_an_oversized_header_is_refused_while_it_is_read(engine: Engine) -> None:
    """Header bytes past the limit end the connection early: the server does not buffer them."""
    limit = 16 * 1024
    chunk = b"a" * 65536
    with (
        receiver(engine, receiver_max_header_bytes=limit) as (_, address),
        connect(address) as sock,
    ):
        sock.sendall(HEAD + b"x-pad: ")
        sent = 0
        try:
            while sent < 64 * 1024 * 1024:  # a 64 MB header, if nobody stops it
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_until_closed(sock)
    # the kernel's socket buffers take a few MB before the refusal arrives; never 64 MB
    assert sent < 16 * 1024 * 1024
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")


def test_idle_connections_past_the_cap_make_room_for_a_real_callback(engine: Engine) -> None:
    """Past max_connections the longest-idle connection is closed and the callback is stored."""
    merchant = "m-" + uuid.uuid4().hex
    with receiver(engine, receiver_max_connections=20, receiver_header_timeout=60) as (url, addr):
        idle = [connect(addr) for _ in range(60)]
        try:
            answer = httpx.post(
                f"{url}/callbacks",
                content=callback(merchant),
                headers={"content-type": "application/json"},
                timeout=PATIENCE,
            )
            # the first 40 were closed to make room, oldest first; the last 20 are still open
            evicted = [read_until_closed(sock) for sock in idle[:40]]
        finally:
            for sock in idle:
                sock.close()
    assert answer.status_code == 200, answer.text
    assert stored(engine, merchant) == 1
    assert {reply.split(b"\r\n", 1)[0] for reply in evicted} == {b"HTTP/1.1 408 Request Timeout"}


def test_a_request_past_the_cap_gets_503_when_every_connection_is_busy(engine: Engine) -> None:
    """With every connection in the middle of a request, a new request is refused with 503."""
    merchant = "m-" + uuid.uuid4().hex
    body = callback(merchant)
    with receiver(engine, receiver_max_connections=2, receiver_body_timeout=60) as (url, addr):
        busy = [connect(addr) for _ in range(2)]
        try:
            for sock in busy:  # headers sent, body pending: busy, not idle
                sock.sendall(HEAD + f"content-length: {len(body)}\r\n\r\n".encode() + body[:5])
            for sock in busy:  # wait until the server has read both requests' headers
                sock.settimeout(0.2)
                with suppress(TimeoutError):
                    sock.recv(1)
                sock.settimeout(PATIENCE)
            refused = httpx.post(
                f"{url}/callbacks",
                content=body,
                headers={"content-type": "application/json"},
                timeout=PATIENCE,
            )
        finally:
            for sock in busy:
                sock.close()
    assert refused.status_code == 503
    assert refused.headers["connection"] == "close"
