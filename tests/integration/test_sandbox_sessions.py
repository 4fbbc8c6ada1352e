"""Bank account selection sessions through the hosted page of the in-process sandbox."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from recon.provider.models import Session
from recon.sandbox.scenarios import SESSION_SCENARIOS, SessionScenario
from tests.integration.sandbox_support import Api, Receiver, sandbox_api

CALLBACK = "http://merchant.test/sessions"


pytestmark = pytest.mark.anyio


async def _session(api: Api, **fields: object) -> dict[str, str]:
    body = {
        "country_id": "se",
        "brand_name": "Shop",
        "merchant_reference": "customer-1",
        "locale": "sv",
        "redirect_uri": "https://shop.test/back?step=payout",
        "callbacks": [{"url": CALLBACK, "session_state": s} for s in (10, 11, 12)],
        **fields,
    }
    created: dict[str, str] = await api.ok("session.create_bank_account_selection", body)
    return created


def _path(url: str) -> str:
    return urlsplit(url).path


@pytest.mark.parametrize("scenario", SESSION_SCENARIOS, ids=lambda s: s.key)
async def test_each_hosted_page_choice_ends_the_session_redirects_and_calls_back(
    scenario: SessionScenario,
) -> None:
    """A choice on the hosted page sets state and error_code, redirects with the id, calls back."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        created = await _session(api)
        assert set(created) == {"id", "url", "token"}
        page = await api.client.get(_path(created["url"]))
        assert page.status_code == 200
        assert scenario.label in page.text

        chosen = await api.client.post(_path(created["url"]), data={"scenario": scenario.key})
        assert chosen.status_code == 303
        target = urlsplit(chosen.headers["location"])
        assert (target.netloc, target.path) == ("shop.test", "/back")
        assert parse_qs(target.query) == {"step": ["payout"], "session_id": [created["id"]]}

        await api.advance(0)
        session = Session.model_validate(await api.ok("session.get", {"id": created["id"]}))
        assert (session.state, session.error_code) == (scenario.state, scenario.error_code)
        [callback] = receiver.received
        assert callback.body == {
            "merchant_id": "sandbox-merchant",
            "session_id": created["id"],
            "session_state": int(scenario.state),
        }


async def test_a_selected_account_is_masked_and_can_be_paid_out_to() -> None:
    """Success gives a bank_account_id and a masked account that a payout can target."""
    async with sandbox_api() as api:
        created = await _session(api)
        await api.client.post(_path(created["url"]), data={"scenario": "select_account"})
        session = Session.model_validate(await api.ok("session.get", {"id": created["id"]}))
        account = session.bank_account
        assert account is not None
        assert session.bank_account_id == account.id
        assert account.iban is not None
        assert account.bban is not None
        assert account.iban[:2] == "SE"
        assert set(account.iban[2:-4]) == {"*"}
        assert account.iban[-4:].isdigit()
        assert set(account.bban[:-4]) == {"*"}
        assert account.bban[-4:] == account.iban[-4:]
        payout = await api.ok(
            "transaction.create_withdrawal",
            {"amount": 12, "bank_account_id": account.id, "merchant_reference": "after-session"},
        )
        assert (await api.tx(payout["id"]))["currency_id"] == "sek"


async def test_a_pending_session_expires_after_30_minutes() -> None:
    """A session not finished within 30 minutes ends aborted (10) with expired_session."""
    receiver = Receiver()
    async with sandbox_api(receiver=receiver) as api:
        created = await _session(api)
        pending = await api.ok("session.get", {"id": created["id"]})
        assert pending["state"] == 1
        await api.advance(29 * 60)
        assert (await api.ok("session.get", {"id": created["id"]}))["state"] == 1
        await api.advance(61)
        ended = await api.ok("session.get", {"id": created["id"]})
        assert (ended["state"], ended["error_code"]) == (10, "expired_session")
        assert [r.body["session_state"] for r in receiver.received] == [10]


async def test_a_finished_session_cannot_be_chosen_again() -> None:
    """A second choice on an ended session is refused with 409 and changes nothing."""
    async with sandbox_api() as api:
        created = await _session(api)
        await api.client.post(_path(created["url"]), data={"scenario": "no_funds"})
        again = await api.client.post(_path(created["url"]), data={"scenario": "select_account"})
        assert again.status_code == 409
        assert (await api.ok("session.get", {"id": created["id"]}))["state"] == 11


async def test_an_unknown_scenario_is_refused() -> None:
    """A form without a known scenario is 400 and the session stays pending."""
    async with sandbox_api() as api:
        created = await _session(api)
        response = await api.client.post(_path(created["url"]), data={"scenario": "<b>x</b>"})
        assert response.status_code == 400
        assert "<b>x</b>" not in response.text
        assert (await api.ok("session.get", {"id": created["id"]}))["state"] == 1


async def test_the_hosted_page_escapes_what_the_merchant_sent() -> None:
    """brand_name is shown autoescaped on the hosted page."""
    async with sandbox_api() as api:
        created = await _session(api, brand_name="<script>alert(1)</script>")
        page = await api.client.get(_path(created["url"]))
        assert "<script>alert" not in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


async def test_without_a_redirect_uri_the_page_shows_the_result() -> None:
    """Without redirect_uri the choice is answered with the finished page itself."""
    async with sandbox_api() as api:
        created = await _session(api, redirect_uri=None)
        response = await api.client.post(_path(created["url"]), data={"scenario": "no_funds"})
        assert response.status_code == 200
        assert "psu_insufficient_funds_all_accounts" in response.text


async def test_an_unknown_session_is_not_found() -> None:
    """session.get of an unknown id is 404 session_not_found; its hosted page is 404 too."""
    async with sandbox_api() as api:
        response = await api.call("session.get", {"id": "missing"})
        assert response.status_code == 404
        assert response.json()["error_name"] == "session_not_found"
        assert (await api.client.get("/hosted/missing")).status_code == 404
