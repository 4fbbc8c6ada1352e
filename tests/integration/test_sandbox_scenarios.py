"""The sandbox plays the provider's oddities recon must survive, through its admin routes over HTTP.

Late bank confirmations, settled payouts reversed to failed or aborted, many returns
per payout (larger than it, in another currency, on an unsettled payout, with the notification
suppressed or claiming another amount), answers that differ from the record (drift, undocumented
states, another transaction's answer), a session id asked for as a transaction id, and
transaction notifications on demand; and an id refused to this merchant
account.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from recon import jsonparse
from recon.sandbox.config import SandboxConfig, default_merchant
from tests.integration.sandbox_support import CALLBACK_URL, RETURNS_URL, Api, Receiver, sandbox_api

pytestmark = pytest.mark.anyio

DAY = 86400


def _with_returns_url(**merchant: Any) -> SandboxConfig:
    return SandboxConfig(
        merchants=[
            default_merchant().model_copy(update={"returned_funds_url": RETURNS_URL, **merchant})
        ]
    )


async def _admin(api: Api, tx_id: str, action: str, body: Any = None) -> Any:
    content = b"" if body is None else jsonparse.dumpb(body)
    response = await api.client.post(f"/sandbox/transactions/{tx_id}/{action}", content=content)
    assert response.status_code in (200, 202), response.text
    return jsonparse.loads(response.content)


async def _settled(api: Api, amount: str = "10.00", **extra: Any) -> str:
    payout_id: str = (await api.payout(amount, **extra))["id"]
    await api.advance(61)
    return payout_id


# --- 1. a bank confirmation after days or weeks -------------------------------------------------


async def test_a_bank_confirms_a_failed_payout_five_weeks_later() -> None:
    """12.01 fails (3); 35 days of clock later the bank confirms it: 5, then 6, each called back."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        callbacks = [{"url": CALLBACK_URL, "transaction_state": s} for s in (3, 5, 6)]
        payout = await api.payout("12.01", callbacks=callbacks)
        await api.advance(35 * DAY)
        confirmed = await _admin(api, payout["id"], "confirm")
        assert confirmed["state"] == 5
        await api.advance(61)
        await api.authorize()  # the token of day 0 has long expired
        record = await api.tx(payout["id"])
        assert record["state"] == 6
        assert record["settled"] - record["credited"] == 60
        assert record["credited"] - record["created"] >= 35 * DAY
        assert [r.body["transaction_state"] for r in receiver.received] == [3, 5, 6]


async def test_a_confirmation_set_for_day_four_is_stamped_day_four_when_a_week_passes() -> None:
    """confirm {"after_seconds"}: advancing a week at once stamps credited at day 4, not day 7."""
    async with sandbox_api() as api:
        payout = await api.payout("11.01")
        await _admin(api, payout["id"], "confirm", {"after_seconds": 4 * DAY})
        await api.advance(2 * DAY)
        await api.authorize()
        assert (await api.tx(payout["id"]))["state"] == 2
        await api.advance(5 * DAY)
        await api.authorize()
        record = await api.tx(payout["id"])
        assert record["state"] == 6
        assert abs(record["credited"] - record["created"] - 4 * DAY) < 1
        assert record["error_code"] == "bank_rejected_transaction"


