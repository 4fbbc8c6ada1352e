"""The sandbox's payouts over HTTP (in-process): auth, validation, 4.6.1, amounts of 7.3, admin."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from recon import jsonparse
from recon.provider.models import Transaction
from recon.sandbox.app import create_app
from recon.sandbox.config import FaultConfig, Merchant, SandboxConfig, default_merchant
from tests.integration.sandbox_support import IBANS, RETURNS_URL, Receiver, sandbox_api

pytestmark = pytest.mark.anyio


# --- authorisation ------------------------------------------------------------------------------


async def test_every_authorize_call_issues_a_new_token_with_an_absolute_expiry() -> None:
    """merchant.authorize answers access_token, expires (epoch, ~6 h ahead) and refresh_token."""
    async with sandbox_api() as api:
        first = await api.ok(
            "merchant.authorize", {"public_key": "sandbox-public-key", "secret": "sandbox-secret"}
        )
        second = await api.ok(
            "merchant.authorize", {"public_key": "sandbox-public-key", "secret": "sandbox-secret"}
        )
        assert first["access_token"] != second["access_token"]
        assert set(first) == {"access_token", "expires", "refresh_token"}
        lifetime = first["expires"] - Decimal(repr(api.sandbox.clock.now()))
        assert Decimal(6 * 3600 - 5) < lifetime <= Decimal(6 * 3600)


async def test_a_wrong_secret_is_unauthorized_and_not_echoed() -> None:
    """A wrong secret is a 401 unauthorized whose message does not repeat the secret."""
    async with sandbox_api() as api:
        response = await api.call(
            "merchant.authorize", {"public_key": "sandbox-public-key", "secret": "guess-me"}, ""
        )
        assert response.status_code == 401
        assert response.json()["error_name"] == "unauthorized"
        assert "guess-me" not in response.text


@pytest.mark.parametrize("token", ["", "not-a-token"])
async def test_an_operation_without_a_valid_token_is_unauthorized(token: str) -> None:
    """A missing or unknown bearer token is answered 401 unauthorized."""
    async with sandbox_api() as api:
        response = await api.call("transaction.get", {"id": "x"}, token=token)
        assert response.status_code == 401
        assert response.json()["error_name"] == "unauthorized"


async def test_a_token_expires_when_the_clock_passes_its_lifetime() -> None:
    """Advancing the sandbox clock past the token lifetime makes the token a 401."""
    config = SandboxConfig(token_lifetime_seconds=120)
    async with sandbox_api(config) as api:
        await api.account()
        await api.advance(121)
        response = await api.call("bank_account.create", {"country_id": "DE", "iban": IBANS["DE"]})
        assert response.status_code == 401
        assert response.json()["error_message"] == "access token expired"


async def test_a_merchant_cannot_read_another_merchants_payout() -> None:
    """Transactions are looked up per merchant: another merchant's id is not found."""
    other = Merchant(merchant_id="other", public_key="other-key", secret=SecretStr("other-secret"))
    async with sandbox_api(SandboxConfig(merchants=[default_merchant(), other])) as api:
        payout = await api.payout("10.00")
        token = (
            await api.ok(
                "merchant.authorize", {"public_key": "other-key", "secret": "other-secret"}
            )
        )["access_token"]
        response = await api.call("transaction.get", {"id": payout["id"]}, token=token)
        assert response.status_code == 404
        assert response.json()["error_name"] == "transaction_not_found"


# --- requests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["/api/", "/"])
async def test_operations_answer_with_and_without_the_api_prefix(prefix: str) -> None:
    """Every operation is served at /api/<op> and at /<op>."""
    async with sandbox_api() as api:
        account = await api.account()
        response = await api.call(
            "transaction.create_withdrawal",
            {"amount": Decimal("5.00"), "bank_account_id": account, "merchant_reference": "p"},
            prefix=prefix,
        )
        assert response.status_code == 200
        assert set(response.json()) == {"id", "eta"}


async def test_a_missing_field_is_invalid_and_named() -> None:
    """A withdrawal without merchant_reference is 400 invalid_request naming the field."""
    async with sandbox_api() as api:
        account = await api.account()
        response = await api.call(
            "transaction.create_withdrawal", {"amount": Decimal("5.00"), "bank_account_id": account}
        )
        assert response.status_code == 400
        assert response.json()["error_name"] == "invalid_request"
        assert "merchant_reference" in response.json()["error_message"]


