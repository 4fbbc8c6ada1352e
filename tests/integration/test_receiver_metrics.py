"""The receiver's GET /metrics: notifications stored by kind and requests refused by reason, read
back with prometheus_client's parser (the receiver's real app, a real database)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from recon.ingest.receiver import create_receiver_app
from recon.settings import Settings

JSON = {"content-type": "application/json"}


def values(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    families = text_string_to_metric_families(text)
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}


@pytest.mark.anyio
async def test_metrics_count_stored_notifications_by_kind_and_refusals_by_reason(
    engine: Engine,
) -> None:
    """Two transactions (one repeated), one session, a non-JSON body, a wrong media type."""
    merchant = "m-" + uuid.uuid4().hex
    app = create_receiver_app(Settings(), engine)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        bodies = [
            {"merchant_id": merchant, "transaction_id": "t-1", "transaction_state": 6},
            {"merchant_id": merchant, "transaction_id": "t-1", "transaction_state": 6},
            {"merchant_id": merchant, "transaction_id": "t-2", "transaction_state": 6},
            {"merchant_id": merchant, "session_id": "s-1", "session_state": 12},
        ]
        for body in bodies:
            answer = await client.post("/callbacks", content=json.dumps(body), headers=JSON)
            assert answer.status_code == 200
        assert (await client.post("/callbacks", content=b"{", headers=JSON)).status_code == 400
        wrong = await client.post("/callbacks", content=b"{}", headers={"content-type": "text/x"})
        assert wrong.status_code == 415
        answer = await client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    found = values(answer.text)
    assert found[("recon_notifications_stored_total", (("kind", "transaction"),))] == 2
    assert found[("recon_notifications_stored_total", (("kind", "session"),))] == 1
    refused = "recon_notifications_refused_total"
    assert found[(refused, (("reason", "malformed_body"),))] == 1
    assert found[(refused, (("reason", "unsupported_media_type"),))] == 1


@pytest.mark.anyio
async def test_a_client_outside_the_allowed_networks_is_counted_as_forbidden(
    engine: Engine,
) -> None:
    """RECON_RECEIVER_ALLOW_NETWORKS refuses 203.0.113.9 with 403; /metrics counts it."""
    app = create_receiver_app(Settings(receiver_allow_networks=["127.0.0.0/8"]), engine)
    outside = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=outside, base_url="http://receiver") as client:
        assert (await client.post("/callbacks", content=b"{}", headers=JSON)).status_code == 403
    inside = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=inside, base_url="http://receiver") as client:
        text = (await client.get("/metrics")).text
    assert values(text)[("recon_notifications_refused_total", (("reason", "forbidden"),))] == 1
