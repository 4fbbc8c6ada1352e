"""The provider client's error answers: mapping, loose bodies, malformed answers, no secrets."""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx
import pytest

from recon.errors import (
    MalformedResponse,
    ProviderAuthError,
    ProviderClientError,
    ProviderError,
    ProviderHTTPError,
    ProviderRateLimited,
    ProviderServerError,
    ReferenceConflict,
    SessionIdGiven,
    TransactionNotFound,
    UnknownOutcome,
)
from recon.provider.answers import RAW_LIMIT
from recon.provider.models import WithdrawalRequest
from recon.redact import MASK
from tests.unit.provider_fake import SECRET, Answer, FakeProvider, json_answer, make_client


async def _get_error(answer: httpx.Response | Exception) -> ProviderError:
    fake = FakeProvider()
    fake.queue("transaction.get", *([answer] * 5))
    async with make_client(fake) as client:
        with pytest.raises(ProviderError) as caught:
            await client.get_transaction("tx-1")
    return caught.value


pytestmark = pytest.mark.usefixtures("no_retry_waits")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (403, {"error_name": "forbidden"}, ProviderAuthError),
        (429, {"error_name": "rate_limited"}, ProviderRateLimited),
        (500, {"error_name": "internal"}, ProviderServerError),
        (502, "Bad Gateway", ProviderServerError),
        (404, {"error_name": "whatever"}, TransactionNotFound),
        (400, {"error_name": "TRANSACTION_NOT_FOUND"}, TransactionNotFound),
        (422, {"error_name": "unknown_transaction"}, ProviderClientError),
        (409, {"error_name": "conflict"}, ReferenceConflict),
        (400, {"error_name": "merchant_reference_conflict"}, ReferenceConflict),
        (400, {"error_name": "invalid_request"}, ProviderClientError),
        (418, "", ProviderClientError),
    ],
)
async def test_error_statuses_map_to_recon_exceptions(
    status: int, body: object, expected: type[ProviderHTTPError]
) -> None:
    """Each status (and telling error name) becomes the documented exception class."""
    error = await _get_error(json_answer(status, body))
    assert type(error) is expected
    assert isinstance(error, ProviderHTTPError)
    assert error.status == status
    assert error.operation == "transaction.get"


@pytest.mark.anyio
async def test_not_found_names_are_configurable_and_case_insensitive() -> None:
    """A 4xx whose error name is in not_found_error_names is TransactionNotFound."""
    fake = FakeProvider()
    fake.queue("transaction.get", json_answer(400, {"error_code": "No_Such_Payout"}))
    async with make_client(fake, not_found_error_names=["no_such_payout"]) as client:
        with pytest.raises(TransactionNotFound):
            await client.get_transaction("tx-404")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "name", "message"),
    [
        ({"error_name": "invalid_request", "error_message": "id missing"}, "invalid_request",
         "id missing"),
        ({"error_code": "E42", "message": "amount too large"}, "E42", "amount too large"),
        ({"error": "invalid_request"}, "invalid_request", None),
        ({"error": {"code": "bad_amount", "message": "negative"}}, "bad_amount", "negative"),
        ({"code": 1234, "detail": "see docs"}, "1234", "see docs"),
        ("<html><body>Bad request</body></html>", None, "<html><body>Bad request</body></html>"),
        ("", None, None),
        ("[1, 2]", None, "[1, 2]"),
    ],
)  # fmt: skip
async def test_error_bodies_are_read_loosely(
    body: object, name: str | None, message: str | None
) -> None:
    """Whatever keys the error body uses, its name, message and raw text are kept."""
    error = await _get_error(json_answer(400, body))
    assert isinstance(error, ProviderHTTPError)
    assert error.error_name == name
    if message is not None:
        assert message in str(error)
    expected_raw = body if isinstance(body, str) else None
    if expected_raw is not None:
        assert error.raw == expected_raw


@pytest.mark.anyio
async def test_a_long_error_body_is_kept_truncated() -> None:
    """The raw text is kept for reports but cut at about 2 KB."""
    error = await _get_error(json_answer(400, "x" * 10_000))
    assert isinstance(error, ProviderHTTPError)
    assert error.raw.startswith("x" * RAW_LIMIT)
    assert len(error.raw) <= RAW_LIMIT + 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("not json at all", "not JSON"),
        ("[1, 2, 3]", "not an object"),
        ('{"id": "tx-1", "type": 1, "amount": 1.00, "currency_id": "EUR"}', "state"),
        ('{"id": "tx-1", "state": 6, "type": 1, "amount": "lots", "currency_id": "EUR"}', "amount"),
        ('{"id": "tx-1", "state": true, "type": 1, "amount": 1, "currency_id": "EUR"}', "state"),
        ('{"id": "tx-1", "state": 6, "type": 1, "amount": 10.005, "currency_id": "EUR"}',
         "more than 2 decimals for EUR"),
        ('{"id": "tx-1", "state": 6, "type": 1, "amount": 10.5, "currency_id": "jpy"}',
         "more than 0 decimals for JPY"),
        ('{"id": "tx-1", "state": null, "type": 1, "amount": 1, "currency_id": "EUR"}', "state"),
    ],
)  # fmt: skip
async def test_a_2xx_answer_that_is_not_as_documented_is_malformed(body: str, says: str) -> None:
    """Bad JSON, a non-object or a failing field gives MalformedResponse naming the problem."""
    error = await _get_error(json_answer(200, body))
    assert isinstance(error, MalformedResponse)
    assert says in str(error)


