"""Callback and returned-funds delivery (interface section 6), received in-process."""

from __future__ import annotations

import pytest

from recon.constants import NotificationKind
from recon.ingest.notifications import read_fields
from recon.sandbox.config import SandboxConfig, default_merchant
from tests.integration.sandbox_support import CALLBACK_URL, RETURNS_URL, Receiver, sandbox_api

pytestmark = pytest.mark.anyio


def _subscribe(*states: int) -> list[dict[str, object]]:
    return [{"url": CALLBACK_URL, "transaction_state": s} for s in states]


async def test_a_callback_carries_the_documented_headers_and_body() -> None:
    """POST to the subscribed url with the three documented headers and the 6.3 body."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        payout = await api.payout("10.00", callbacks=_subscribe(4))
        await api.advance(0)
        [callback] = receiver.received
        assert (callback.path, callback.query) == ("/callbacks", "shop=7")
        assert callback.headers["user-agent"] == "Service Callback"
        assert callback.headers["content-type"] == "application/json"
        assert callback.headers["accept-encoding"] == "gzip, deflate"
        kind, fields, problems = read_fields(callback.body)
        assert (kind, problems) == (NotificationKind.TRANSACTION, [])
        assert callback.body["merchant_id"] == "sandbox-merchant"
        assert (fields["transaction_id"], fields["state"]) == (payout["id"], 4)


async def test_only_subscribed_states_are_called_back() -> None:
    """A payout subscribed to 6 only is called back when it settles, not when it completes."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        await api.payout("10.00", callbacks=_subscribe(2, 3, 6))
        await api.advance(30)
        assert receiver.received == []
        await api.advance(31)
        assert [r.body["transaction_state"] for r in receiver.received] == [6]


async def test_a_failing_receiver_is_retried_at_10_30_and_60_minutes_until_it_answers_200() -> None:
    """Attempts at 0, 10 and 30 minutes; the third is answered 200, so no fourth."""
    receiver = Receiver(statuses=[500, 503])
    async with sandbox_api(receiver=receiver) as api:
        await api.payout("11.01", callbacks=_subscribe(2))
        await api.advance(0)
        assert len(receiver.received) == 1
        await api.advance(9 * 60)
        assert len(receiver.received) == 1
        await api.advance(60)
        assert len(receiver.received) == 2
        await api.advance(20 * 60)
        assert len(receiver.received) == 3
        await api.advance(2 * 3600)
        assert len(receiver.received) == 3
        log = await api.deliveries()
        assert [(d["attempt"], d["status"], d["delivered"]) for d in log] == [
            (1, 500, False),
            (2, 503, False),
            (3, 200, True),
        ]
        assert [d["due"] - log[0]["due"] for d in log] == [0, 600, 1800]


async def test_nothing_is_sent_after_the_fourth_attempt() -> None:
    """A receiver that never answers 200 gets exactly four attempts, the last at 60 minutes."""
    receiver = Receiver(statuses=[500] * 10)
    async with sandbox_api(receiver=receiver) as api:
        await api.payout("12.01", callbacks=_subscribe(3))
        await api.advance(6 * 3600)
        assert len(receiver.received) == 4
        log = await api.deliveries()
        assert [d["due"] - log[0]["due"] for d in log] == [0, 600, 1800, 3600]


async def test_an_unreachable_receiver_is_logged_and_retried() -> None:
    """A connection error counts as unanswered: logged with the error and retried."""
    async with sandbox_api() as api:  # no callback transport: merchant.test does not resolve
        await api.payout(
            "12.01", callbacks=[{"url": "http://127.0.0.1:9/cb", "transaction_state": 3}]
        )
        await api.advance(3600)
        log = await api.deliveries()
        assert len(log) == 4
        assert all(d["status"] is None and d["error"] for d in log)


async def test_a_returned_funds_notification_is_retried_on_the_same_schedule() -> None:
    """The RETURNED_TRANSACTION notification is retried at 10 minutes when not answered 200."""
    receiver = Receiver(statuses=[502])
    merchant = default_merchant().model_copy(update={"returned_funds_url": RETURNS_URL})
    async with sandbox_api(SandboxConfig(merchants=[merchant]), receiver) as api:
        payout = await api.payout("14.01")
        await api.advance(121)
        assert len(receiver.received) == 1
        await api.advance(600)
        assert len(receiver.received) == 2
        assert receiver.received[0].body == receiver.received[1].body
        assert receiver.received[1].body["original_transaction_id"] == payout["id"]
        assert receiver.received[1].body["notification_type"] == "RETURNED_TRANSACTION"
