"""The provider client's limits on an answer: depth, size while reading, number magnitude, a total
deadline per request, and the answer's id checked against the id asked for.

Each hostile answer is a malformed answer (a ``ProviderError``) for that one call, never a
``RecursionError``, a hang or a buffer of the whole body.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from recon.errors import (
    MalformedResponse,
    ProviderError,
    ProviderServerError,
    ProviderTimeout,
    TransactionNotFound,
    WrongTransaction,
)
from recon.jsonparse import MAX_DEPTH
from recon.provider.answers import read_error_body
from recon.redact import Scrubber
from tests.unit.provider_fake import TRANSACTION_TEXT, FakeProvider, json_answer, make_client

pytestmark = [pytest.mark.usefixtures("no_retry_waits"), pytest.mark.timeout(60, method="thread")]

DEEP = b"[" * 50_000  # ~50 KB: beyond any recursion limit
MIB = 1024 * 1024


def answer_with(**fields: str) -> str:
    """The fake's documented transaction answer with some fields replaced by raw JSON text."""
    body = json.loads(TRANSACTION_TEXT)
    text = json.dumps({key: f"@{key}@" if key in fields else value for key, value in body.items()})
    for key, raw in fields.items():
        text = text.replace(f'"@{key}@"', raw)
    for key in fields.keys() - body.keys():
        text = text[:-1] + f', "{key}": {fields[key]}}}'
    return text


async def fetch(answer: httpx.Response, **options: object) -> ProviderError | None:
    """Ask for tx-1 once with ``answer`` queued; the error raised, or None if it parsed."""
    fake = FakeProvider()
    fake.queue("transaction.get", answer)
    async with make_client(fake, retry_attempts=1, **options) as client:
        try:
            await client.get_transaction("tx-1")
        except ProviderError as exc:
            return exc
    return None


# --- depth ---------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("body", [DEEP, b'{"id": "tx-1", "state": ' + DEEP, b"{" * 50_000])
async def test_an_answer_nested_fifty_thousand_deep_is_malformed_not_a_recursion_error(
    body: bytes,
) -> None:
    """A 200 of 50,000 nested brackets is a malformed answer naming the depth limit."""
    error = await fetch(httpx.Response(200, content=body))
    assert isinstance(error, MalformedResponse)
    assert "deeper than" in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "expected"), [(404, TransactionNotFound), (500, ProviderServerError)]
)
async def test_an_error_answer_nested_fifty_thousand_deep_keeps_its_status_meaning(
    status: int, expected: type[ProviderError]
) -> None:
    """An error answer of 50,000 brackets is read as raw text: the status still decides."""
    error = await fetch(httpx.Response(status, content=DEEP))
    assert type(error) is expected


def test_read_error_body_reads_fifty_thousand_brackets_as_raw_text() -> None:
    """answers.read_error_body never raises on deep nesting: the body is kept as raw text."""
    body = read_error_body(DEEP, Scrubber())
    assert body.name is None
    assert body.raw.startswith("[[[[")


@pytest.mark.anyio
async def test_brackets_inside_strings_do_not_count_towards_the_depth() -> None:
    """A message full of brackets, and nesting up to the limit in an extra field, still parse."""
    nested = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    text = answer_with(message=json.dumps("[{" * 5000), surprise=nested)
    assert await fetch(json_answer(200, text)) is None


# --- size ----------------------------------------------------------------------------------------