async def test_a_body_that_is_not_json_is_invalid() -> None:
    """Malformed JSON is 400 invalid_request."""
    async with sandbox_api() as api:
        response = await api.client.post(
            "/api/transaction.get",
            content=b"{not json",
            headers={"authorization": f"Bearer {api.token}"},
        )
        assert response.status_code == 400
        assert response.json() == {
            "error_name": "invalid_request",
            "error_message": "body: not valid JSON",
        }


async def test_an_unknown_bank_account_is_invalid() -> None:
    """A withdrawal to an unknown bank_account_id is 400 and names bank_account_id."""
    async with sandbox_api() as api:
        response = await api.call(
            "transaction.create_withdrawal",
            {"amount": Decimal("5.00"), "bank_account_id": "nope", "merchant_reference": "r"},
        )
        assert response.status_code == 400
        assert "bank_account_id" in response.json()["error_message"]


async def test_an_unknown_transaction_is_not_found() -> None:
    """transaction.get of an unknown id is 404 transaction_not_found."""
    async with sandbox_api() as api:
        response = await api.call("transaction.get", {"id": "missing"})
        assert response.status_code == 404
        assert response.json()["error_name"] == "transaction_not_found"


async def test_a_statement_reference_of_105_characters_is_accepted_and_106_is_not() -> None:
    """statement_reference is limited to 105 characters (8. Limits)."""
    async with sandbox_api() as api:
        accepted = await api.payout("5.00", statement_reference="x" * 105)
        assert (await api.tx(accepted["id"]))["statement_reference"] == "x" * 105
        account = await api.account()
        response = await api.call(
            "transaction.create_withdrawal",
            {
                "amount": Decimal("5.00"),
                "bank_account_id": account,
                "merchant_reference": "long",
                "statement_reference": "x" * 106,
            },
        )
        assert response.status_code == 400
        assert response.json()["error_name"] == "invalid_request"
        assert "statement_reference" in response.json()["error_message"]


@pytest.mark.parametrize("country", ["SE", "FI"])
async def test_a_statement_reference_is_refused_for_sweden_and_finland(country: str) -> None:
    """Payouts to SE and FI accounts must not carry a statement_reference."""
    async with sandbox_api() as api:
        account = await api.account(country)
        response = await api.call(
            "transaction.create_withdrawal",
            {
                "amount": Decimal("5.00"),
                "bank_account_id": account,
                "merchant_reference": "r",
                "statement_reference": "Invoice 1",
            },
        )
        assert response.status_code == 400
        assert response.json()["error_name"] == "statement_reference_not_allowed"


@pytest.mark.parametrize(
    ("country", "currency"),
    [
        ("SE", "sek"),
        ("FI", "eur"),
        ("DK", "dkk"),
        ("NO", "nok"),
        ("GB", "gbp"),
        ("PL", "pln"),
        ("FR", "eur"),
        ("CH", "eur"),
    ],
)
async def test_the_currency_follows_the_bank_accounts_country(country: str, currency: str) -> None:
    """Without currency_id the payout currency is the account country's (else the default)."""
    async with sandbox_api() as api:
        payout = await api.payout("5.00", country)
        assert (await api.tx(payout["id"]))["currency_id"] == currency


async def test_an_explicit_currency_id_wins_and_must_fit_its_digits() -> None:
    """currency_id (undocumented) sets the currency; too many decimals for it is invalid."""
    async with sandbox_api() as api:
        payout = await api.payout("5.00", "SE", currency_id="eur")
        assert (await api.tx(payout["id"]))["currency_id"] == "eur"
        account = await api.account()
        response = await api.call(
            "transaction.create_withdrawal",
            {
                "amount": Decimal("5.5"),
                "bank_account_id": account,
                "merchant_reference": "jpy",
                "currency_id": "JPY",
            },
        )
        assert response.status_code == 400
        assert "amount" in response.json()["error_message"]


# --- idempotency (4.6.1) ------------------------------------------------------------------------


async def test_repeating_a_reference_with_the_same_amount_returns_the_original() -> None:
    """Same merchant_reference and amount: the original id, and no new transaction."""
    async with sandbox_api() as api:
        first = await api.payout("25.50", merchant_reference="order-1")
        again = await api.payout("25.500", merchant_reference="order-1")
        assert again == first
        assert len(api.sandbox.transactions) == 1


