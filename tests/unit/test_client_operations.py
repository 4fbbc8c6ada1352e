"""The provider client's operations: paths, bodies, parsed answers, settings and stats."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from recon.jsonparse import loads
from recon.provider.client import ProviderClient
from recon.provider.models import (
    BankAccountCreateRequest,
    BankAccountSelectionRequest,
    CallbackSubscription,
    WithdrawalRequest,
)
from recon.settings import Settings
from tests.unit.provider_fake import (
    PUBLIC_KEY,
    SECRET,
    TRANSACTION_TEXT,
    FakeProvider,
    make_client,
)

pytestmark = pytest.mark.usefixtures("no_retry_waits")


@pytest.mark.anyio
async def test_the_first_call_authorizes_and_later_calls_carry_the_bearer_token() -> None:
    """Authorize is lazy: it sends the key and secret once, then every call uses its token."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        await client.get_transaction("tx-1")
        await client.get_transaction("tx-2")
    assert [r.url.path for r in fake.requests] == [
        "/api/merchant.authorize",
        "/api/transaction.get",
        "/api/transaction.get",
    ]
    assert fake.body(fake.requests[0]) == {"public_key": PUBLIC_KEY, "secret": SECRET}
    assert "authorization" not in fake.requests[0].headers
    assert {r.headers["authorization"] for r in fake.requests[1:]} == {"Bearer tok-1-a9c3e77b"}
    assert all(r.method == "POST" for r in fake.requests)
    assert all(r.headers["content-type"] == "application/json" for r in fake.requests)


@pytest.mark.anyio
async def test_get_transaction_parses_the_documented_variants_exactly() -> None:
    """A state name, lower-case currency and a fraction arrive as int, upper case and Decimal."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        transaction = await client.get_transaction("tx-9")
    assert fake.body(fake.calls("transaction.get")[0]) == {"id": "tx-9"}
    assert transaction.id == "tx-9"
    assert transaction.state == 6
    assert transaction.amount == Decimal("11.01")
    assert str(transaction.amount) == "11.01"
    assert transaction.currency_id == "EUR"


@pytest.mark.anyio
async def test_get_transaction_raw_returns_the_body_as_received_with_exact_amounts() -> None:
    """The raw body is the provider's bytes, unknown fields and amount digits included."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        transaction, raw = await client.get_transaction_raw("tx-1")
    assert raw == TRANSACTION_TEXT.encode()
    body = loads(raw)
    assert body["amount"] == Decimal("11.01")
    assert body["surprise"] == {"kept": True}
    assert body["currency_id"] == "eur"
    assert transaction.model_extra == {"surprise": {"kept": True}}


@pytest.mark.anyio
async def test_create_withdrawal_writes_the_amount_with_exactly_its_digits() -> None:
    """The amount goes out as the JSON number 11.01, never through a float."""
    fake = FakeProvider()
    request = WithdrawalRequest(
        amount=Decimal("11.01"),
        bank_account_id="ba-1",
        merchant_reference="ref-1",
        callbacks=[CallbackSubscription(url="https://m.test/cb", transaction_state=6)],
    )
    async with make_client(fake) as client:
        created = await client.create_withdrawal(request)
    sent = fake.calls("transaction.create_withdrawal")[0].content
    assert b'"amount":11.01' in sent
    assert json.loads(sent)["callbacks"] == [{"url": "https://m.test/cb", "transaction_state": 6}]
    assert created.id == "tx-new"
    assert created.eta is not None
    assert created.eta.timestamp() == 1741903012


@pytest.mark.anyio
async def test_the_session_operations_send_their_bodies_and_parse_the_answers() -> None:
    """Session create and get use their documented paths and models."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        created = await client.create_bank_account_selection(
            BankAccountSelectionRequest(country_id="se", merchant_reference="m-1")
        )
        session = await client.get_session(created.id)
    body = fake.body(fake.calls("session.create_bank_account_selection")[0])
    assert body["country_id"] == "SE"
    assert body["merchant_reference"] == "m-1"
    assert created.url == "https://provider.test/s/1"
    assert created.token == "embed-1"
    assert session.id == "sess-1"
    assert session.state == 12
    assert session.country_id == "SE"
    assert session.bank_account is not None
    assert session.bank_account.id == "ba-1"


@pytest.mark.anyio
async def test_create_bank_account_sends_the_holder_fields() -> None:
    """bank_account.create sends the account and holder fields and returns the new id."""
    fake = FakeProvider()
    request = BankAccountCreateRequest.model_validate(
        {
            "country_id": "fi",
            "iban": "FI2112345600000785",
            "holder_firstname": "Aino",
            "holder_dob": "1990-02-03",
        }
    )
    async with make_client(fake) as client:
        created = await client.create_bank_account(request)
    body = fake.body(fake.calls("bank_account.create")[0])
    assert body == {
        "country_id": "FI",
        "iban": "FI2112345600000785",
        "holder_firstname": "Aino",
        "holder_dob": "1990-02-03",
    }
    assert created.id == "ba-2"


@pytest.mark.anyio
async def test_from_settings_uses_the_configured_provider_and_credentials() -> None:
    """The base url, key and secret come from recon's settings."""
    fake = FakeProvider()
    settings = Settings(
        api_base_url="http://provider.test/prefix",
        api_public_key=PUBLIC_KEY,
        api_secret=SECRET,
        concurrency=7,
    )
    async with ProviderClient.from_settings(settings, transport=fake.transport()) as client:
        await client.get_transaction("tx-1")
    assert [str(r.url) for r in fake.requests] == [
        "http://provider.test/prefix/api/merchant.authorize",
        "http://provider.test/prefix/api/transaction.get",
    ]


@pytest.mark.anyio
async def test_the_stats_count_requests_and_bytes() -> None:
    """Requests, authorizations and bytes in both directions are counted for the summary."""
    fake = FakeProvider()
    async with make_client(fake) as client:
        await client.get_transaction("tx-1")
    assert client.stats.requests == 2
    assert client.stats.authorizations == 1
    assert client.stats.retries == 0
    assert client.stats.bytes_sent == sum(len(r.content) for r in fake.requests)
    assert client.stats.bytes_received > len("{}")
