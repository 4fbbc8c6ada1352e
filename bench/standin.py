"""A CPU-hungry provider stand-in: the sandbox's answers from a standard-library HTTP server.

``http.server.ThreadingHTTPServer`` (one thread per connection, the request line and headers parsed
in pure Python) answers ``merchant.authorize`` and ``transaction.get`` with the same JSON the
sandbox sends. It costs more CPU per request than uvicorn, which is the point: run on the same
cores as recon, it shows how much of the machine recon's own work takes.

It knows two kinds of ids:

- ids in an answers file (``--answers``: one JSON body per line, read from the sandbox once by
  :func:`capture`), answered with those bytes;
- generated ids ``tx<n><kind>`` (:mod:`bench.steady`), answered by rule: amount
  ``100 + n % 900`` and ``n % 100`` cents, reference ``ref-<n>``; kind ``s`` settled (state 6),
  ``m`` settled one cent above the stored amount, ``f`` failed (3), ``a`` aborted (2), ``p``
  pending (1), ``u`` not found (404, as the sandbox answers an id it does not know).

``--fast`` serves the same answers from ``aiohttp.web`` instead (its C HTTP parser, one event
loop): not a stand-in for the CPU-hungry provider but the quick answerer of the steady-state
nights, whose polling time is not what they measure and whose generated ids the sandbox does not
know.

Usage: ``python bench/standin.py PORT [--answers FILE] [--fast] [--latency-ms MS]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from recon.sandbox.config import DEFAULT_PUBLIC_KEY, DEFAULT_SECRET

GENERATED = re.compile(r"tx(\d+)([smfapu])")
_STATE = {"s": 6, "m": 6, "f": 3, "a": 2, "p": 1}
_ACCOUNT = {
    "bank_name": "Sandbox Test Bank",
    "bban": "**************3000",
    "country_id": "de",
    "iban": "DE****************3000",
}


def generated_amount(n: int) -> Decimal:
    """The amount of generated payout ``n`` (the store holds the same, in minor units)."""
    return Decimal(100 + n % 900) + Decimal(n % 100) / 100


def generated_answer(transaction_id: str) -> tuple[int, bytes]:
    """The status and body the sandbox would send about a generated id."""
    match = GENERATED.fullmatch(transaction_id)
    if match is None or match.group(2) == "u":
        body = {
            "error_name": "transaction_not_found",
            "error_message": f"no transaction with id {transaction_id!r}",
        }
        return 404, json.dumps(body, separators=(",", ":")).encode()
    n, kind = int(match.group(1)), match.group(2)
    amount = generated_amount(n) + (Decimal("0.01") if kind == "m" else 0)
    state = _STATE[kind]
    created = 1_700_000_000 + n % 86_400
    done = created + 60 if state == 6 else None
    body: dict[str, Any] = {
        "id": transaction_id,
        "type": 1,
        "state": state,
        "amount": amount,
        "currency_id": "eur",
        "merchant_id": "sandbox-merchant",
        "merchant_reference": f"ref-{n}",
        "customer_id": None,
        "created": created,
        "completed": done,
        "credited": None,
        "settled": done,
        "eta": created + 86_400,
        "error_code": "bank_rejected_transaction" if state == 2 else None,
        "message": None,
        "statement_reference": None,
        "related_transaction_id": None,
        "to_bank_account_id": "5OKiqQRherS3f_PUO8W8",
        "to_bank_account": _ACCOUNT,
        "country_id": "de",
    }
    return 200, json.dumps(body, separators=(",", ":"), default=str).encode().replace(
        f'"amount":"{amount}"'.encode(), f'"amount":{amount}'.encode()
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the sandbox offers
    answers: ClassVar[dict[str, bytes]] = {}
    latency_s = 0.0  # before each transaction.get answer, as the sandbox's latency fault

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no line per request on stderr."""

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        """``/api/merchant.authorize`` and ``/api/transaction.get``; anything else is 404."""
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path == "/api/merchant.authorize":
            if request.get("public_key") != DEFAULT_PUBLIC_KEY:
                self._send(401, b'{"error_name":"invalid_credentials","error_message":"no"}')
                return
            self._send(200, _authorized())
        elif self.path == "/api/transaction.get":
            transaction_id = str(request.get("id", ""))
            if self.latency_s:
                time.sleep(self.latency_s)
            known = self.answers.get(transaction_id)
            if known is not None:
                self._send(200, known)
            else:
                self._send(*generated_answer(transaction_id))
        else:
            self._send(404, b'{"error_name":"not_found","error_message":"no such operation"}')


def _authorized() -> bytes:
    token = {
        "access_token": "standin-token",
        "expires": time.time() + 6 * 3600,
        "refresh_token": "standin-refresh",
    }
    return json.dumps(token).encode()


def _serve_fast(port: int) -> None:
    from aiohttp import web

    async def authorize(request: web.Request) -> web.Response:
        return web.Response(body=_authorized(), content_type="application/json")

    async def get(request: web.Request) -> web.Response:
        transaction_id = str(json.loads(await request.read()).get("id", ""))
        known = _Handler.answers.get(transaction_id)
        status, body = (200, known) if known is not None else generated_answer(transaction_id)
        return web.Response(status=status, body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/api/merchant.authorize", authorize)
    app.router.add_post("/api/transaction.get", get)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def serve(
    port: int, answers_file: Path | None, *, fast: bool = False, latency_ms: float = 0.0
) -> None:
    """Serve on loopback ``port`` until killed (``latency_ms``: http.server only)."""
    _Handler.latency_s = latency_ms / 1000
    if answers_file is not None:
        for line in answers_file.read_bytes().splitlines():
            if line.strip():
                _Handler.answers[json.loads(line)["id"]] = line
    if fast:
        _serve_fast(port)
        return
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    server.serve_forever()


async def _capture(base_url: str, ids: list[str]) -> list[bytes]:
    import aiohttp

    credentials = {"public_key": DEFAULT_PUBLIC_KEY, "secret": DEFAULT_SECRET}
    async with aiohttp.ClientSession(base_url) as session:
        async with session.post("/api/merchant.authorize", json=credentials) as answer:
            token = (await answer.json())["access_token"]
        headers = {"authorization": f"Bearer {token}"}
        bodies: list[bytes] = []
        todo = iter(ids)

        async def worker() -> None:
            for transaction_id in todo:
                async with session.post(
                    "/api/transaction.get", json={"id": transaction_id}, headers=headers
                ) as answer:
                    bodies.append((await answer.read()).strip())

        await asyncio.gather(*(worker() for _ in range(20)))
    return bodies


def capture(base_url: str, ids_file: Path, out: Path) -> None:
    """Ask the sandbox once about every id of ``ids_file``; its answers, one a line, to ``out``."""
    bodies = asyncio.run(_capture(base_url, ids_file.read_text().split()))
    out.write_bytes(b"\n".join(bodies) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--answers", type=Path)
    parser.add_argument("--fast", action="store_true", help="aiohttp.web instead of http.server")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    serve(args.port, args.answers, fast=args.fast, latency_ms=args.latency_ms)


if __name__ == "__main__":
    main()
