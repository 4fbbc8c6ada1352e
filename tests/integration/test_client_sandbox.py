"""The provider client against the sandbox: in-process (ASGITransport) and over a loopback socket.

The loopback variant uses the client's default transport (aiohttp's pool), so the wire, the pool and
the exception mapping are exercised for real. A second part serves deliberately broken answers on
loopback to check what a timed-out or dropped create call becomes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest

from recon.constants import TxState, TxType
from recon.errors import (
    AuthorizeFailed,
    ProviderAuthError,
    ProviderTimeout,
    ReferenceConflict,
    TransactionNotFound,
    UnknownOutcome,
)
from recon.jsonparse import loads
from recon.provider.client import ProviderClient
from recon.provider.models import (
    BankAccountCreateRequest,
    BankAccountSelectionRequest,
    CallbackSubscription,
    WithdrawalRequest,
)
from recon.sandbox.app import create_app
from recon.sandbox.config import DEFAULT_PUBLIC_KEY, DEFAULT_SECRET, SandboxConfig
from recon.sandbox.engine import Sandbox
from recon.serving import serve_in_thread
from recon.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_retry_waits")]

IBAN_DE = "DE89370400440532013000"


@dataclass
class Rig:
    """A client on a sandbox, and an unauthenticated client for the sandbox's admin routes."""

    client: ProviderClient
    admin: httpx.AsyncClient
    base_url: str
    transport: httpx.AsyncBaseTransport | None  # None: the client's default (aiohttp) transport

    def new_client(self, **options: Any) -> ProviderClient:
        """Another client on the same sandbox (``secret=`` to try other credentials)."""
        secret = options.pop("secret", DEFAULT_SECRET)
        return ProviderClient(
            self.base_url, DEFAULT_PUBLIC_KEY, secret, transport=self.transport, **options
        )

    async def advance(self, seconds: float) -> None:
        """Move the sandbox clock forward and let it process what became due."""
        answer = await self.admin.post("/sandbox/clock/advance", json={"seconds": seconds})
        assert answer.status_code == 200, answer.text

    async def faults(self, **changes: Any) -> None:
        """Switch on sandbox fault injection."""
        answer = await self.admin.post("/sandbox/faults", json=changes)
        assert answer.status_code == 200, answer.text

    async def choose(self, session_id: str, scenario: str) -> None:
        """The customer picks a scenario on the hosted page."""
        answer = await self.admin.post(f"/hosted/{session_id}", data={"scenario": scenario})
        assert answer.status_code in (200, 303), answer.text

    async def account(self) -> str:
        created = await self.client.create_bank_account(
            BankAccountCreateRequest(country_id="de", iban=IBAN_DE, holder_firstname="Ada")
        )
        return created.id

    async def payout(self, amount: str, reference: str | None = None) -> str:
        request = WithdrawalRequest(
            amount=Decimal(amount),
            bank_account_id=await self.account(),
            merchant_reference=reference or f"ref-{amount}-{time.monotonic_ns()}",
            callbacks=[CallbackSubscription(url="http://merchant.test/cb", transaction_state=6)],
        )
        return (await self.client.create_withdrawal(request)).id


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture(params=["in_process", "loopback"])
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    """A ProviderClient from settings on a fresh sandbox, in-process or over a real socket."""
    if request.param == "in_process":
        app = create_app(SandboxConfig())
        sandbox: Sandbox = app.state.sandbox
        settings = Settings(api_base_url="http://sandbox.test")
        transport = httpx.ASGITransport(app=app)
        async with (
            ProviderClient.from_settings(settings, transport=transport) as client,
            httpx.AsyncClient(transport=transport, base_url="http://sandbox.test") as admin,
        ):
            yield Rig(client, admin, "http://sandbox.test", transport)
        await sandbox.aclose()
        return
    with serve_in_thread(create_app(SandboxConfig())) as url:
        settings = Settings(api_base_url=url, concurrency=16)
        async with (
            ProviderClient.from_settings(settings) as client,
            httpx.AsyncClient(base_url=url) as admin,
        ):
            yield Rig(client, admin, url, None)


# --- operations ----------------------------------------------------------------------------------


async def test_an_ordinary_payout_is_completed_then_settled(rig: Rig) -> None:
    """Authorize, create an account and a payout, read it, advance the clock, read it settled."""
    tx_id = await rig.payout("10.00")
    first, raw = await rig.client.get_transaction_raw(tx_id)
    assert first.state == TxState.COMPLETED
    assert first.type == TxType.PAYOUT
    assert first.amount == Decimal("10.00")
    assert loads(raw)["amount"] == Decimal("10.00")
    assert first.currency_id == "EUR"
    await rig.advance(61)
    settled = await rig.client.get_transaction(tx_id)
    assert settled.state == TxState.SETTLED
    assert settled.settled is not None
    assert rig.client.stats.authorizations == 1


