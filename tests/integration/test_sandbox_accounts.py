"""Several merchants in one sandbox over HTTP: each account's keys reach only its own records."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from recon import jsonparse
from recon.sandbox.config import Merchant, SandboxConfig, default_merchant
from recon.sandbox.loopback import LoopbackSandbox
from tests.integration.sandbox_support import IBANS, Api, sandbox_api

pytestmark = pytest.mark.anyio

BRAND_B = Merchant(merchant_id="brand-b", public_key="brand-b-key", secret=SecretStr("b-secret"))
TWO = SandboxConfig(merchants=[default_merchant(), BRAND_B])


async def as_brand_b(api: Api) -> Api:
    """Another merchant's API calls on the same sandbox, with its own token."""
    other = Api(api.client, api.sandbox)
    answer = await api.client.post(
        "/api/merchant.authorize", json={"public_key": "brand-b-key", "secret": "b-secret"}
    )
    assert answer.status_code == 200, answer.text
    other.token = answer.json()["access_token"]
    return other


async def test_another_merchants_transaction_is_answered_as_an_unknown_id() -> None:
    """Brand B's token asking for the default merchant's payout gets exactly the answer of an
    id nobody has: 404 transaction_not_found (never its record, nor a hint that it exists)."""
    async with sandbox_api(TWO) as api:
        brand_b = await as_brand_b(api)
        payout = await api.payout("10.00")
        theirs = await brand_b.call("transaction.get", {"id": payout["id"]})
        assert theirs.status_code == 404
        assert theirs.json() == {
            "error_name": "transaction_not_found",
            "error_message": f"no transaction with id {payout['id']!r}",
        }
        assert (await api.tx(payout["id"]))["merchant_id"] == "sandbox-merchant"


async def test_each_merchant_has_its_own_references_accounts_and_sessions() -> None:
    """One merchant_reference at two merchants is two payouts; B cannot pay to A's bank account
    nor read A's session."""
    async with sandbox_api(TWO) as api:
        brand_b = await as_brand_b(api)
        mine = await api.payout("10.00", merchant_reference="order-1")
        theirs = await brand_b.payout("25.00", merchant_reference="order-1")
        assert mine["id"] != theirs["id"]
        assert (await brand_b.tx(theirs["id"]))["merchant_id"] == "brand-b"

        account_a = await api.account()
        paid = await brand_b.call(
            "transaction.create_withdrawal",
            {"amount": Decimal("5.00"), "bank_account_id": account_a, "merchant_reference": "x"},
        )
        assert paid.status_code == 400
        assert "unknown bank account" in paid.json()["error_message"]

        session = await api.ok("session.create_bank_account_selection", {"country_id": "FI"})
        read = await brand_b.call("session.get", {"id": session["id"]})
        assert read.status_code == 404
        assert read.json()["error_name"] == "session_not_found"


async def test_an_account_added_over_the_admin_route_authorizes_with_its_own_keys() -> None:
    """POST /sandbox/accounts serves a new merchant at once: its keys authorize, its payouts are
    its own, and GET /sandbox/accounts lists it without any secret."""
    async with sandbox_api() as api:
        added = await api.client.post(
            "/sandbox/accounts", json={"name": "brand-c", "secret": "c-secret"}
        )
        assert added.status_code == 201, added.text
        assert added.json()["public_key"] == "brand-c-public-key"
        token = await api.client.post(
            "/api/merchant.authorize",
            json={"public_key": "brand-c-public-key", "secret": "c-secret"},
        )
        brand_c = Api(api.client, api.sandbox)
        brand_c.token = token.json()["access_token"]
        payout = await brand_c.payout("10.00")
        assert (await brand_c.tx(payout["id"]))["merchant_id"] == "brand-c"
        assert (await api.call("transaction.get", {"id": payout["id"]})).status_code == 404

        listed = await api.client.get("/sandbox/accounts")
        names = [a["name"] for a in listed.json()["accounts"]]
        assert names == ["sandbox-merchant", "brand-c"]
        assert "secret" not in listed.text


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"name": "sandbox-merchant"}, 409, "account_exists"),
        ({"name": "brand-d", "public_key": "sandbox-public-key"}, 409, "account_exists"),
        ({"name": "brand d"}, 400, "name:"),
        ({"name": "brand-d", "colour": "red"}, 400, "colour"),
    ],
)
async def test_an_account_whose_name_or_key_is_taken_or_wrong_is_refused(
    body: dict[str, str], status: int, says: str
) -> None:
    """A name or key already served is 409 account_exists; a name with a space or an unknown
    field is 400; nothing is added."""
    async with sandbox_api() as api:
        refused = await api.client.post("/sandbox/accounts", json=body)
        assert refused.status_code == status
        assert says in refused.text
        assert [m.merchant_id for m in api.sandbox.merchants] == ["sandbox-merchant"]


def test_the_fixture_makes_a_second_account_whose_token_reads_only_its_own(
    payout_sandbox: LoopbackSandbox,
) -> None:
    """payout_sandbox.add_account("brand-b") gives keys that authorize over real HTTP; brand B's
    payout is not found with the first merchant's token, and the first keys still work."""
    brand_b = payout_sandbox.add_account("brand-b")
    assert (brand_b.merchant_id, brand_b.url) == ("brand-b", payout_sandbox.url)

    def token(public_key: str, secret: str) -> dict[str, str]:
        keys = {"public_key": public_key, "secret": secret}
        answer = httpx.post(f"{payout_sandbox.url}/api/merchant.authorize", json=keys)
        assert answer.status_code == 200, answer.text
        return {"authorization": f"Bearer {answer.json()['access_token']}"}

    def call(headers: dict[str, str], op: str, body: dict[str, object]) -> httpx.Response:
        return httpx.post(
            f"{payout_sandbox.url}/api/{op}", content=jsonparse.dumpb(body), headers=headers
        )

    b = token(brand_b.public_key, brand_b.secret)
    a = token(payout_sandbox.public_key, payout_sandbox.secret)
    account = call(b, "bank_account.create", {"country_id": "DE", "iban": IBANS["DE"]}).json()
    body = {"amount": Decimal("10.00"), "bank_account_id": account["id"], "merchant_reference": "1"}
    payout = call(b, "transaction.create_withdrawal", body).json()
    assert call(b, "transaction.get", {"id": payout["id"]}).json()["merchant_id"] == "brand-b"
    assert call(a, "transaction.get", {"id": payout["id"]}).status_code == 404