class Endless:
    """A body that would be 200 MB, made on demand; counts the chunks actually taken."""

    def __init__(self, total: int = 200 * MIB, chunk: int = 64 * 1024) -> None:
        self.total = total
        self.chunk = chunk
        self.taken = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"id": "tx-1", "message": "'
        for _ in range(self.total // self.chunk):
            self.taken += 1
            yield b"x" * self.chunk
        yield b'"}'


@pytest.mark.anyio
async def test_a_200_mb_answer_is_refused_while_reading_not_after() -> None:
    """An answer without Content-Length is cut at RECON_MAX_ANSWER_BYTES: most of it never read."""
    body = Endless()
    error = await fetch(httpx.Response(200, content=body), max_answer_bytes=512 * 1024)
    assert isinstance(error, MalformedResponse)
    assert "RECON_MAX_ANSWER_BYTES" in str(error)
    assert body.taken * body.chunk <= 512 * 1024 + body.chunk


@pytest.mark.anyio
async def test_an_answer_announcing_a_length_over_the_limit_is_refused_before_its_body() -> None:
    """A Content-Length above the limit is refused without reading the body."""
    body = Endless()
    answer = httpx.Response(200, content=body, headers={"content-length": str(200 * MIB)})
    error = await fetch(answer, max_answer_bytes=512 * 1024)
    assert isinstance(error, MalformedResponse)
    assert body.taken == 0


@pytest.mark.anyio
async def test_an_answer_at_the_limit_is_read_whole() -> None:
    """An answer just under the limit (a long message) parses normally."""
    text = answer_with(message=json.dumps("m" * 4000))
    assert await fetch(json_answer(200, text), max_answer_bytes=len(text) + 1) is None


# --- numbers -------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fields",
    [
        {"type": "1e999999999"},
        {"state": "1e999999999"},
        {"state": "1" * 5000},
        {"type": "-" + "9" * 5000},
        {"amount": "1e999999999"},
        {"settled": "1e999999999"},
        {"surprise": "1e-999999999"},
        {"state": '"' + "1" * 5000 + '"'},
    ],
    ids=lambda f: next(iter(f)) + "=" + next(iter(f.values()))[:14],
)
async def test_numbers_of_absurd_magnitude_are_refused_before_any_conversion(
    fields: dict[str, str],
) -> None:
    """Huge exponents and 5000-digit integers make the answer malformed at once (the test's
    thread timeout would end a conversion that never finishes)."""
    error = await fetch(json_answer(200, answer_with(**fields)))
    assert isinstance(error, MalformedResponse)


# --- a total deadline per request ----------------------------------------------------------------


async def drip() -> AsyncIterator[bytes]:
    """One byte at a time, forever."""
    yield b'{"id": "tx-1", "message": "'
    while True:
        await asyncio.sleep(0.05)
        yield b"x"


@pytest.mark.anyio
async def test_a_provider_dripping_one_byte_at_a_time_is_cut_at_the_deadline() -> None:
    """Each byte arrives within the read timeout, but the whole answer not within the deadline."""
    error = await fetch(httpx.Response(200, content=drip()), request_deadline=0.3)
    assert isinstance(error, ProviderTimeout)
    assert "RECON_REQUEST_DEADLINE" in str(error)


@pytest.mark.anyio
async def test_the_deadline_cuts_one_attempt_and_the_retry_gets_its_answer() -> None:
    """A cut leaves no cancellation behind: the next attempt runs and its answer is read."""
    fake = FakeProvider()
    fake.queue("transaction.get", httpx.Response(200, content=drip()))
    fake.queue("transaction.get", json_answer(200, TRANSACTION_TEXT))
    async with make_client(fake, retry_attempts=2, retry_initial_wait=0, request_deadline=0.3) as c:
        answer = await c.get_transaction("tx-1")
    assert answer.id == "tx-1"


# --- the answer is about the id asked for --------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("answered", ["tx-2", "TX-1", "tx-1 ", " tx-1"])
async def test_an_answer_about_another_id_is_a_wrong_transaction(answered: str) -> None:
    """Ids are opaque and case-sensitive: any other id, even in another case, is refused."""
    error = await fetch(json_answer(200, answer_with(id=json.dumps(answered))))
    assert isinstance(error, WrongTransaction)
    assert error.asked == "tx-1"
    assert error.answered == answered


@pytest.mark.anyio
async def test_a_session_answer_about_another_id_is_a_wrong_transaction() -> None:
    """session.get is checked the same way."""
    fake = FakeProvider()
    fake.queue("session.get", json_answer(200, {"id": "sess-2", "state": 12}))
    async with make_client(fake) as client:
        with pytest.raises(WrongTransaction):
            await client.get_session("sess-1")