async def test_a_settled_payout_is_reversed_to_failed_and_called_back() -> None:
    """reverse {"state": 3}: the settled payout answers 3 with the error code, called back."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        callbacks = [{"url": CALLBACK_URL, "transaction_state": s} for s in (3, 6)]
        payout_id = await _settled(api, callbacks=callbacks)
        body = {"state": 3, "error_code": "bank_rejected_transaction"}
        reversed_ = await _admin(api, payout_id, "reverse", body)
        assert (reversed_["state"], reversed_["error_code"]) == (3, "bank_rejected_transaction")
        record = await api.tx(payout_id)
        assert (record["state"], record["settled"] is not None) == (3, True)
        assert [r.body["transaction_state"] for r in receiver.received] == [6, 3]


async def test_only_a_settled_payout_is_reversed_and_only_to_2_or_3() -> None:
    """A payout not in state 6 is 409 invalid_state; a state other than 2 or 3 is 400."""
    async with sandbox_api() as api:
        failed = (await api.payout("12.01"))["id"]
        settled = await _settled(api)
        wrong = await api.client.post(f"/sandbox/transactions/{failed}/reverse", content=b"{}")
        assert (wrong.status_code, wrong.json()["error_name"]) == (409, "invalid_state")
        bad = await api.client.post(
            f"/sandbox/transactions/{settled}/reverse", content=b'{"state": 5}'
        )
        assert bad.status_code == 400
        assert "state" in bad.json()["error_message"]
        aborted = await _admin(api, settled, "reverse", {"state": 2})
        assert aborted["state"] == 2


# --- 2. returns ---------------------------------------------------------------------------------


async def test_a_payout_is_returned_twice_for_more_than_it_paid() -> None:
    """Two type-13 returns (6.00 and 7.00) of a 10.00 payout; the payout names the latest."""
    receiver = Receiver()
    async with sandbox_api(_with_returns_url(), receiver) as api:
        payout_id = await _settled(api)
        first = await _admin(api, payout_id, "return", {"amount": Decimal("6.00")})
        second = await _admin(api, payout_id, "return", {"amount": Decimal("7.00")})
        assert first["id"] != second["id"]
        for returned, amount in ((first, "6.00"), (second, "7.00")):
            answer = await api.tx(returned["id"])
            assert (answer["type"], answer["amount"]) == (13, Decimal(amount))
            assert answer["related_transaction_id"] == payout_id
        assert (await api.tx(payout_id))["related_transaction_id"] == second["id"]
        assert api.sandbox.transactions[payout_id].returns == [first["id"], second["id"]]
        notified = [r.body["transaction_id"] for r in receiver.received]
        assert notified == [first["id"], second["id"]]


async def test_a_single_return_can_be_larger_than_its_payout() -> None:
    """A 25.00 return of a 10.00 payout is answered as the provider would record it."""
    async with sandbox_api() as api:
        payout_id = await _settled(api)
        returned = await _admin(api, payout_id, "return", {"amount": Decimal("25.00")})
        assert (await api.tx(returned["id"]))["amount"] == Decimal("25.00")


@pytest.mark.parametrize(("currency", "amount"), [("SEK", "4.00"), ("JPY", "1000")])
async def test_a_return_comes_back_in_another_currency(currency: str, amount: str) -> None:
    """A return of a EUR payout in SEK (or JPY, no decimals) carries its own currency_id."""
    receiver = Receiver()
    async with sandbox_api(_with_returns_url(), receiver) as api:
        payout_id = await _settled(api)
        body = {"amount": Decimal(amount), "currency": currency.lower()}
        returned = await _admin(api, payout_id, "return", body)
        answer = await api.tx(returned["id"])
        assert (answer["currency_id"], answer["amount"]) == (currency.lower(), Decimal(amount))
        assert (await api.tx(payout_id))["currency_id"] == "eur"
        [note] = receiver.received
        assert note.body["amount"] == Decimal(amount)


async def test_a_return_in_a_currency_must_fit_its_minor_units() -> None:
    """JPY has no decimals: a 10.50 JPY return is refused 400 and creates nothing."""
    async with sandbox_api() as api:
        payout_id = await _settled(api)
        response = await api.client.post(
            f"/sandbox/transactions/{payout_id}/return",
            content=b'{"amount": 10.50, "currency": "JPY"}',
        )
        assert response.status_code == 400
        assert api.sandbox.transactions[payout_id].returns == []


@pytest.mark.parametrize(("amount", "state"), [("12.01", 3), ("13.01", 4), ("11.02", 2)])
async def test_a_return_on_an_unsettled_payout_needs_any_state(amount: str, state: int) -> None:
    """A return on a failed, still-pending or aborted payout: 409 unless {"any_state": true}."""
    async with sandbox_api() as api:
        payout = await api.payout(amount)
        refused = await api.client.post(f"/sandbox/transactions/{payout['id']}/return")
        assert refused.status_code == 409
        returned = await _admin(api, payout["id"], "return", {"any_state": True})
        record = await api.tx(payout["id"])
        assert (record["state"], record["related_transaction_id"]) == (state, returned["id"])
        assert (await api.tx(returned["id"]))["state"] == 6


async def test_a_return_with_its_notification_suppressed_is_found_only_by_polling() -> None:
    """{"notify": false}: nothing is posted; the payout's answer names the return all the same."""
    receiver = Receiver()
    async with sandbox_api(_with_returns_url(), receiver) as api:
        payout_id = await _settled(api)
        assert (await api.tx(payout_id))["related_transaction_id"] is None
        returned = await _admin(api, payout_id, "return", {"notify": False})
        await api.advance(2 * 3600)
        assert receiver.received == []
        [log] = [d for d in await api.deliveries() if d["kind"] == "returned_funds"]
        assert (log["error"], log["status"]) == ("suppressed", None)
        link = (await api.tx(payout_id))["related_transaction_id"]
        assert link == returned["id"]
        assert (await api.tx(link))["type"] == 13


