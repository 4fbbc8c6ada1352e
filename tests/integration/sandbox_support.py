"""Helpers for the sandbox tests: raw httpx calls to the app and an in-process callback receiver."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from recon import jsonparse
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig
from recon.sandbox.engine import Sandbox

CREDENTIALS = {"public_key": "sandbox-public-key", "secret": "sandbox-secret"}
CALLBACK_URL = "http://merchant.test/callbacks?shop=7"
RETURNS_URL = "http://merchant.test/returns"
IBANS = {
    "DE": "DE89370400440532013000",
    "SE": "SE4550000000058398257466",
    "FI": "FI2112345600000785",
    "DK": "DK5000400440116243",
    "NO": "NO9386011117947",
    "GB": "GB29NWBK60161331926819",
    "PL": "PL61109010140000071219812874",
    "FR": "FR1420041010050500013M02606",
    "CH": "CH9300762011623852957",
}


@dataclass
class Received:
    """One request the merchant's receiver got."""

    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class Receiver:
    """A merchant's callback receiver: answers the next queued status (200 when none)."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)

    def app(self) -> Starlette:
        async def receive(request: Request) -> Response:
            self.received.append(
                Received(
                    request.url.path,
                    request.url.query,
                    dict(request.headers),
                    jsonparse.loads(await request.body()),
                )
            )
            return Response(status_code=self.statuses.pop(0) if self.statuses else 200)

        return Starlette(routes=[Route("/{path:path}", receive, methods=["POST"])])


class Api:
    """Raw HTTP calls to a sandbox, as a merchant would make them."""

    def __init__(self, client: httpx.AsyncClient, sandbox: Sandbox) -> None:
        self.client = client
        self.sandbox = sandbox
        self.token = ""

    async def authorize(self) -> str:
        response = await self.client.post("/api/merchant.authorize", json=CREDENTIALS)
        assert response.status_code == 200, response.text
        self.token = response.json()["access_token"]
        return self.token

    async def call(
        self, op: str, body: Any, token: str | None = None, prefix: str = "/api/"
    ) -> httpx.Response:
        headers = {"content-type": "application/json"}
        bearer = self.token if token is None else token
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"
        return await self.client.post(prefix + op, content=jsonparse.dumpb(body), headers=headers)

    async def ok(self, op: str, body: Any) -> Any:
        response = await self.call(op, body)
        assert response.status_code == 200, response.text
        return jsonparse.loads(response.content)

    async def account(self, country: str = "DE") -> str:
        created = await self.ok(
            "bank_account.create", {"country_id": country, "iban": IBANS[country]}
        )
        account_id: str = created["id"]
        return account_id

    async def payout(self, amount: str, country: str = "DE", **extra: Any) -> dict[str, Any]:
        body = {
            "amount": Decimal(amount),
            "bank_account_id": await self.account(country),
            "merchant_reference": extra.pop("merchant_reference", f"ref-{amount}-{country}"),
            **extra,
        }
        created: dict[str, Any] = await self.ok("transaction.create_withdrawal", body)
        return created

    async def tx(self, tx_id: str) -> dict[str, Any]:
        record: dict[str, Any] = await self.ok("transaction.get", {"id": tx_id})
        return record

    async def advance(self, seconds: float) -> None:
        response = await self.client.post("/sandbox/clock/advance", json={"seconds": seconds})
        assert response.status_code == 200, response.text

    async def deliveries(self) -> list[dict[str, Any]]:
        response = await self.client.get("/sandbox/deliveries")
        found: list[dict[str, Any]] = jsonparse.loads(response.content)["deliveries"]
        return found


@contextlib.asynccontextmanager
async def sandbox_api(
    config: SandboxConfig | None = None, receiver: Receiver | None = None
) -> AsyncIterator[Api]:
    """An authorized :class:`Api` on a fresh in-process sandbox (callbacks go to ``receiver``)."""
    config = config or SandboxConfig()
    if receiver is not None:
        config = config.model_copy(
            update={"callback_transport": httpx.ASGITransport(app=receiver.app())}
        )
    app = create_app(config)
    sandbox: Sandbox = app.state.sandbox
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test") as client:
        api = Api(client, sandbox)
        await api.authorize()
        try:
            yield api
        finally:
            await sandbox.aclose()
