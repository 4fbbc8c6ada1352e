"""Polling through the real client on a scripted provider: what one payout's failure does to the
poll. An unexpected exception or a hostile answer is an ``error`` for that id only, and so is an id
the provider refuses (``refused``); an authorize failure, or refusals past the limit, stop the
poll."""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx
import pytest

from recon.errors import AuthorizeFailed, KeysRefused, TooManyRefusals
from recon.night.observe import observation_row
from recon.night.poll import Fetched, poll
from recon.night.refusals import Refusals
from tests.unit.provider_fake import SECRET, FakeProvider, json_answer, make_client

pytestmark = [pytest.mark.usefixtures("no_retry_waits"), pytest.mark.timeout(60, method="thread")]

IDS = [f"tx-{i}" for i in range(6)]


async def poll_all(
    fake: FakeProvider, ids: Sequence[str] = IDS, refusals: Refusals | None = None
) -> dict[str, Fetched]:
    """Poll ``ids`` through a client on ``fake``; every Fetched by id."""
    got: list[Fetched] = []
    async with make_client(fake, retry_attempts=2) as client:
        await poll(client, ids, workers=3, sink=got.extend, flush_seconds=0.05, refusals=refusals)
    return {f.transaction_id: f for f in got}


def refusing(victims: set[str], status: int) -> FakeProvider:
    """A provider answering ``status`` to transaction.get of ``victims``, whatever the token."""
    fake = FakeProvider()
    documented = fake.documented

    def answer(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["id"] in victims:
            return json_answer(status, {"error_name": "forbidden", "error_message": "not yours"})
        return documented("transaction.get", request)

    fake.queue("transaction.get", *([answer] * 40))
    return fake


def breaking_on(victim: str, exc: Exception) -> FakeProvider:
    """A provider whose transaction.get of ``victim`` makes the transport raise ``exc``."""
    fake = FakeProvider()
    documented = fake.documented

    def answer(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["id"] == victim:
            raise exc
        return documented("transaction.get", request)

    fake.queue("transaction.get", *([answer] * 20))
    return fake


@pytest.mark.anyio
@pytest.mark.parametrize(
    "exc",
    [RuntimeError(f"boom {SECRET}"), RecursionError("deep"), KeyError(SECRET), MemoryError()],
    ids=lambda e: type(e).__name__,
)
async def test_an_unexpected_exception_in_one_fetch_is_an_error_for_that_payout_only(
    exc: Exception,
) -> None:
    """Any exception from one payout's fetch becomes its error, short and without secrets."""
    fetched = await poll_all(breaking_on("tx-3", exc))
    assert fetched.keys() == set(IDS)
    broken = fetched["tx-3"]
    assert broken.status == "error"
    assert broken.error is not None
    assert broken.error.startswith(f"unexpected_error: {type(exc).__name__}")
    assert SECRET not in broken.error
    assert len(broken.error) < 300
    assert {f.status for t, f in fetched.items() if t != "tx-3"} == {"ok"}


@pytest.mark.anyio
async def test_an_answer_about_another_id_is_a_wrong_id_naming_the_id_answered_about() -> None:
    """Status wrong_id, no transaction, the other id kept, the error text wrong_transaction:."""
    fake = FakeProvider()
    fake.queue(
        "transaction.get",
        json_answer(
            200, {"id": "tx-other", "state": 6, "type": 1, "amount": 1, "currency_id": "EUR"}
        ),
    )
    fetched = await poll_all(fake, ["tx-0"])
    assert fetched["tx-0"].status == "wrong_id"
    assert fetched["tx-0"].transaction is None
    assert fetched["tx-0"].answered_about == "tx-other"
    assert (fetched["tx-0"].error or "").startswith("wrong_transaction:")
    row = observation_row(fetched["tx-0"], run_id=1)
    assert (row["status"], row["related_transaction_id"]) == ("wrong_id", "tx-other")


@pytest.mark.anyio
async def test_an_authorize_failure_stops_the_poll() -> None:
    """merchant.authorize answering 404 ends the poll: AuthorizeFailed, no payout 'not found'."""
    fake = FakeProvider()
    fake.queue("merchant.authorize", *[json_answer(404, {"error_name": "not_found"})] * 10)
    with pytest.raises(AuthorizeFailed):
        await poll_all(fake)
    assert fake.calls("transaction.get") == []


@pytest.mark.anyio
@pytest.mark.parametrize("status", [401, 403])
async def test_an_id_refused_with_a_fresh_token_is_refused_for_that_payout_only(
    status: int,
) -> None:
    """401 (after one new token) or 403 for one id: that id is refused, the others answered."""
    fake = refusing({"tx-3"}, status)
    fetched = await poll_all(fake, refusals=Refusals(limit=20))
    assert fetched.keys() == set(IDS)
    assert fetched["tx-3"].status == "refused"
    assert (fetched["tx-3"].error or "").startswith(f"refused_id: transaction.get: HTTP {status}")
    assert {f.status for t, f in fetched.items() if t != "tx-3"} == {"ok"}
    asked_tx3 = [r for r in fake.calls("transaction.get") if fake.body(r)["id"] == "tx-3"]
    assert len(asked_tx3) == (2 if status == 401 else 1)  # a 401 is asked again with a new token


@pytest.mark.anyio
async def test_refusals_past_the_limit_stop_the_poll() -> None:
    """Every id refused (a revoked key): the poll stops once the limit is passed."""
    fake = refusing(set(IDS), 403)
    with pytest.raises(TooManyRefusals) as caught:
        await poll_all(fake, refusals=Refusals(limit=2))
    assert "RECON_REFUSED_LIMIT (2)" in str(caught.value)
    assert len(fake.calls("transaction.get")) < len(IDS)


@pytest.mark.anyio
async def test_keys_refused_by_merchant_authorize_stop_the_poll() -> None:
    """merchant.authorize answering 401 ends the poll (KeysRefused): no id is refused for it."""
    fake = FakeProvider()
    fake.queue("merchant.authorize", *[json_answer(401, {"error_name": "unauthorized"})] * 10)
    with pytest.raises(KeysRefused):
        await poll_all(fake, refusals=Refusals(limit=20))
    assert fake.calls("transaction.get") == []