async def test_a_return_can_be_set_for_a_later_day() -> None:
    """{"after_seconds"}: answered 202; the return exists once the clock passes that time."""
    async with sandbox_api() as api:
        payout_id = await _settled(api)
        answer = await _admin(api, payout_id, "return", {"after_seconds": 10 * DAY})
        assert answer["scheduled"] is True
        assert api.sandbox.transactions[payout_id].returns == []
        await api.advance(10 * DAY)
        await api.authorize()
        [returned_id] = api.sandbox.transactions[payout_id].returns
        returned = await api.tx(returned_id)
        assert returned["created"] >= returned["settled"]
        assert (await api.tx(payout_id))["related_transaction_id"] == returned_id


# --- 3. a notification that differs from the provider's answer ----------------------------------


async def test_a_returned_funds_notification_can_claim_another_amount() -> None:
    """{"notified_amount"}: the notification says 5.00, transaction.get of the return 9.99."""
    receiver = Receiver()
    async with sandbox_api(_with_returns_url(), receiver) as api:
        payout_id = await _settled(api, "9.99")
        body = {"notified_amount": Decimal("5.00")}
        returned = await _admin(api, payout_id, "return", body)
        [note] = receiver.received
        assert note.body["amount"] == Decimal("5.00")
        assert note.body["transaction_id"] == returned["id"]
        assert (await api.tx(returned["id"]))["amount"] == Decimal("9.99")


# --- 4, 5, 7. answers that differ from the record -----------------------------------------------


async def test_an_answer_can_drift_from_the_recorded_reference_and_account() -> None:
    """answer {"fields"}: another merchant_reference and to_bank_account_id; the record stays."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00", merchant_reference="order-1")
        fields = {"merchant_reference": "order-2", "to_bank_account_id": "acct-elsewhere"}
        shown = await _admin(api, payout["id"], "answer", {"fields": fields})
        assert shown["answer"]["merchant_reference"] == "order-2"
        assert shown["record"]["merchant_reference"] == "order-1"
        await api.advance(61)
        answer = await api.tx(payout["id"])
        assert (answer["merchant_reference"], answer["to_bank_account_id"]) == (
            "order-2",
            "acct-elsewhere",
        )
        assert answer["state"] == 6  # the payout settles underneath as usual
        await _admin(api, payout["id"], "answer", {})
        assert (await api.tx(payout["id"]))["merchant_reference"] == "order-1"


@pytest.mark.parametrize("state", ["STATE_REFUNDED", 9, "8"])
async def test_an_answer_can_carry_an_undocumented_state(state: Any) -> None:
    """{"fields": {"state": ...}}: a name or number the interface does not list, sent as given."""
    async with sandbox_api() as api:
        payout_id = await _settled(api)
        await _admin(api, payout_id, "answer", {"fields": {"state": state}})
        response = await api.call("transaction.get", {"id": payout_id})
        assert response.status_code == 200
        assert jsonparse.loads(response.content)["state"] == state
        assert api.sandbox.transactions[payout_id].state == 6


async def test_an_answer_can_be_another_transactions_answer() -> None:
    """{"answer_of": B}: transaction.get of A answers B's record, whose id is not A."""
    async with sandbox_api() as api:
        a = await api.payout("10.00", merchant_reference="a")
        b = await api.payout("12.01", merchant_reference="b")
        await _admin(api, a["id"], "answer", {"answer_of": b["id"]})
        answer = await api.tx(a["id"])
        assert (answer["id"], answer["state"], answer["merchant_reference"]) == (b["id"], 3, "b")
        await _admin(api, a["id"], "answer", {})
        assert (await api.tx(a["id"]))["id"] == a["id"]


