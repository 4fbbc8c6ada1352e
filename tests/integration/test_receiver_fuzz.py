"""Hostile input: random bodies never crash the receiver; every JSON object is kept, no other."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select
from starlette.applications import Starlette

from recon.ingest.receiver import create_receiver_app
from recon.jsonparse import dumps, loads
from recon.settings import Settings
from recon.store.tables import notifications

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)
field = st.sampled_from(
    [
        "merchant_id",
        "transaction_id",
        "session_id",
        "transaction_state",
        "session_state",
        "original_transaction_id",
        "notification_type",
        "amount",
        "country_id",
    ]
)
near_notifications = st.dictionaries(
    field, values | st.sampled_from(["RETURNED_TRANSACTION", "m", 6, 12]), max_size=7
)
almost_valid = st.fixed_dictionaries(
    {
        "merchant_id": st.text(min_size=1, max_size=8),
        "transaction_id": st.text(min_size=1, max_size=8),
        "transaction_state": st.integers(),
    },
    optional={"extra": values},
)
raw_bodies = (
    almost_valid.map(lambda body: dumps(body).encode())
    | near_notifications.map(lambda body: dumps(body).encode())
    | values.map(lambda body: dumps(body).encode())
    | st.binary(max_size=300)
    | st.text(max_size=200).map(str.encode)
)


@pytest.fixture
def app(engine: Engine) -> Starlette:
    return create_receiver_app(Settings(receiver_max_body_bytes=256), engine)


def post(app: Starlette, raw: bytes, content_type: str) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
            return await client.post(
                "/callbacks?q=1", content=raw, headers={"content-type": content_type}
            )

    return asyncio.run(send())


def count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(notifications)).scalar_one())


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(raw=raw_bodies, content_type=st.sampled_from(["application/json", "text/plain"]))
def test_random_bodies_get_2xx_or_4xx_and_every_json_object_is_stored(
    app: Starlette, engine: Engine, raw: bytes, content_type: str
) -> None:
    """Any bytes get a 2xx or 4xx, never a 5xx; every JSON object within the limit is stored."""
    before = count(engine)
    answer = post(app, raw, content_type)
    assert 200 <= answer.status_code < 500, answer.text
    after = count(engine)
    if answer.status_code != 200:
        assert after == before
        try:
            decoded = loads(raw)
        except (ValueError, RecursionError):
            return
        # a JSON object is refused only for its media type, size, or a NaN/Infinity literal
        assert (
            not isinstance(decoded, dict)
            or content_type != "application/json"
            or len(raw) > 256
            or answer.status_code == 400
        ), answer.text
        return
    assert isinstance(loads(raw), dict)
    assert after - before == (1 if answer.json()["status"] == "stored" else 0)