async def test_a_bank_account_selection_session_ends_with_the_chosen_account(rig: Rig) -> None:
    """Create a session, pick an account on the hosted page, read the account id."""
    created = await rig.client.create_bank_account_selection(
        BankAccountSelectionRequest(country_id="fi", merchant_reference="sess-1")
    )
    assert created.url is not None
    assert created.url.endswith(f"/hosted/{created.id}")
    assert created.token
    pending = await rig.client.get_session(created.id)
    assert pending.bank_account_id is None
    await rig.choose(created.id, "select_account")
    session = await rig.client.get_session(created.id)
    assert session.state == 12
    assert session.bank_account_id is not None
    assert session.country_id == "FI"


async def test_a_failed_session_reports_its_error_code(rig: Rig) -> None:
    """The 'no funds' scenario ends the session with its error code."""
    created = await rig.client.create_bank_account_selection(BankAccountSelectionRequest())
    await rig.choose(created.id, "no_funds")
    session = await rig.client.get_session(created.id)
    assert session.state in (10, 11)
    assert session.error_code == "psu_insufficient_funds_all_accounts"


# --- the magic amounts of 7.3 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "state", "error_code"),
    [
        ("11.01", TxState.ABORTED, "bank_rejected_transaction"),
        ("11.02", TxState.ABORTED, "invalid_recipient_account"),
        ("12.01", TxState.FAILED, None),
    ],
)
async def test_the_failing_sandbox_amounts_end_as_documented(
    rig: Rig, amount: str, state: TxState, error_code: str | None
) -> None:
    """11.01 and 11.02 abort with their codes; 12.01 fails without one."""
    tx_id = await rig.payout(amount)
    transaction = await rig.client.get_transaction(tx_id)
    assert transaction.state == state
    assert transaction.error_code == error_code
    await rig.advance(3600)
    assert (await rig.client.get_transaction(tx_id)).state == state


async def test_13_01_stays_completed_and_delayed_for_five_minutes_then_settles(rig: Rig) -> None:
    """The delayed payout carries transaction_is_delayed_in_bank until it settles."""
    tx_id = await rig.payout("13.01")
    delayed = await rig.client.get_transaction(tx_id)
    assert delayed.state == TxState.COMPLETED
    assert delayed.error_code == "transaction_is_delayed_in_bank"
    await rig.advance(290)
    assert (await rig.client.get_transaction(tx_id)).state == TxState.COMPLETED
    await rig.advance(20)
    settled = await rig.client.get_transaction(tx_id)
    assert settled.state == TxState.SETTLED
    assert settled.error_code is None


async def test_14_01_settles_and_a_minute_later_is_returned(rig: Rig) -> None:
    """A type-13 transaction appears, linked to the payout, for the same amount."""
    tx_id = await rig.payout("14.01")
    await rig.advance(61)
    payout = await rig.client.get_transaction(tx_id)
    assert payout.state == TxState.SETTLED
    assert payout.related_transaction_id is None
    await rig.advance(61)
    payout = await rig.client.get_transaction(tx_id)
    assert payout.related_transaction_id is not None
    returned = await rig.client.get_transaction(payout.related_transaction_id)
    assert returned.type == TxType.RETURNED_FUNDS
    assert returned.related_transaction_id == tx_id
    assert returned.amount == Decimal("14.01")


# --- tokens, idempotency, errors -----------------------------------------------------------------


async def test_an_expired_token_is_replaced_and_the_call_succeeds(rig: Rig) -> None:
    """After the sandbox clock passes the token's expiry, the 401 leads to a new authorization."""
    tx_id = await rig.payout("10.00")
    await rig.advance(7 * 3600)
    assert (await rig.client.get_transaction(tx_id)).id == tx_id
    assert rig.client.stats.authorizations == 2


async def test_repeating_a_reference_with_the_same_amount_returns_the_original(rig: Rig) -> None:
    """Interface 4.6.1: same merchant_reference and amount -> the original transaction id."""
    account = await rig.account()
    request = WithdrawalRequest(
        amount=Decimal("20.00"), bank_account_id=account, merchant_reference="idem-1"
    )
    first = await rig.client.create_withdrawal(request)
    again = await rig.client.create_withdrawal(request)
    assert again.id == first.id


async def test_reusing_a_reference_with_another_amount_is_a_reference_conflict(rig: Rig) -> None:
    """Interface 4.6.1: same merchant_reference, different amount -> ReferenceConflict."""
    account = await rig.account()
    first = WithdrawalRequest(
        amount=Decimal("20.00"), bank_account_id=account, merchant_reference="r"
    )
    await rig.client.create_withdrawal(first)
    other_amount = first.model_copy(update={"amount": Decimal("20.01")})
    with pytest.raises(ReferenceConflict) as caught:
        await rig.client.create_withdrawal(other_amount)
    assert caught.value.error_name == "merchant_reference_conflict"