async def test_an_answer_override_names_unknown_fields_and_transactions() -> None:
    """Unknown body fields and an unknown answer_of are refused with a message naming them."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        url = f"/sandbox/transactions/{payout['id']}/answer"
        wrong = await api.client.post(url, json={"feilds": {}})
        assert wrong.status_code == 400
        assert "feilds" in wrong.json()["error_message"]
        missing = await api.client.post(url, json={"answer_of": "nope"})
        assert missing.status_code == 404


# --- 6. a session id asked for as a transaction id ----------------------------------------------


async def test_a_session_id_asked_for_as_a_transaction_says_a_session_was_found() -> None:
    """transaction.get(session id) is an error saying so; session.get gives its transaction_id."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        session = await _admin(api, payout["id"], "session")
        assert session["transaction_id"] == payout["id"]
        response = await api.call("transaction.get", {"id": session["id"]})
        assert response.status_code == 404
        assert response.json() == {
            "error_name": "session_found",
            "error_message": "a session was found with that id; "
            "read its transaction_id with session.get",
        }
        read = await api.ok("session.get", {"id": session["id"]})
        assert (read["transaction_id"], read["state"]) == (payout["id"], 12)
        assert (await api.tx(payout["id"]))["session_id"] == session["id"]
        unknown = await api.call("transaction.get", {"id": "no-such-id"})
        assert unknown.json()["error_name"] == "transaction_not_found"


# --- an id refused to this merchant account ---------------------------------------------------


@pytest.mark.parametrize("status", [403, 401])
async def test_an_id_can_be_refused_to_its_merchant_whatever_the_token(status: int) -> None:
    """refuse {"status"}: transaction.get of that id answers it, even with a fresh token; other
    ids and merchant.authorize keep working, and {"status": null} answers it again."""
    async with sandbox_api() as api:
        refused = await api.payout("10.00", merchant_reference="a")
        other = await api.payout("10.00", merchant_reference="b")
        said = await _admin(api, refused["id"], "refuse", {"status": status})
        assert said == {"id": refused["id"], "refused_status": status}
        await api.authorize()  # a freshly issued token
        response = await api.call("transaction.get", {"id": refused["id"]})
        assert response.status_code == status
        assert response.json()["error_message"] == (
            "this transaction is not available to this merchant account"
        )
        assert (await api.tx(other["id"]))["id"] == other["id"]
        await _admin(api, refused["id"], "refuse", {"status": None})
        assert (await api.tx(refused["id"]))["id"] == refused["id"]


