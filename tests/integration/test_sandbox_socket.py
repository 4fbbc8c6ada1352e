"""The sandbox served by uvicorn on a real loopback socket, with its real-time background task."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import anyio
import httpx
import pytest

from recon import jsonparse
from recon.provider.models import Transaction
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig
from recon.serving import serve_in_thread
from tests.integration.sandbox_support import CALLBACK_URL, CREDENTIALS, IBANS, Receiver


@pytest.fixture
def receiver() -> Receiver:
    return Receiver()


@pytest.fixture
def base_url(receiver: Receiver) -> Iterator[str]:
    """A sandbox on 127.0.0.1 and a free port, served by uvicorn in a thread."""
    config = SandboxConfig(
        callback_transport=httpx.ASGITransport(app=receiver.app()),
        settle_after_seconds=0.3,
        background_interval_seconds=0.05,
    )
    with serve_in_thread(create_app(config)) as url:
        yield url


@pytest.mark.anyio
async def test_a_payout_settles_in_real_time_over_loopback(
    base_url: str, receiver: Receiver
) -> None:
    """Over TCP: authorize, pay out, and the background task settles it and calls back."""
    async with httpx.AsyncClient(base_url=base_url) as client:
        token = (await client.post("/api/merchant.authorize", json=CREDENTIALS)).json()
        headers = {"authorization": f"Bearer {token['access_token']}"}
        account = await client.post(
            "/bank_account.create", json={"country_id": "FI", "iban": IBANS["FI"]}, headers=headers
        )
        body = {
            "amount": Decimal("11.01") + Decimal("88.99"),
            "bank_account_id": account.json()["id"],
            "merchant_reference": "socket-1",
            "callbacks": [{"url": CALLBACK_URL, "transaction_state": s} for s in (4, 6)],
        }
        created = await client.post(
            "/api/transaction.create_withdrawal", content=jsonparse.dumpb(body), headers=headers
        )
        assert created.status_code == 200, created.text
        tx_id = created.json()["id"]

        with anyio.fail_after(5):
            # The receiver runs on the server's thread and loop: poll rather than share an Event.
            while len(receiver.received) < 2:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        answer = await client.post("/api/transaction.get", json={"id": tx_id}, headers=headers)
        record = Transaction.model_validate(jsonparse.loads(answer.content))
        assert (record.state, record.amount, record.currency_id) == (6, Decimal("100.00"), "EUR")
        assert '"amount":100.00,' in answer.text
        assert [r.body["transaction_state"] for r in receiver.received] == [4, 6]


@pytest.mark.anyio
async def test_the_clock_can_be_advanced_over_loopback(base_url: str) -> None:
    """POST /sandbox/clock/advance moves GET /sandbox/clock forward by at least that much."""
    async with httpx.AsyncClient(base_url=base_url) as client:
        before = jsonparse.loads((await client.get("/sandbox/clock")).content)["now"]
        advanced = await client.post("/sandbox/clock/advance", json={"seconds": 3600})
        assert advanced.status_code == 200
        after = jsonparse.loads((await client.get("/sandbox/clock")).content)["now"]
        assert after - before >= 3600