async def test_an_unknown_transaction_is_transaction_not_found(rig: Rig) -> None:
    """The sandbox's 404 transaction_not_found becomes TransactionNotFound."""
    with pytest.raises(TransactionNotFound):
        await rig.client.get_transaction("no-such-transaction")


async def test_wrong_credentials_are_an_auth_error(rig: Rig) -> None:
    """A wrong secret is refused at authorize and never retried."""
    async with rig.new_client(secret="not-the-secret") as wrong:
        with pytest.raises(ProviderAuthError) as caught:
            await wrong.get_transaction("tx")
    assert "not-the-secret" not in str(caught.value)
    assert wrong.stats.requests == 1


async def test_injected_server_errors_and_rate_limits_are_ridden_out(rig: Rig) -> None:
    """With a share of 5xx and 429 answers, reads still succeed through retries."""
    ids = [await rig.payout("10.00") for _ in range(3)]
    await rig.faults(error_rate=0.2, rate_429=0.2, retry_after_seconds=0, seed=3)
    async with rig.new_client(retry_attempts=12) as client:
        results = await asyncio.gather(*(client.get_transaction(ids[i % 3]) for i in range(40)))
    assert {r.id for r in results} == set(ids)
    assert client.stats.server_errors > 0
    assert client.stats.rate_limited > 0


async def test_fifty_concurrent_reads_share_one_token(rig: Rig) -> None:
    """Fifty reads at once after a cold start: one authorization, fifty answers."""
    tx_id = await rig.payout("10.00")
    async with rig.new_client(concurrency=50) as fresh:
        results = await asyncio.gather(*(fresh.get_transaction(tx_id) for _ in range(50)))
    assert len(results) == 50
    assert fresh.stats.authorizations == 1


# --- broken answers on a real socket -------------------------------------------------------------


class BrokenProvider:
    """A raw HTTP/1.1 server on loopback: authorize works, other operations misbehave."""

    def __init__(self, mode: str) -> None:
        self.mode = mode  # "hang" (read, never answer) or "drop" (read, close)
        self.received: list[str] = []
        self.writers: list[asyncio.StreamWriter] = []
        self.stop = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                await reader.readexactly(length)
                path = head.split(b" ", 2)[1].decode()
                self.received.append(path)
                if path.endswith("merchant.authorize"):
                    body = b'{"access_token": "tok", "expires": 9999999999}'
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        + f"content-length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
                    await writer.drain()
                elif self.mode == "hang":
                    await self.stop.wait()
                    return
                else:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    async def aclose(self) -> None:
        """End every connection (asyncio's server.close() leaves them open)."""
        self.stop.set()
        for writer in self.writers:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def broken_provider(mode: str) -> AsyncIterator[tuple[str, BrokenProvider]]:
    provider = BrokenProvider(mode)
    server = await asyncio.start_server(provider.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", provider
    finally:
        await provider.aclose()
        server.close()
        await server.wait_closed()


WITHDRAWAL = WithdrawalRequest(amount=Decimal("5.00"), bank_account_id="b", merchant_reference="r")


@pytest.mark.parametrize("mode", ["hang", "drop"])
async def test_a_create_that_reached_the_provider_unanswered_is_an_unknown_outcome(
    mode: str,
) -> None:
    """Over a real socket, a hung or dropped create is sent once and reported as unknown."""
    async with broken_provider(mode) as (url, provider):
        client = ProviderClient(url, "pk", "secret-xyz", read_timeout=0.3)
        async with client:
            with pytest.raises(UnknownOutcome) as caught:
                await client.create_withdrawal(WITHDRAWAL)
    assert provider.received.count("/api/transaction.create_withdrawal") == 1
    assert "secret-xyz" not in str(caught.value)


async def test_a_read_that_times_out_is_retried_then_a_provider_timeout() -> None:
    """Over a real socket, an unanswered read is retried and ends as ProviderTimeout."""
    async with (
        broken_provider("hang") as (url, provider),
        ProviderClient(url, "pk", "s", read_timeout=0.2, retry_attempts=2) as client,
    ):
        with pytest.raises(ProviderTimeout):
            await client.get_transaction("tx-1")
    assert provider.received.count("/api/transaction.get") == 2


async def test_a_refused_connection_is_a_connection_error_even_for_a_create() -> None:
    """Nothing listening: the create provably never left (no token could even be asked for), so
    it is no unknown outcome but AuthorizeFailed after the connection errors."""
    sock = _free_socket()
    port = sock.getsockname()[1]
    sock.close()
    async with ProviderClient(f"http://127.0.0.1:{port}", "pk", "s", retry_attempts=2) as client:
        with pytest.raises(AuthorizeFailed) as caught:
            await client.create_withdrawal(WITHDRAWAL)
    assert "connection failed" in str(caught.value)
    assert client.stats.requests == 2