async def test_refusing_takes_only_401_or_403() -> None:
    """Any other status, or an unknown field, is refused with a message naming it."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        url = f"/sandbox/transactions/{payout['id']}/refuse"
        for body in ({"status": 404}, {"status": "403"}, {"stauts": 403}):
            wrong = await api.client.post(url, json=body)
            assert wrong.status_code == 400
            assert "stat" in wrong.json()["error_message"]
        default = await api.client.post(url)
        assert default.json()["refused_status"] == 403


# --- 8. transaction notifications on demand -----------------------------------------------------


async def test_a_transaction_notification_can_be_sent_for_any_payout() -> None:
    """notify {"state": 3, "url"}: the 6.3 body is posted there, whatever the payout's state."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        payout_id = await _settled(api)
        answer = await _admin(api, payout_id, "notify", {"state": 3, "url": CALLBACK_URL})
        assert answer["urls"] == [CALLBACK_URL]
        [note] = receiver.received
        assert (note.path, note.query) == ("/callbacks", "shop=7")
        assert note.body == {
            "merchant_id": "sandbox-merchant",
            "transaction_id": payout_id,
            "transaction_state": 3,
        }
        assert note.headers["user-agent"] == "Service Callback"


async def test_a_notification_goes_to_the_subscribed_url_else_the_merchants() -> None:
    """Without url: the payout's subscription for that state, else the merchant's callback_url."""
    receiver = Receiver()
    config = _with_returns_url(callback_url="http://merchant.test/default")
    async with sandbox_api(config, receiver) as api:
        subscribed = await api.payout(
            "12.01", callbacks=[{"url": "http://merchant.test/sub", "transaction_state": 2}]
        )
        plain = await api.payout("11.01", merchant_reference="plain")
        await _admin(api, subscribed["id"], "notify", {"state": 2})
        await _admin(api, plain["id"], "notify")
        assert [(r.path, r.body["transaction_state"]) for r in receiver.received] == [
            ("/sub", 2),
            ("/default", 2),
        ]


async def test_a_notification_without_any_url_is_refused() -> None:
    """No url given, subscribed or configured: 409 no_callback_url, nothing logged."""
    async with sandbox_api() as api:
        payout = await api.payout("12.01")
        response = await api.client.post(f"/sandbox/transactions/{payout['id']}/notify")
        assert response.status_code == 409
        assert response.json()["error_name"] == "no_callback_url"
        assert await api.deliveries() == []


async def test_an_unanswered_notification_is_retried_on_the_documented_schedule() -> None:
    """A triggered notification meets the same 0/10/30/60-minute retries as any other."""
    receiver = Receiver(statuses=[500, 500, 200])
    async with sandbox_api(receiver=receiver) as api:
        payout = await api.payout("12.01")
        await _admin(api, payout["id"], "notify", {"url": CALLBACK_URL})
        await api.advance(3600)
        assert [d["attempt"] for d in await api.deliveries()] == [1, 2, 3]
        assert [r.body["transaction_state"] for r in receiver.received] == [3, 3, 3]


# --- the same through the Python API (what end-to-end nights call in-process) -------------------


async def test_the_python_api_plays_the_same_cases_as_the_routes() -> None:
    """confirm/return_funds/override_answer/notify_transaction/session_for on the state machine."""
    receiver = Receiver()
    async with sandbox_api(_with_returns_url(), receiver) as api:
        sandbox = api.sandbox
        failed = (await api.payout("12.01"))["id"]
        settled = await _settled(api, "20.00", merchant_reference="s")
        sandbox.confirm(failed, after_seconds=3 * DAY)
        returned = sandbox.return_funds(settled, Decimal("30.00"), currency="NOK", notify=False)
        assert returned is not None
        sandbox.override_answer(settled, {"state": "STATE_REFUNDED"})
        assert sandbox.notify_transaction(failed, 3, CALLBACK_URL) == [CALLBACK_URL]
        session = sandbox.session_for(failed)
        await sandbox.process_due()
        assert [r.body.get("transaction_state") for r in receiver.received] == [3]
        await api.advance(4 * DAY)
        await api.authorize()
        assert (await api.tx(failed))["state"] == 6
        answer = await api.tx(settled)
        assert (answer["state"], answer["related_transaction_id"]) == (
            "STATE_REFUNDED",
            returned.id,
        )
        assert (await api.tx(returned.id))["currency_id"] == "nok"
        refused = await api.call("transaction.get", {"id": session.id})
        assert refused.json()["error_name"] == "session_found"