async def test_reusing_a_reference_with_another_amount_is_a_conflict() -> None:
    """Same merchant_reference with a different amount: 409 merchant_reference_conflict."""
    async with sandbox_api() as api:
        await api.payout("25.50", merchant_reference="order-1")
        account = await api.account()
        response = await api.call(
            "transaction.create_withdrawal",
            {
                "amount": Decimal("25.51"),
                "bank_account_id": account,
                "merchant_reference": "order-1",
            },
        )
        assert response.status_code == 409
        assert response.json()["error_name"] == "merchant_reference_conflict"
        assert len(api.sandbox.transactions) == 1


# --- amounts and timings (7.3) ------------------------------------------------------------------


async def test_an_ordinary_payout_is_completed_then_settled_after_settle_after() -> None:
    """Any other amount: state 4 at creation, 6 after settle_after_seconds; eta matches."""
    async with sandbox_api(SandboxConfig(settle_after_seconds=90)) as api:
        payout = await api.payout("100.10")
        record = await api.tx(payout["id"])
        assert record["state"] == 4
        assert record["eta"] == payout["eta"] == record["created"] + 90
        await api.advance(85)
        assert (await api.tx(payout["id"]))["state"] == 4
        await api.advance(10)
        settled = await api.tx(payout["id"])
        assert settled["state"] == 6
        assert settled["settled"] == record["created"] + 90
        assert settled["error_code"] is None


@pytest.mark.parametrize(
    ("amount", "state", "error_code"),
    [
        ("11.01", 2, "bank_rejected_transaction"),
        ("11.02", 2, "invalid_recipient_account"),
        ("12.01", 3, None),
    ],
)
async def test_failing_amounts_end_in_their_state_and_error_code(
    amount: str, state: int, error_code: str | None
) -> None:
    """11.01 and 11.02 are aborted with their error_code; 12.01 fails without one; they stay."""
    async with sandbox_api() as api:
        payout = await api.payout(amount)
        await api.advance(3600)
        record = await api.tx(payout["id"])
        assert (record["state"], record["error_code"]) == (state, error_code)


async def test_13_01_is_delayed_in_bank_for_five_minutes_then_settles() -> None:
    """13.01 stays 4 with transaction_is_delayed_in_bank for 300 s, then 6 without error code."""
    async with sandbox_api() as api:
        payout = await api.payout("13.01")
        record = await api.tx(payout["id"])
        assert (record["state"], record["error_code"]) == (4, "transaction_is_delayed_in_bank")
        assert record["eta"] == record["created"] + 60 + 300
        await api.advance(295)
        assert (await api.tx(payout["id"]))["error_code"] == "transaction_is_delayed_in_bank"
        await api.advance(10)
        settled = await api.tx(payout["id"])
        assert (settled["state"], settled["error_code"]) == (6, None)
        assert settled["settled"] == record["created"] + 300


async def test_14_01_settles_and_is_returned_one_minute_later() -> None:
    """14.01: settled, then 60 s later a linked type-13 transaction and a notification."""
    receiver = Receiver()
    merchant = default_merchant().model_copy(update={"returned_funds_url": RETURNS_URL})
    async with sandbox_api(SandboxConfig(merchants=[merchant]), receiver) as api:
        payout = await api.payout("14.01", "SE")
        await api.advance(60 + 55)
        assert (await api.tx(payout["id"]))["related_transaction_id"] is None
        assert receiver.received == []
        await api.advance(10)
        record = await api.tx(payout["id"])
        assert record["state"] == 6
        returned = await api.tx(record["related_transaction_id"])
        assert returned["type"] == 13
        assert returned["related_transaction_id"] == payout["id"]
        assert returned["amount"] == Decimal("14.01")
        assert returned["created"] == record["settled"] + 60
        [note] = receiver.received
        assert note.path == "/returns"
        assert note.body == {
            "transaction_id": returned["id"],
            "original_transaction_id": payout["id"],
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": "sandbox-merchant",
            "country_id": "SE",
            "amount": Decimal("14.01"),
        }


