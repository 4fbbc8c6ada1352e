"""How the receiver reads a request's length, over a real loopback socket."""

from __future__ import annotations

import uuid

from sqlalchemy import Engine

from tests.integration.test_receiver_limits import (
    HEAD,
    callback,
    connect,
    read_until_closed,
    receiver,
    stored,
)


def test_a_request_with_both_content_length_and_transfer_encoding_is_refused_and_closed(
    engine: Engine,
) -> None:
    """A second request hidden in a chunked body is never answered or stored (no smuggling)."""
    merchant = "m-" + uuid.uuid4().hex
    body = callback(merchant)
    hidden = HEAD + f"content-length: {len(body)}\r\n\r\n".encode() + body
    # A proxy trusting content-length forwards all of this as one request; a server reading the
    # chunks sees an empty body, then `hidden` as a request of its own on the same connection.
    smuggling = b"0\r\n\r\n" + hidden
    with receiver(engine) as (_, address), connect(address) as sock:
        sock.sendall(
            HEAD
            + f"content-length: {len(smuggling)}\r\n".encode()
            + b"transfer-encoding: chunked\r\n\r\n"
            + smuggling
        )
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer
    assert answer.count(b"HTTP/1.1 ") == 1, answer
    assert stored(engine, merchant) == 0
