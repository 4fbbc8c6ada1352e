"""A return that changes after the fact: the sandbox's admin route that makes a
type-13 return answer another amount, or 404."""

from __future__ import annotations

from decimal import Decimal

import pytest

from recon import jsonparse
from tests.integration.sandbox_support import sandbox_api

pytestmark = pytest.mark.anyio


async def test_a_return_can_be_made_to_answer_a_smaller_amount() -> None:
    """POST /sandbox/transactions/{return}/change {"amount": "10.00"}: transaction.get says so."""
    async with sandbox_api() as api:
        payout = await api.payout("14.01")
        await api.advance(400)
        returned = (await api.tx(payout["id"]))["related_transaction_id"]
        assert (await api.tx(returned))["amount"] == Decimal("14.01")
        response = await api.client.post(
            f"/sandbox/transactions/{returned}/change", content=b'{"amount": "10.00"}'
        )
        assert response.status_code == 200, response.text
        assert jsonparse.loads(response.content)["amount"] == Decimal("10.00")
        answer = await api.tx(returned)
        assert (answer["type"], answer["amount"]) == (13, Decimal("10.00"))


async def test_a_return_can_be_made_to_disappear() -> None:
    """{"gone": true}: the return answers 404 and its payout no longer names it."""
    async with sandbox_api() as api:
        payout = await api.payout("14.01")
        await api.advance(400)
        returned = (await api.tx(payout["id"]))["related_transaction_id"]
        response = await api.client.post(
            f"/sandbox/transactions/{returned}/change", content=b'{"gone": true}'
        )
        assert response.status_code == 200, response.text
        gone = await api.call("transaction.get", {"id": returned})
        assert gone.status_code == 404
        assert (await api.tx(payout["id"]))["related_transaction_id"] is None


async def test_only_a_returned_funds_transaction_can_be_changed() -> None:
    """A payout is 409 invalid_state; an amount that is not positive is 400."""
    async with sandbox_api() as api:
        payout = await api.payout("14.01")
        await api.advance(400)
        refused = await api.client.post(
            f"/sandbox/transactions/{payout['id']}/change", content=b'{"gone": true}'
        )
        assert refused.status_code == 409
        returned = (await api.tx(payout["id"]))["related_transaction_id"]
        bad = await api.client.post(
            f"/sandbox/transactions/{returned}/change", content=b'{"amount": 0}'
        )
        assert bad.status_code == 400