@pytest.mark.anyio
async def test_a_redirect_is_malformed_not_followed() -> None:
    """A 3xx is not a documented answer; the client does not follow it."""
    error = await _get_error(httpx.Response(302, headers={"location": "http://elsewhere.test/"}))
    assert isinstance(error, MalformedResponse)
    assert "302" in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "failure",
    [
        httpx.UnsupportedProtocol("ftp"),
        httpx.ProxyError("proxy"),
        httpx.LocalProtocolError("local"),
        httpx.PoolTimeout("pool"),
        httpx.WriteError("write"),
    ],
)
async def test_no_httpx_exception_escapes_the_client(failure: Exception) -> None:
    """Every httpx transport error becomes a recon ProviderError."""
    error = await _get_error(failure)
    assert not isinstance(error, httpx.HTTPError)
    assert error.__cause__ is None
    assert error.__suppress_context__


TOKEN_PREFIX = "tok-"


def _echo_secrets(request: httpx.Request) -> str:
    """An error text that repeats every credential the request carried."""
    return f"{request.headers.get('authorization', '')} {request.content.decode()} {SECRET}"


@pytest.mark.anyio
async def test_secrets_and_tokens_never_appear_in_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every error path, even with the provider echoing credentials, keeps them out of sight."""
    caplog.set_level(logging.DEBUG)
    fake = FakeProvider()

    def echo(status: int, **headers: str) -> Callable[[httpx.Request], httpx.Response]:
        return lambda request: json_answer(
            status,
            {"error_name": _echo_secrets(request), "message": _echo_secrets(request)},
            **headers,
        )

    def echo_text(status: int) -> Callable[[httpx.Request], httpx.Response]:
        return lambda request: httpx.Response(status, text=_echo_secrets(request))

    errors: list[ProviderError] = []
    paths: list[Answer] = [
        echo(400), echo(403), echo(404), echo(409), echo_text(422), echo(500), echo_text(503),
        echo(429, **{"Retry-After": "1"}), echo_text(200),
        lambda request: json_answer(200, {"id": _echo_secrets(request), "state": "x"}),
        httpx.ReadTimeout(SECRET), httpx.ConnectError(f"refused {SECRET}"),
    ]  # fmt: skip
    async with make_client(fake, retry_attempts=2) as client:
        await client.authorize()
        for path in paths:
            fake.queued.clear()
            fake.queue("transaction.get", path, path)
            with pytest.raises(ProviderError) as caught:
                await client.get_transaction("tx-1")
            errors.append(caught.value)
        fake.queued.clear()
        fake.queue("transaction.create_withdrawal", httpx.ReadTimeout(SECRET))
        with pytest.raises(UnknownOutcome) as unknown:
            await client.create_withdrawal(
                WithdrawalRequest(amount=1, bank_account_id="b", merchant_reference="r")
            )
        errors.append(unknown.value)
        fake.revoke_all()
        fake.queue("merchant.authorize", echo(401))
        with pytest.raises(ProviderAuthError) as denied:
            await client.get_transaction("tx-1")
        errors.append(denied.value)

    tokens = fake.tokens + [f"refresh-{t}" for t in fake.tokens]
    assert len(errors) == len(paths) + 2
    texts = [str(e) for e in errors] + [getattr(e, "raw", "") for e in errors]
    texts += [str(getattr(e, "error_name", "")) for e in errors]
    texts.append(caplog.text)
    for text in texts:
        assert SECRET not in text
        for token in tokens:
            assert token not in text
    assert MASK in caplog.text or any(MASK in t for t in texts)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        '{"error_name": "session_found", "error_message": "see session.get"}',
        '{"error_name": "bad_id", "error_message": "A session was found with that id"}',
    ],
)
async def test_an_answer_saying_the_id_is_a_sessions_is_its_own_error(body: str) -> None:
    """The provider notes' "a session was found with that id": SessionIdGiven, not unknown."""
    error = await _get_error(json_answer(404, body))
    assert isinstance(error, SessionIdGiven)
