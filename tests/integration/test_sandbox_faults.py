"""Injected faults of the sandbox over HTTP: 5xx, 429, rate limit, broken bodies, latency."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from recon import jsonparse
from recon.sandbox.config import FaultConfig, SandboxConfig
from tests.integration.sandbox_support import Api, sandbox_api

pytestmark = pytest.mark.anyio


async def _set_faults(api: Api, **faults: object) -> None:
    response = await api.client.post("/sandbox/faults", json=faults)
    assert response.status_code == 200, response.text


async def test_a_share_of_answers_is_a_server_error() -> None:
    """error_rate 0.3 turns about 30% of answers into 5xx internal_error, reproducibly."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        counts: list[Counter[int]] = []
        for _ in range(2):
            await _set_faults(api, error_rate=0.3, seed=7)
            statuses = [
                (await api.call("transaction.get", {"id": payout["id"]})) for _ in range(200)
            ]
            counts.append(Counter(r.status_code for r in statuses))
            failed = [r for r in statuses if r.status_code >= 500]
            assert {r.json()["error_name"] for r in failed} == {"internal_error"}
        assert counts[0] == counts[1]
        assert 40 <= sum(n for s, n in counts[0].items() if s >= 500) <= 80


async def test_injected_429_answers_carry_retry_after() -> None:
    """rate_429 answers 429 rate_limited with the configured Retry-After."""
    async with sandbox_api() as api:
        await _set_faults(api, rate_429=1.0, retry_after_seconds=7)
        response = await api.call("transaction.get", {"id": "x"})
        assert response.status_code == 429
        assert response.headers["retry-after"] == "7"
        assert response.json()["error_name"] == "rate_limited"


async def test_requests_above_the_rate_limit_are_answered_429() -> None:
    """With a limit of 3 per second, a burst of 10 gets 3 answers and then 429 + Retry-After."""
    async with sandbox_api() as api:
        await _set_faults(api, rate_limit_rps=3)
        statuses = [(await api.call("transaction.get", {"id": "x"})) for _ in range(10)]
        assert [r.status_code for r in statuses][:3] == [404, 404, 404]
        limited = [r for r in statuses if r.status_code == 429]
        assert len(limited) >= 6
        assert all(int(r.headers["retry-after"]) >= 1 for r in limited)


async def test_a_malformed_answer_is_a_200_that_is_not_json() -> None:
    """malformed_rate 1 answers 200 with a body that does not parse."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        await _set_faults(api, malformed_rate=1.0)
        response = await api.call("transaction.get", {"id": payout["id"]})
        assert response.status_code == 200
        with pytest.raises(ValueError, match=r"Expecting|Unterminated|delimiter"):
            jsonparse.loads(response.content)


async def test_an_answer_can_lack_its_state() -> None:
    """missing_state_rate 1 answers transaction.get without the required state field."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        await _set_faults(api, missing_state_rate=1.0)
        record = jsonparse.loads((await api.call("transaction.get", {"id": payout["id"]})).content)
        assert "state" not in record
        assert record["id"] == payout["id"]


async def test_latency_is_added_to_api_operations_but_not_to_admin_routes() -> None:
    """latency_ms delays /api answers; admin routes never meet faults."""
    config = SandboxConfig(faults=FaultConfig(latency_ms=150, error_rate=1.0))
    async with sandbox_api() as api:
        api.sandbox.faults.configure(config.faults)
        started = time.perf_counter()
        response = await api.call("transaction.get", {"id": "x"})
        api_took = time.perf_counter() - started
        assert api_took >= 0.15
        assert response.status_code >= 500
        started = time.perf_counter()
        assert (await api.client.get("/sandbox/clock")).status_code == 200
        assert time.perf_counter() - started < api_took  # no added latency, no fault


async def test_a_slow_share_delays_answers_by_slow_seconds() -> None:
    """slow_rate 1 with slow_seconds 0.2 makes each answer take at least 0.2 s."""
    async with sandbox_api() as api:
        await _set_faults(api, slow_rate=1.0, slow_seconds=0.2)
        started = time.perf_counter()
        await api.call("transaction.get", {"id": "x"})
        assert time.perf_counter() - started >= 0.2


async def test_the_fault_token_lifetime_applies_to_new_tokens() -> None:
    """token_lifetime_seconds set as a fault makes newly issued tokens expire that soon."""
    async with sandbox_api() as api:
        await _set_faults(api, token_lifetime_seconds=10)
        await api.authorize()
        await api.advance(11)
        assert (await api.call("transaction.get", {"id": "x"})).status_code == 401


async def test_a_wrong_fault_setting_is_refused_and_named() -> None:
    """POST /sandbox/faults with a share above 1 is 400 naming the field; nothing changes."""
    async with sandbox_api() as api:
        response = await api.client.post("/sandbox/faults", json={"error_rate": 2})
        assert response.status_code == 400
        assert "error_rate" in response.json()["error_message"]
        current = jsonparse.loads((await api.client.get("/sandbox/faults")).content)
        assert current["error_rate"] == 0
