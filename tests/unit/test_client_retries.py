"""The provider client's retries, create-call safety, and shared pacing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from recon import retry
from recon.errors import (
    ProviderConnectionError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    UnknownOutcome,
)
from recon.provider.models import WithdrawalRequest
from tests.unit.provider_fake import FakeProvider, json_answer, make_client

WITHDRAWAL = WithdrawalRequest(
    amount=Decimal("25.00"), bank_account_id="ba-1", merchant_reference="ref-77"
)


@pytest.fixture
def no_waiting() -> Iterator[None]:
    retry.set_testing(True)
    yield
    retry.set_testing(False)


def server_error() -> httpx.Response:
    return json_answer(503, {"error_name": "unavailable"})


# --- reads and authorize ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_read_is_retried_after_server_errors_until_it_succeeds() -> None:
    """Three 5xx answers, then a good one: the caller sees the transaction."""
    fake = FakeProvider()
    fake.queue("transaction.get", server_error(), server_error(), server_error())
    async with make_client(fake, retry_attempts=4) as client:
        transaction = await client.get_transaction("tx-1")
    assert transaction.id == "tx-1"
    assert len(fake.calls("transaction.get")) == 4
    assert client.stats.retries == 3
    assert client.stats.server_errors == 3


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_read_gives_up_after_the_configured_attempts() -> None:
    """After retry_attempts server errors the last one is raised."""
    fake = FakeProvider()
    fake.queue("transaction.get", *(server_error() for _ in range(10)))
    async with make_client(fake, retry_attempts=3) as client:
        with pytest.raises(ProviderServerError) as caught:
            await client.get_transaction("tx-1")
    assert caught.value.status == 503
    assert len(fake.calls("transaction.get")) == 3


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (httpx.ReadTimeout("slow"), ProviderTimeout),
        (httpx.ConnectTimeout("slow"), ProviderTimeout),
        (httpx.ConnectError("refused"), ProviderConnectionError),
        (httpx.RemoteProtocolError("dropped"), ProviderConnectionError),
        (httpx.ReadError("reset"), ProviderConnectionError),
    ],
)
async def test_transport_failures_of_a_read_are_retried_then_mapped(
    failure: Exception, expected: type[Exception]
) -> None:
    """Timeouts and connection failures are retried, and end as recon's own exception."""
    fake = FakeProvider()
    fake.queue("transaction.get", failure, failure)
    async with make_client(fake, retry_attempts=3) as client:
        assert (await client.get_transaction("tx-1")).id == "tx-1"
    fake.queue("transaction.get", *([failure] * 3))
    async with make_client(fake, retry_attempts=3) as client:
        with pytest.raises(expected):
            await client.get_transaction("tx-1")


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_authorize_is_retried_after_a_server_error() -> None:
    """merchant.authorize is retried like a read."""
    fake = FakeProvider()
    fake.queue("merchant.authorize", server_error(), httpx.ReadTimeout("slow"))
    async with make_client(fake) as client:
        await client.get_transaction("tx-1")
    assert len(fake.calls("merchant.authorize")) == 3


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_429_is_retried_and_its_retry_after_reported_when_attempts_run_out() -> None:
    """Rate limiting is retried; if it persists, ProviderRateLimited carries Retry-After."""
    fake = FakeProvider()
    limited = json_answer(429, {"error_name": "rate_limited"}, **{"Retry-After": "7"})
    fake.queue("transaction.get", *([limited] * 4))
    async with make_client(fake, retry_attempts=4) as client:
        with pytest.raises(ProviderRateLimited) as caught:
            await client.get_transaction("tx-1")
    assert caught.value.retry_after == 7
    assert client.stats.rate_limited == 4


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_retry_after_longer_than_the_maximum_wait_fails_at_once() -> None:
    """Asked to come back in an hour, the client reports the rate limit instead of stalling."""
    fake = FakeProvider()
    fake.queue("transaction.get", json_answer(429, {}, **{"Retry-After": "3600"}))
    async with make_client(fake, retry_max_wait=30) as client:
        with pytest.raises(ProviderRateLimited) as caught:
            await client.get_transaction("tx-1")
    assert caught.value.retry_after == 3600
    assert len(fake.calls("transaction.get")) == 1


