"""The callback receiver over HTTP (in-process ASGI) against real databases."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select

from recon.ingest.receiver import create_receiver_app
from recon.settings import Settings
from recon.store.tables import notifications


@pytest.fixture
def merchant() -> str:
    """A merchant id of this test alone, so rows of other tests never count."""
    return "m-" + uuid.uuid4().hex


def transaction(merchant: str, tx: str = "t-1", state: int = 6) -> dict[str, Any]:
    return {"merchant_id": merchant, "transaction_id": tx, "transaction_state": state}


def rows(engine: Engine, merchant: str) -> list[Any]:
    with engine.connect() as conn:
        query = select(notifications).where(notifications.c.merchant_id == merchant)
        return list(conn.execute(query.order_by(notifications.c.id)))


def count(engine: Engine, merchant: str) -> int:
    with engine.connect() as conn:
        query = select(func.count()).where(notifications.c.merchant_id == merchant)
        return int(conn.execute(query).scalar_one())


def client_for(
    engine: Engine, client_address: str = "127.0.0.1", **settings: Any
) -> httpx.AsyncClient:
    app = create_receiver_app(Settings(**settings), engine)
    transport = httpx.ASGITransport(app=app, client=(client_address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://receiver")


@pytest.fixture
async def client(engine: Engine) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(engine) as client:
        yield client


@pytest.mark.anyio
async def test_every_notification_kind_is_stored_with_its_ids(
    client: httpx.AsyncClient, engine: Engine, merchant: str
) -> None:
    """Session, transaction and returned-funds bodies are each stored with their ids and state."""
    bodies = [
        {"merchant_id": merchant, "session_id": "s-1", "session_state": 12},
        transaction(merchant),
        {
            "transaction_id": "r-1",
            "original_transaction_id": "t-1",
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": merchant,
            "country_id": "SE",
            "amount": 11.01,
        },
    ]
    for body in bodies:
        answer = await client.post("/callbacks", content=json.dumps(body), headers=JSON)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"status": "stored"}
    stored = rows(engine, merchant)
    assert [(r.kind, r.session_id, r.transaction_id, r.state) for r in stored] == [
        ("session", "s-1", None, 12),
        ("transaction", None, "t-1", 6),
        ("returned_funds", None, "r-1", None),
    ]
    assert stored[2].original_transaction_id == "t-1"
    assert stored[2].amount == "11.01"
    assert all(r.source == "receiver" for r in stored)
    assert json.loads(stored[1].body) == bodies[1]


JSON = {"content-type": "application/json"}


@pytest.mark.anyio
async def test_the_merchant_query_string_is_kept(
    client: httpx.AsyncClient, engine: Engine, merchant: str
) -> None:
    """Query parameters of the merchant's callback url are accepted and stored."""
    answer = await client.post(
        "/callbacks?shop=eu&order=A%2F7", json=transaction(merchant), headers=JSON
    )
    assert answer.status_code == 200
    assert [r.query for r in rows(engine, merchant)] == ["shop=eu&order=A%2F7"]