async def test_the_answer_is_the_full_record_with_exact_amounts_and_masked_numbers() -> None:
    """transaction.get writes 11.01 exactly, lower-case codes and a masked account."""
    async with sandbox_api() as api:
        payout = await api.payout("11.01", "DE", customer_id="cust-9")
        response = await api.call("transaction.get", {"id": payout["id"]})
        assert '"amount":11.01,' in response.text
        record = Transaction.model_validate(jsonparse.loads(response.content))
        assert (record.type, record.currency_id, record.country_id) == (1, "EUR", "DE")
        assert record.customer_id == "cust-9"
        assert record.to_bank_account is not None
        assert record.to_bank_account.iban == "DE" + "*" * 16 + "3000"
        assert record.to_bank_account.bban == "*" * 14 + "3000"


# --- bank-side admin actions (3.3) --------------------------------------------------------------


async def test_a_bank_confirmation_moves_an_aborted_payout_to_credit_then_settled() -> None:
    """POST /sandbox/transactions/{id}/confirm: 2 -> 5 now, 6 after settle_after_seconds."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        callbacks = [{"url": "http://merchant.test/cb", "transaction_state": s} for s in (5, 6)]
        payout = await api.payout("11.01", callbacks=callbacks)
        response = await api.client.post(f"/sandbox/transactions/{payout['id']}/confirm")
        assert response.status_code == 200
        assert (await api.tx(payout["id"]))["state"] == 5
        await api.advance(61)
        assert (await api.tx(payout["id"]))["state"] == 6
        assert [r.body["transaction_state"] for r in receiver.received] == [5, 6]


async def test_a_settled_payout_cannot_be_confirmed() -> None:
    """Confirming a payout that is not aborted or failed is 409 invalid_state."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        response = await api.client.post(f"/sandbox/transactions/{payout['id']}/confirm")
        assert response.status_code == 409
        assert response.json()["error_name"] == "invalid_state"


async def test_a_bank_return_of_part_of_a_settled_payout_creates_a_linked_transaction() -> None:
    """POST /sandbox/transactions/{id}/return {"amount"}: a type-13 transaction of that amount."""
    async with sandbox_api() as api:
        payout = await api.payout("50.00")
        early = await api.client.post(f"/sandbox/transactions/{payout['id']}/return")
        assert early.status_code == 409
        await api.advance(61)
        response = await api.client.post(
            f"/sandbox/transactions/{payout['id']}/return", content=b'{"amount": 20.05}'
        )
        assert response.status_code == 200
        returned = jsonparse.loads(response.content)
        assert (returned["type"], returned["amount"]) == (13, Decimal("20.05"))
        assert (await api.tx(payout["id"]))["related_transaction_id"] == returned["id"]
        [note] = await api.deliveries()
        assert (note["kind"], note["error"]) == ("returned_funds", "no url configured")


async def test_the_admin_listing_shows_every_transaction() -> None:
    """GET /sandbox/transactions lists all transactions with their state."""
    async with sandbox_api() as api:
        ids = {(await api.payout(a))["id"] for a in ("1.00", "11.02")}
        listing = jsonparse.loads((await api.client.get("/sandbox/transactions")).content)
        assert {t["id"] for t in listing["transactions"]} == ids


async def test_admin_routes_do_not_exist_when_disabled() -> None:
    """With admin_enabled false the /sandbox/* routes are not served."""
    app = create_app(SandboxConfig(admin_enabled=False))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.test") as client:
        response = await client.post("/sandbox/clock/advance", json={"seconds": 1})
        assert response.status_code == 404
        assert (await client.get("/sandbox/transactions")).status_code == 404


async def test_a_create_whose_answer_is_dropped_makes_the_payout_and_answers_504() -> None:
    """drop_create_answer: the payout is made (callbacks go out), the merchant gets a 504 each
    time it asks with that reference, and other references are answered as usual."""
    config = SandboxConfig(faults=FaultConfig(drop_create_answer=("lost-1",)))
    async with sandbox_api(config) as api:
        account = await api.account()
        body = {
            "amount": Decimal("5.00"),
            "bank_account_id": account,
            "merchant_reference": "lost-1",
        }
        for _ in range(2):
            lost = await api.call("transaction.create_withdrawal", body)
            assert lost.status_code == 504
            assert lost.json()["error_name"] == "gateway_timeout"
        made = [t for t in api.sandbox.transactions.values() if t.merchant_reference == "lost-1"]
        assert len(made) == 1
        await api.ok("transaction.create_withdrawal", {**body, "merchant_reference": "lost-1-b"})
