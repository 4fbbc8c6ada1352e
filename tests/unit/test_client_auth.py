"""The provider client's token: one per client, renewed near expiry or when rejected."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from recon.errors import AuthorizeFailed, ProviderAuthError, TransactionNotFound
from tests.unit.provider_fake import FakeProvider, json_answer, make_client

pytestmark = pytest.mark.usefixtures("no_retry_waits")


class Clock:
    """A settable epoch clock shared by the fake provider and the client."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.anyio
async def test_fifty_concurrent_first_calls_share_one_authorization() -> None:
    """However many requests start at once, the client authorizes once."""
    fake = FakeProvider()
    async with make_client(fake, concurrency=50) as client:
        await asyncio.gather(*(client.get_transaction(f"tx-{i}") for i in range(50)))
    assert len(fake.calls("merchant.authorize")) == 1
    assert len(fake.calls("transaction.get")) == 50


@pytest.mark.anyio
async def test_a_token_within_the_refresh_margin_is_renewed_before_the_call() -> None:
    """Near expiry the client authorizes again instead of sending a token about to lapse."""
    clock = Clock()
    fake = FakeProvider(token_lifetime=3600, now=clock)
    async with make_client(fake, clock=clock, token_refresh_margin=300) as client:
        await client.get_transaction("tx-1")
        clock.now += 3600 - 301
        await client.get_transaction("tx-2")
        assert len(fake.calls("merchant.authorize")) == 1
        clock.now += 2
        await client.get_transaction("tx-3")
    assert len(fake.calls("merchant.authorize")) == 2
    assert fake.calls("transaction.get")[-1].headers["authorization"] == "Bearer tok-2-a9c3e77b"


@pytest.mark.anyio
async def test_a_token_shorter_lived_than_the_margin_is_not_renewed_on_every_call() -> None:
    """A 60-second token with a 300-second margin is used for its first half, not thrown away."""
    clock = Clock()
    fake = FakeProvider(token_lifetime=60, now=clock)
    async with make_client(fake, clock=clock, token_refresh_margin=300) as client:
        for _ in range(5):
            await client.get_transaction("tx-1")
        assert len(fake.calls("merchant.authorize")) == 1
        clock.now += 31
        await client.get_transaction("tx-1")
    assert len(fake.calls("merchant.authorize")) == 2


@pytest.mark.anyio
async def test_a_rejected_token_is_replaced_and_the_call_retried_once() -> None:
    """A 401 on a call makes the client authorize again and repeat that call."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        await client.get_transaction("tx-1")
        fake.revoke_all()
        transaction = await client.get_transaction("tx-2")
    assert transaction.id == "tx-2"
    assert len(fake.calls("merchant.authorize")) == 2
    assert [r.headers["authorization"] for r in fake.calls("transaction.get")] == [
        "Bearer tok-1-a9c3e77b",
        "Bearer tok-1-a9c3e77b",
        "Bearer tok-2-a9c3e77b",
    ]


@pytest.mark.anyio
async def test_a_second_401_for_the_same_call_is_an_auth_error() -> None:
    """If the fresh token is refused too, the call fails with ProviderAuthError."""
    fake = FakeProvider()
    refused = json_answer(401, {"error_name": "unauthorized", "error_message": "no"})
    fake.queue("transaction.get", refused, refused)
    async with make_client(fake) as client:
        with pytest.raises(ProviderAuthError) as caught:
            await client.get_transaction("tx-1")
    assert caught.value.status == 401
    assert len(fake.calls("transaction.get")) == 2
    assert len(fake.calls("merchant.authorize")) == 2


@pytest.mark.anyio
async def test_many_calls_rejected_together_share_one_new_authorization() -> None:
    """When the token is dropped under 20 concurrent calls, one re-authorization serves all."""
    fake = FakeProvider()
    async with make_client(fake, concurrency=20) as client:
        await client.get_transaction("tx-0")
        fake.revoke_all()
        await asyncio.gather(*(client.get_transaction(f"tx-{i}") for i in range(20)))
    assert len(fake.calls("merchant.authorize")) == 2


@pytest.mark.anyio
async def test_wrong_credentials_fail_authorize_without_retrying() -> None:
    """A 401 from merchant.authorize is final: retrying a wrong secret cannot help."""
    fake = FakeProvider()
    fake.queue("merchant.authorize", json_answer(401, {"error_name": "unauthorized"}))
    async with make_client(fake) as client:
        with pytest.raises(ProviderAuthError):
            await client.get_transaction("tx-1")
    assert len(fake.requests) == 1


@pytest.mark.anyio
async def test_a_403_is_an_auth_error_without_reauthorizing() -> None:
    """403 means the token is valid but not allowed: authorizing again would not change that."""
    fake = FakeProvider()
    fake.queue("transaction.get", json_answer(403, {"error_name": "forbidden"}))
    async with make_client(fake) as client:
        with pytest.raises(ProviderAuthError) as caught:
            await client.get_transaction("tx-1")
    assert caught.value.status == 403
    assert len(fake.calls("merchant.authorize")) == 1


@pytest.mark.anyio
async def test_authorize_can_be_called_explicitly_for_a_new_token() -> None:
    """authorize() obtains a fresh token that the next call uses."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        await client.authorize()
        await client.authorize()
        await client.get_transaction("tx-1")
    assert fake.calls("transaction.get")[0].headers["authorization"] == "Bearer tok-2-a9c3e77b"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answers",
    [
        pytest.param([json_answer(404, {"error_name": "not_found"})], id="404"),
        pytest.param(
            [json_answer(400, {"error_name": "transaction_not_found"})], id="not-found-name"
        ),
        pytest.param([json_answer(503, "down\nfor maintenance")] * 4, id="5xx-after-retries"),
        pytest.param([json_answer(200, "<html>login</html>")], id="not-json"),
        pytest.param([json_answer(200, {"token": "t"})], id="no-access-token"),
        pytest.param([httpx.ConnectError("refused")] * 4, id="unreachable"),
    ],
)
async def test_any_authorize_failure_is_authorize_failed_never_a_payout_finding(
    answers: list[httpx.Response | Exception],
) -> None:
    """A 404 (wrong base URL or prefix), a 5xx after retries, a malformed answer or no
    connection from merchant.authorize is AuthorizeFailed with a one-line message, never
    TransactionNotFound or another per-payout error."""
    fake = FakeProvider()
    fake.queue("merchant.authorize", *answers)
    async with make_client(fake, retry_attempts=4) as client:
        with pytest.raises(AuthorizeFailed) as caught:
            await client.get_transaction("tx-1")
    message = str(caught.value)
    assert message.startswith("merchant.authorize")
    assert "\n" not in message
    assert not isinstance(caught.value, TransactionNotFound)
    assert fake.calls("transaction.get") == []


@pytest.mark.anyio
async def test_refused_keys_stay_an_auth_error_with_a_one_line_message() -> None:
    """A 401 from merchant.authorize is ProviderAuthError (the run stops), in one line."""
    fake = FakeProvider()
    fake.queue(
        "merchant.authorize",
        json_answer(401, {"error_name": "unauthorized", "error_message": "bad\r\nkey"}),
    )
    async with make_client(fake) as client:
        with pytest.raises(ProviderAuthError) as caught:
            await client.get_transaction("tx-1")
    assert "\n" not in str(caught.value)
    assert "\r" not in str(caught.value)