@pytest.mark.anyio
async def test_a_duplicate_body_is_stored_once_and_still_answered_200(
    client: httpx.AsyncClient, engine: Engine, merchant: str
) -> None:
    """A body delivered again, even re-serialised, is a success and is not stored twice."""
    body = transaction(merchant)
    first = await client.post("/callbacks?a=1", content=json.dumps(body), headers=JSON)
    again = await client.post(
        "/callbacks?b=2", content=json.dumps(body, indent=4, sort_keys=True), headers=JSON
    )
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == {"status": "duplicate"}
    assert [r.query for r in rows(engine, merchant)] == ["a=1"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b'{not json "M"', 400),
        (b'\xff\xfe\x00{"M"', 400),
        (b'{"merchant_id": "M", "transaction_id": "t", "transaction_state": NaN}', 400),
        (b'["M"]', 422),
        (b'"M"', 422),
    ],
)
async def test_a_body_that_is_not_a_json_object_is_refused_and_not_stored(
    client: httpx.AsyncClient, engine: Engine, merchant: str, content: bytes, status: int
) -> None:
    """Bytes that are not JSON get 400, JSON that is not an object 422; nothing is stored."""
    answer = await client.post("/callbacks", content=content.replace(b'"M"', merchant.encode()))
    assert answer.status_code in (400, 415)  # no content type yet: checked first
    answer = await client.post(
        "/callbacks", content=content.replace(b'"M"', f'"{merchant}"'.encode()), headers=JSON
    )
    assert answer.status_code == status, answer.text
    assert "error" in answer.json()
    assert count(engine, merchant) == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "kind", "status", "problem"),
    [
        (
            b'{"merchant_id": "M", "transaction_id": "t", "transaction_state": "6"}',
            "transaction",
            "parsed",
            None,
        ),
        (
            b'{"merchant_id": "M", "transaction_state": 6, "transaction_id": 7}',
            "transaction",
            "parsed",
            None,
        ),
        (
            b'{"merchant_id": "M", "transaction_state": 6}',
            "unknown",
            "unparsed",
            "transaction_id: missing",
        ),
        (
            b'{"merchant_id": "M", "notification_type": "REFUND", "transaction_id": "t"}',
            "unknown",
            "unparsed",
            "notification_type: unknown value 'REFUND'",
        ),
        (
            b'{"merchant_id": "M", "transaction_id": "t\\u0000", "transaction_state": 6}',
            "unknown",
            "unparsed",
            "transaction_id: contains a NUL character",
        ),
        (
            b'{"merchant_id": "M", "transaction_id": "t", "transaction_state": {"a": 1}}',
            "transaction",
            "partial",
            "transaction_state: not a number: {'a': 1}",
        ),
        (
            b'{"merchant_id": "M"}',
            "unknown",
            "unparsed",
            "body: not a notification (no session_id, transaction_id or notification_type)",
        ),
    ],
)
async def test_every_json_object_is_stored_raw_with_how_far_it_was_read(
    client: httpx.AsyncClient,
    engine: Engine,
    merchant: str,
    content: bytes,
    kind: str,
    status: str,
    problem: str | None,
) -> None:
    """A JSON object recon cannot read in full is committed (200) with its parse status."""
    body = content.replace(b'"M"', f'"{merchant}"'.encode())
    answer = await client.post("/callbacks", content=body, headers=JSON)
    assert (answer.status_code, answer.json()) == (200, {"status": "stored"})
    again = await client.post("/callbacks", content=body, headers=JSON)
    assert again.json() == {"status": "duplicate"}
    [row] = rows(engine, merchant)
    assert (row.kind, row.parse_status, row.parse_problem) == (kind, status, problem)
    assert row.body == body.decode()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "extra",
    [{}, {"merchant_id": 4711}],
    ids=["without merchant_id", "with a numeric merchant_id"],
)
async def test_a_returned_funds_claim_is_stored_and_read_whatever_its_merchant_id(
    client: httpx.AsyncClient, engine: Engine, extra: dict[str, Any]
) -> None:
    """A return without or with a numeric merchant_id is kept and read, not refused."""
    return_id = "r-" + uuid.uuid4().hex
    body = {
        "transaction_id": return_id,
        "original_transaction_id": "t-1",
        "notification_type": "RETURNED_TRANSACTION",
        "amount": "4.00",
    } | extra
    answer = await client.post("/callbacks", content=json.dumps(body), headers=JSON)
    assert answer.status_code == 200, answer.text
    with engine.connect() as conn:
        row = conn.execute(
            select(notifications).where(notifications.c.transaction_id == return_id)
        ).one()
    assert (row.kind, row.original_transaction_id, row.amount, row.parse_status) == (
        "returned_funds",
        "t-1",
        "4.00",
        "parsed",
    )
    assert row.merchant_id == ("4711" if extra else None)


@pytest.mark.anyio
async def test_a_transaction_state_sent_as_a_string_is_stored_as_that_number(
    client: httpx.AsyncClient, engine: Engine, merchant: str
) -> None:
    """``"transaction_state": "3"`` is state 3, stored and fully read."""
    body = {"merchant_id": merchant, "transaction_id": "t-1", "transaction_state": "3"}
    answer = await client.post("/callbacks", content=json.dumps(body), headers=JSON)
    assert answer.status_code == 200, answer.text
    [row] = rows(engine, merchant)
    assert (row.kind, row.transaction_id, row.state, row.parse_status) == (
        "transaction",
        "t-1",
        3,
        "parsed",
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"],
)
async def test_a_wrong_content_type_gets_415_and_is_not_stored(
    client: httpx.AsyncClient, engine: Engine, merchant: str, content_type: str | None
) -> None:
    """Only application/json (UTF-8) bodies are accepted."""
    headers = {} if content_type is None else {"content-type": content_type}
    answer = await client.post(
        "/callbacks", content=json.dumps(transaction(merchant)), headers=headers
    )
    assert answer.status_code == 415
    assert count(engine, merchant) == 0


