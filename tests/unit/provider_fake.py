"""A scripted provider at the HTTP boundary (``httpx.MockTransport``) for the client's unit tests.

It issues tokens on ``merchant.authorize``, refuses unknown bearer tokens with 401 and answers every
operation with a documented body; tests queue odd answers (a status, a body, or a transport
exception) for one operation at a time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from recon.provider.client import ProviderClient

PUBLIC_KEY = "pk-test"
SECRET = "s3cr3t-Do-Not-Leak-7f1e"
BASE_URL = "http://provider.test"

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def json_answer(status: int, body: Any, **headers: str) -> httpx.Response:
    """An answer with a JSON body (``body`` may be pre-encoded text, to keep exact numbers)."""
    text = body if isinstance(body, str) else json.dumps(body)
    return httpx.Response(
        status, content=text.encode(), headers={"content-type": "application/json", **headers}
    )


TRANSACTION_TEXT = (
    '{"id": "tx-1", "state": "STATE_SETTLED", "type": 1, "amount": 11.01, "currency_id": "eur",'
    ' "merchant_reference": "ref-1", "settled": 1741903012.0, "surprise": {"kept": true}}'
)


class FakeProvider:
    """The provider's documented answers, plus queued odd ones. Records every request."""

    def __init__(self, token_lifetime: float = 6 * 3600, now: Callable[[], float] = time.time):
        self.token_lifetime = token_lifetime
        self.now = now
        self.requests: list[httpx.Request] = []
        self.tokens: list[str] = []
        self.valid: set[str] = set()
        self.queued: dict[str, list[Answer]] = {}
        self.arrivals: list[tuple[str, float]] = []

    def queue(self, operation: str, *answers: Answer) -> None:
        """Answer the next calls of ``operation`` with ``answers``, in order, then normally."""
        self.queued.setdefault(operation, []).extend(answers)

    def calls(self, operation: str) -> list[httpx.Request]:
        """The requests received for one operation."""
        return [r for r in self.requests if r.url.path.endswith(f"/api/{operation}")]

    def body(self, request: httpx.Request) -> Any:
        """The JSON body of a recorded request."""
        return json.loads(request.content)

    def revoke_all(self) -> None:
        """Forget every issued token (the provider expired them early)."""
        self.valid.clear()

    def transport(self) -> httpx.MockTransport:
        """A transport answering as this fake."""
        return httpx.MockTransport(self._handle)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)  # let concurrent callers interleave, as on a real network
        self.requests.append(request)
        operation = request.url.path.rpartition("/api/")[2]
        self.arrivals.append((operation, time.monotonic()))
        pending = self.queued.get(operation)
        if pending:
            answer = pending.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer if isinstance(answer, httpx.Response) else answer(request)
        return self.documented(operation, request)

    def documented(self, operation: str, request: httpx.Request) -> httpx.Response:
        """The documented answer to ``request`` (what the fake sends when nothing is queued)."""
        body = json.loads(request.content)
        if operation == "merchant.authorize":
            if body != {"public_key": PUBLIC_KEY, "secret": SECRET}:
                return json_answer(401, {"error_name": "unauthorized", "error_message": "bad key"})
            token = f"tok-{len(self.tokens) + 1}-a9c3e77b"
            self.tokens.append(token)
            self.valid.add(token)
            return json_answer(
                200,
                {
                    "access_token": token,
                    "expires": self.now() + self.token_lifetime,
                    "refresh_token": f"refresh-{token}",
                },
            )
        auth = request.headers.get("authorization", "")
        if auth.removeprefix("Bearer ") not in self.valid:
            return json_answer(401, {"error_name": "unauthorized", "error_message": "bad token"})
        answers: dict[str, Callable[[], httpx.Response]] = {
            "transaction.get": lambda: json_answer(
                200, TRANSACTION_TEXT.replace('"tx-1"', json.dumps(body["id"]))
            ),
            "transaction.create_withdrawal": lambda: json_answer(
                200, {"id": "tx-new", "eta": 1741903012}
            ),
            "session.create_bank_account_selection": lambda: json_answer(
                200, {"id": "sess-1", "url": "https://provider.test/s/1", "token": "embed-1"}
            ),
            "session.get": lambda: json_answer(
                200,
                {
                    "id": body["id"],
                    "state": "12",
                    "country_id": "se",
                    "bank_account_id": "ba-1",
                    "bank_account": {"id": "ba-1", "iban": "SE** **** 1234"},
                },
            ),
            "bank_account.create": lambda: json_answer(200, {"id": "ba-2"}),
        }
        if operation not in answers:
            return json_answer(404, {"error_name": "not_found"})
        return answers[operation]()


def make_client(fake: FakeProvider, **options: Any) -> ProviderClient:
    """A client on ``fake``'s transport with the test credentials."""
    options.setdefault("not_found_error_names", ["transaction_not_found", "not_found"])
    return ProviderClient(BASE_URL, PUBLIC_KEY, SECRET, transport=fake.transport(), **options)
