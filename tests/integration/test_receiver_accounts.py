"""The receiver per provider account over real HTTP (uvicorn, as `recon serve callbacks` serves it):
`/callbacks` is the default account's, `/callbacks/NAME` account NAME's, the path token in front
of both; a callback for an account not configured is kept, answered alike, and reported."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, select

from recon.constants import ParseStatus
from recon.ingest.receiver import create_receiver_app, server_options
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.notifications import NOT_A_NAME, unparsed_notifications
from recon.store.tables import notifications

JSON = {"content-type": "application/json"}
TOKEN = "Zk3-path-token-0c1d"


def table(name: str) -> dict[str, Any]:
    return {
        "label": name.title(),
        "api_base_url": "https://api.provider.example",
        "public_key": f"pk_{name}",
        "secret": f"sk_{name}",
    }


ACCOUNTS = {"brand_a": table("brand_a"), "brand_b": table("brand_b")}


@contextmanager
def receiver(engine: Engine, **settings: Any) -> Iterator[httpx.Client]:
    config = Settings(**settings)
    with (
        serve_in_thread(create_receiver_app(config, engine), **server_options(config)) as url,
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        yield client


@pytest.fixture
def merchant() -> str:
    return "m-" + uuid.uuid4().hex


def body(merchant: str, tx: str = "tx-1") -> str:
    return json.dumps({"merchant_id": merchant, "transaction_id": tx, "transaction_state": 6})


def owners(engine: Engine, merchant: str) -> list[tuple[str, str | None, str]]:
    n = notifications.c
    with engine.connect() as conn:
        query = (
            select(n.provider_account, n.transaction_id, n.parse_status)
            .where(n.merchant_id == merchant)
            .order_by(n.provider_account, n.transaction_id)
        )
        return [tuple(row) for row in conn.execute(query)]  # type: ignore[misc]


def test_each_account_path_stores_under_its_account(engine: Engine, merchant: str) -> None:
    """One body sent to two accounts' URLs is two notifications; /callbacks is default's."""
    with receiver(engine, accounts=ACCOUNTS) as client:
        for path in ("/callbacks/brand_a", "/callbacks/brand_b", "/callbacks/brand_a"):
            answer = client.post(path, content=body(merchant), headers=JSON)
            assert answer.status_code == 200, answer.text
        assert client.post("/callbacks/brand_a", content=body(merchant), headers=JSON).json() == {
            "status": "duplicate"
        }
    assert owners(engine, merchant) == [
        ("brand_a", "tx-1", "parsed"),
        ("brand_b", "tx-1", "parsed"),
    ]


def test_callbacks_without_a_name_are_the_default_accounts(engine: Engine, merchant: str) -> None:
    """Callbacks without a name are the default accounts."""
    with receiver(engine) as client:
        assert client.post("/callbacks", content=body(merchant), headers=JSON).status_code == 200
        answer = client.post("/callbacks/default", content=body(merchant, "tx-2"), headers=JSON)
        assert answer.json() == {"status": "stored"}
    assert [row[:2] for row in owners(engine, merchant)] == [
        ("default", "tx-1"),
        ("default", "tx-2"),
    ]


def test_the_path_token_goes_in_front_of_both_paths(engine: Engine, merchant: str) -> None:
    """The path token goes in front of both paths."""
    with receiver(engine, accounts=ACCOUNTS, receiver_path_token=TOKEN) as client:
        for path in ("/callbacks", "/callbacks/brand_a", "/callbacks/wrong/brand_a"):
            assert client.post(path, content=body(merchant), headers=JSON).status_code == 404
        ok = client.post(f"/callbacks/{TOKEN}/brand_a", content=body(merchant), headers=JSON)
        assert ok.json() == {"status": "stored"}
        ok = client.post(f"/callbacks/{TOKEN}", content=body(merchant, "tx-2"), headers=JSON)
        assert ok.json() == {"status": "stored"}
    assert [row[:2] for row in owners(engine, merchant)] == [
        ("brand_a", "tx-1"),
        ("default", "tx-2"),
    ]


def test_a_callback_for_an_account_not_configured_is_kept_and_reported(
    engine: Engine, merchant: str
) -> None:
    """A callback for an account not configured is kept and reported."""
    with receiver(engine, accounts=ACCOUNTS) as client:
        answer = client.post("/callbacks/brand_c", content=body(merchant), headers=JSON)
        assert answer.status_code == 200
        assert answer.json() == {"status": "stored"}
    assert owners(engine, merchant) == [("brand_c", "tx-1", "parsed")]
    with engine.connect() as conn:
        # The first account's night reads it, naming the account; the other's does not.
        first = unparsed_notifications(conn, account="brand_a", configured=["brand_a", "brand_b"])
        second = unparsed_notifications(conn, account="brand_b")
    mine = [n for n in first if merchant in n.excerpt]
    assert [(n.account, n.status) for n in mine] == [("brand_c", ParseStatus.PARSED)]
    assert not [n for n in second if merchant in n.excerpt]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Brand_A", "'Brand_A'"),
        ("a" * 300, "'" + "a" * 40 + "'..."),
        ("%C3%A9t%C3%A9", "'\\xe9t\\xe9'"),
        ("x%00y%0d%0aSet-Cookie:", "'x\\x00y\\r\\nSet-Cookie:'"),
        ("robert');drop table notifications;--", '"robert\');drop table notifications;--"'),
        # Not one path segment: no account's route, refused, nothing stored.
        ("..", None),  # the client resolves it: POST /, no route
        ("%2e%2e%2fetc", None),  # ../etc once decoded
        ("brand_a/../../x", None),
    ],
)
def test_a_hostile_account_name_is_kept_safely_and_injects_nothing(
    engine: Engine, merchant: str, name: str, shown: str | None
) -> None:
    """A hostile account name is kept safely and injects nothing."""
    with receiver(engine, accounts=ACCOUNTS) as client:
        answer = client.post(f"/callbacks/{name}", content=body(merchant), headers=JSON)
    rows = owners(engine, merchant)
    if shown is None:
        assert (answer.status_code, rows) == (404, [])
        return
    assert answer.status_code == 200, answer.text
    assert rows == [(NOT_A_NAME, "tx-1", "partial")]
    with engine.connect() as conn:
        (problem,) = conn.execute(
            select(notifications.c.parse_problem).where(notifications.c.merchant_id == merchant)
        ).scalars()
    assert problem == f"account: the callback's path names {shown}, which is not an account name"
    assert problem.isascii()
    assert problem.isprintable()