@pytest.mark.anyio
async def test_a_json_content_type_with_utf8_charset_is_accepted(
    client: httpx.AsyncClient, engine: Engine, merchant: str
) -> None:
    """``application/json; charset=UTF-8`` is the same media type."""
    answer = await client.post(
        "/callbacks",
        content=json.dumps(transaction(merchant)),
        headers={"content-type": "Application/JSON; charset=UTF-8"},
    )
    assert answer.status_code == 200
    assert count(engine, merchant) == 1


def padded(merchant: str, size: int) -> bytes:
    body = json.dumps(transaction(merchant) | {"pad": ""}).encode()
    return body.replace(b'"pad": ""', b'"pad": "' + b"x" * (size - len(body)) + b'"')


@pytest.mark.anyio
async def test_an_oversized_body_gets_413_and_is_not_stored(engine: Engine, merchant: str) -> None:
    """A body over the limit is refused, whether announced, streamed chunked, or understated."""
    async with client_for(engine, receiver_max_body_bytes=1024) as client:
        exact = await client.post("/callbacks", content=padded(merchant, 1024), headers=JSON)
        assert exact.status_code == 200, exact.text
        big = padded(merchant + "-big", 1025)
        announced = await client.post("/callbacks", content=big, headers=JSON)

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(big), 100):
                yield big[i : i + 100]

        chunked = await client.post("/callbacks", content=chunks(), headers=JSON)
        understated = await client.post(
            "/callbacks", content=big, headers=JSON | {"content-length": "10"}
        )
    assert [announced.status_code, chunked.status_code, understated.status_code] == [413] * 3
    assert count(engine, merchant) == 1
    assert count(engine, merchant + "-big") == 0


@pytest.mark.anyio
async def test_other_methods_and_paths_are_refused(client: httpx.AsyncClient) -> None:
    """Only POST /callbacks and GET /health exist."""
    assert (await client.get("/callbacks")).status_code == 405
    assert (await client.post("/other", json={}, headers=JSON)).status_code == 404


@pytest.mark.anyio
async def test_health_answers_ok_when_the_database_answers(client: httpx.AsyncClient) -> None:
    """GET /health is 200 with status ok while the database answers."""
    answer = await client.get("/health")
    assert (answer.status_code, answer.json()) == (200, {"status": "ok"})


@pytest.mark.anyio
async def test_clients_outside_the_allowed_networks_get_403(engine: Engine, merchant: str) -> None:
    """With an allow-list, only its networks may post (IPv4-mapped IPv6 addresses included)."""
    networks = ["10.1.0.0/16", "2001:db8::/32"]
    body = json.dumps(transaction(merchant))
    for address, status in [
        ("10.1.2.3", 200),
        ("::ffff:10.1.9.9", 200),
        ("2001:db8::5", 200),
        ("10.2.0.1", 403),
        ("127.0.0.1", 403),
        ("testclient", 403),
    ]:
        async with client_for(engine, address, receiver_allow_networks=networks) as client:
            answer = await client.post("/callbacks", content=body, headers=JSON)
        assert answer.status_code == status, address
    assert count(engine, merchant) == 1


@pytest.mark.anyio
async def test_a_path_token_hides_the_endpoint_and_is_never_logged(
    engine: Engine, merchant: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With a path token only /callbacks/<token> stores; other paths are 404, and logs omit it."""
    token = "s3cret-path-token-" + uuid.uuid4().hex
    body = json.dumps(transaction(merchant))
    caplog.set_level(logging.DEBUG)
    async with client_for(engine, receiver_path_token=token) as client:
        plain = await client.post("/callbacks", content=body, headers=JSON)
        wrong = await client.post("/callbacks/" + token[:-1], content=body, headers=JSON)
        right = await client.post(f"/callbacks/{token}?x=1", content=body, headers=JSON)
    assert (plain.status_code, wrong.status_code, right.status_code) == (404, 404, 200)
    assert count(engine, merchant) == 1
    # the test's own http client logs its urls; everything the receiver side logs is checked
    server_lines = [r.getMessage() for r in caplog.records if not r.name.startswith("httpx")]
    assert any("stored transaction notification" in line for line in server_lines)
    assert not [line for line in server_lines if token in line]