# --- create calls -------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
@pytest.mark.parametrize(
    "failure",
    [
        httpx.ReadTimeout("slow"),
        httpx.WriteTimeout("slow"),
        httpx.RemoteProtocolError("dropped"),
        httpx.ReadError("reset"),
        json_answer(500, {"error_name": "internal"}),
        json_answer(504, "<html>gateway timeout</html>"),
    ],
)
async def test_a_create_that_may_have_reached_the_provider_is_an_unknown_outcome(
    failure: httpx.Response | Exception,
) -> None:
    """A create call is sent once; an ambiguous failure says to look the payout up."""
    fake = FakeProvider()
    fake.queue("transaction.create_withdrawal", failure)
    async with make_client(fake) as client:
        with pytest.raises(UnknownOutcome) as caught:
            await client.create_withdrawal(WITHDRAWAL)
    assert len(fake.calls("transaction.create_withdrawal")) == 1
    message = str(caught.value)
    assert message.startswith("transaction.create_withdrawal: ")
    assert "look the payout up" in message
    assert "same merchant_reference and amount is safe" in message


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
@pytest.mark.parametrize(
    "operation", ["session.create_bank_account_selection", "bank_account.create"]
)
async def test_the_other_create_calls_are_not_retried_blindly_either(operation: str) -> None:
    """Session and bank-account creation also end as an unknown outcome after a read timeout."""
    from recon.provider.models import BankAccountCreateRequest, BankAccountSelectionRequest

    fake = FakeProvider()
    fake.queue(operation, httpx.ReadTimeout("slow"))
    async with make_client(fake) as client:
        if operation == "bank_account.create":
            account = BankAccountCreateRequest(country_id="SE", iban="SE4550000000058398257466")
            with pytest.raises(UnknownOutcome):
                await client.create_bank_account(account)
        else:
            with pytest.raises(UnknownOutcome):
                await client.create_bank_account_selection(BankAccountSelectionRequest())
    assert len(fake.calls(operation)) == 1


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_create_that_never_left_is_retried() -> None:
    """No connection means nothing was sent, so repeating the create is safe."""
    fake = FakeProvider()
    fake.queue(
        "transaction.create_withdrawal", httpx.ConnectError("refused"), httpx.ConnectTimeout("x")
    )
    async with make_client(fake) as client:
        created = await client.create_withdrawal(WITHDRAWAL)
    assert created.id == "tx-new"
    assert len(fake.calls("transaction.create_withdrawal")) == 3


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_create_refused_with_429_is_retried() -> None:
    """A rate-limited create was refused, not processed, so it is sent again."""
    fake = FakeProvider()
    fake.queue("transaction.create_withdrawal", json_answer(429, {}, **{"Retry-After": "1"}))
    async with make_client(fake) as client:
        assert (await client.create_withdrawal(WITHDRAWAL)).id == "tx-new"
    assert len(fake.calls("transaction.create_withdrawal")) == 2


@pytest.mark.anyio
@pytest.mark.usefixtures("no_waiting")
async def test_a_create_whose_token_was_rejected_is_sent_again_with_a_new_token() -> None:
    """A 401 means the create was not processed: re-authorize and repeat it once."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        await client.authorize()
        fake.revoke_all()
        assert (await client.create_withdrawal(WITHDRAWAL)).id == "tx-new"
    assert len(fake.calls("transaction.create_withdrawal")) == 2


# --- backoff, Retry-After and pacing -------------------------------------------------------------


def test_backoff_waits_are_jittered_below_an_exponential_ceiling() -> None:
    """Retry n waits a random time below min(maximum, initial * 2**(n-1))."""
    backoff = retry.Backoff(attempts=6, initial=0.5, maximum=3.0)
    for n, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (5, 3.0)]:
        waits = [backoff.wait(n) for _ in range(200)]
        assert all(0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling / 2  # jitter actually spreads the waits


def test_retry_after_is_a_floor_for_the_wait() -> None:
    """The client never comes back sooner than the provider asked."""
    assert retry.Backoff(initial=0.1, maximum=0.1).wait(1, retry_after=5.0) == 5.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 2.5 ", 2.5),
        ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("-5", 0.0),
    ],
)
def test_retry_after_is_read_as_seconds_or_an_http_date(
    header: str | None, seconds: float | None
) -> None:
    """Both forms of Retry-After (RFC 9110) are understood; nonsense is ignored."""
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry.parse_retry_after(header, now=now) == seconds


@pytest.mark.anyio
async def test_testing_mode_makes_waits_instant() -> None:
    """set_testing(True) turns a long wait into none at all."""
    retry.set_testing(True)
    try:
        start = time.monotonic()
        await retry.sleep(30)
        assert time.monotonic() - start < 1
    finally:
        retry.set_testing(False)


@pytest.mark.anyio
async def test_a_retry_after_from_one_request_holds_back_every_other_request() -> None:
    """After one 429 with Retry-After, no request of any caller is sent before the deadline."""
    fake = FakeProvider()
    fake.queue("transaction.get", json_answer(429, {}, **{"Retry-After": "0.3"}))
    async with make_client(fake, retry_initial_wait=0, concurrency=8) as client:
        await client.authorize()
        first = asyncio.create_task(client.get_transaction("tx-first"))
        for _ in range(1000):  # until the refused request has arrived
            if fake.calls("transaction.get"):
                break
            await asyncio.sleep(0.001)
        refused_at = fake.arrivals[-1][1]
        await asyncio.sleep(0.01)  # let the 429 be read
        await asyncio.gather(first, *(client.get_transaction(f"tx-{i}") for i in range(5)))
    later = [at for op, at in fake.arrivals if op == "transaction.get" and at > refused_at]
    assert len(later) == 6
    assert min(later) >= refused_at + 0.29


@pytest.mark.anyio
async def test_the_rate_limit_spaces_requests_across_all_callers() -> None:
    """With a cap of 100 per second, 21 concurrent requests take at least 0.2 seconds."""
    fake = FakeProvider()
    async with make_client(fake, rate_limit=100, concurrency=21) as client:
        await client.authorize()
        start = time.monotonic()
        await asyncio.gather(*(client.get_transaction(f"tx-{i}") for i in range(20)))
        elapsed = time.monotonic() - start
    assert elapsed >= 0.19
