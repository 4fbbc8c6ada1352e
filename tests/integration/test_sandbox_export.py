"""The sandbox's transaction export over HTTP: the task's states, the file of a settlement window
(payouts, returns, fees, top-ups, merchant withdrawals), the cap, expiry, a failed task."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from recon import jsonparse
from recon.sandbox.config import Merchant, SandboxConfig, default_merchant
from recon.sandbox.exports import COLUMNS
from recon.sandbox.loopback import LoopbackSandbox
from tests.integration.sandbox_support import Api, sandbox_api

pytestmark = pytest.mark.anyio

DAY = 86400
T0 = 1_800_000_000  # a settlement time for the movements booked at exact moments


async def ask(api: Api, task_id: str) -> httpx.Response:
    return await api.call("export_task.get", {"id": task_id})


async def exported(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    """Request an export and ask until it is done (queued, running, done: three asks)."""
    task = await api.ok("transaction.csv_export", body)
    for _ in range(3):
        answer = await ask(api, task["id"])
        assert answer.status_code == 200, answer.text
    done: dict[str, Any] = jsonparse.loads(answer.content)
    assert "artifact_url" in done, done
    return done


async def rows_of(api: Api, done: dict[str, Any]) -> list[dict[str, str]]:
    """The file behind ``artifact_url``, read as a ``,``-delimited CSV with a header."""
    answer = await api.client.get(done["artifact_url"])
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    reader = csv.DictReader(io.StringIO(answer.content.decode("utf-8")))
    assert tuple(reader.fieldnames or ()) == COLUMNS
    return list(reader)


async def book(api: Api, kind: str, amount: str, settled: int, **extra: Any) -> dict[str, Any]:
    body = {"amount": Decimal(amount), "settled": settled, **extra}
    answer = await api.client.post(
        f"/sandbox/accounts/sandbox-merchant/{kind}", content=jsonparse.dumpb(body)
    )
    assert answer.status_code == 200, answer.text
    booked: dict[str, Any] = jsonparse.loads(answer.content)
    return booked


def window(start: float, end: float, **extra: Any) -> dict[str, Any]:
    return {"settled_from": int(start), "settled_to": int(end), **extra}


async def test_a_task_is_queued_then_running_then_done_on_successive_asks() -> None:
    """The first ask answers state 0 (queued), the second 1 (running), the third 2 (done) with
    artifact_url, rows and expires (24 h of sandbox time on); earlier answers carry none."""
    async with sandbox_api() as api:
        task = await api.ok("transaction.csv_export", window(T0, T0 + DAY))
        assert set(task) == {"id"}
        answers = [jsonparse.loads((await ask(api, task["id"])).content) for _ in range(3)]
        assert [a["state"] for a in answers] == [0, 1, 2]
        assert set(answers[0]) == set(answers[1]) == {"id", "state"}
        assert set(answers[2]) == {"id", "state", "artifact_url", "rows", "expires"}
        made_at = Decimal(repr(api.sandbox.clock.now()))
        assert made_at + DAY - 5 < answers[2]["expires"] <= made_at + DAY
        again = jsonparse.loads((await ask(api, task["id"])).content)
        assert again == answers[2]


async def test_the_file_holds_every_row_settled_in_the_window_and_nothing_else() -> None:
    """Settled payouts, their fee rows (naming the payout), the 11.03 fee, a return, a top-up and
    a merchant withdrawal are in; a failed payout, a payout not yet settled and a movement
    settled outside the window are not. Amounts are written as the interface writes them."""
    async with sandbox_api() as api:
        start = api.sandbox.clock.now()
        paid = await api.payout("10.00")
        aborted = await api.payout("11.03")
        failed = await api.payout("12.01")
        returned = await api.payout("14.01")
        await api.advance(120)
        pending = await api.payout("20.00")
        now = api.sandbox.clock.now()
        top_up = await book(api, "top_up", "500", int(now), merchant_reference="wire-1")
        withdrawal = await book(api, "merchant_withdrawal", "120.5", int(now))
        await book(api, "top_up", "9.00", int(start) - DAY)  # the day before

        done = await exported(api, window(start - 1, now + 1))
        rows = await rows_of(api, done)
        assert done["rows"] == len(rows) == 8

        by_id = {row["id"]: row for row in rows}
        payout = await api.tx(paid["id"])
        assert by_id[paid["id"]] == {
            "id": paid["id"],
            "type": "1",
            "state": "6",
            "amount": "10.00",
            "currency_id": "eur",
            "merchant_reference": "ref-10.00-DE",
            "created": str(payout["created"]),
            "settled": str(payout["settled"]),
            "fee_amount": "0.30",
            "fee_id": payout["fee_id"],
            "related_transaction_id": "",
        }
        fee = by_id[payout["fee_id"]]
        assert (fee["type"], fee["amount"], fee["currency_id"]) == ("fee", "0.30", "eur")
        assert (fee["related_transaction_id"], fee["settled"]) == (
            paid["id"],
            str(payout["settled"]),
        )

        aborted_fee = next(r for r in rows if r["related_transaction_id"] == aborted["id"])
        assert (aborted_fee["type"], aborted_fee["amount"]) == ("fee", "0.31")
        assert aborted["id"] not in by_id  # never settled: only its fee row

        back = (await api.tx(returned["id"]))["related_transaction_id"]
        assert (by_id[back]["type"], by_id[back]["amount"]) == ("13", "14.01")
        assert by_id[back]["related_transaction_id"] == returned["id"]
        assert (by_id[top_up["id"]]["type"], by_id[top_up["id"]]["amount"]) == ("top_up", "500.00")
        assert by_id[top_up["id"]]["merchant_reference"] == "wire-1"
        assert by_id[withdrawal["id"]]["type"] == "merchant_withdrawal"
        assert by_id[withdrawal["id"]]["amount"] == "120.50"
        assert failed["id"] not in by_id
        assert pending["id"] not in by_id
        assert [r["settled"] for r in rows] == sorted(r["settled"] for r in rows)


async def test_the_window_holds_its_start_and_not_its_end() -> None:
    """settled_from is inclusive, settled_to exclusive: consecutive windows never share a row."""
    async with sandbox_api() as api:
        at_start = await book(api, "top_up", "1.00", T0)
        at_end = await book(api, "top_up", "2.00", T0 + DAY)
        first = await rows_of(api, await exported(api, window(T0, T0 + DAY)))
        second = await rows_of(api, await exported(api, window(T0 + DAY, T0 + 2 * DAY)))
        assert [r["id"] for r in first] == [at_start["id"]]
        assert [r["id"] for r in second] == [at_end["id"]]
        assert first[0]["settled"] == f"{T0}.000"


@pytest.mark.parametrize(
    ("types", "kinds"),
    [
        (["fee"], {"fee"}),
        ([1], {"1"}),
        (["1", "top_up"], {"1", "top_up"}),
    ],
)
async def test_types_narrows_the_file_to_those_types(types: list[Any], kinds: set[str]) -> None:
    """types lists values of the type column (1 or "1" for payouts): only those rows come."""
    async with sandbox_api() as api:
        start = api.sandbox.clock.now()
        await api.payout("10.00")
        await api.advance(60)
        await book(api, "top_up", "5.00", int(api.sandbox.clock.now()))
        rows = await rows_of(api, await exported(api, window(start - 1, start + 600, types=types)))
        assert {r["type"] for r in rows} == kinds


async def test_a_window_with_more_rows_than_the_cap_gives_a_file_of_exactly_the_cap() -> None:
    """--export-cap 3 and five rows in the window: a file of the three oldest, rows 3, and no
    sign in the file that it was cut (the provider's behaviour: the reader must split)."""
    async with sandbox_api(SandboxConfig(export_cap=3)) as api:
        booked = [await book(api, "top_up", f"{n}.00", T0 + n) for n in range(1, 6)]
        done = await exported(api, window(T0, T0 + DAY))
        rows = await rows_of(api, done)
        assert done["rows"] == 3
        assert [r["id"] for r in rows] == [b["id"] for b in booked[:3]]
        exact = await exported(api, window(T0, T0 + 4))
        assert exact["rows"] == 3  # three rows under a cap of three: all of them


async def test_an_artifact_expires_24_hours_of_sandbox_time_after_it_is_made() -> None:
    """A second before its 24 hours the file downloads; at 24 h the url answers 410
    artifact_expired, and the task answers state 4 with the same url and expires."""
    async with sandbox_api() as api:
        await book(api, "top_up", "1.00", T0)
        done = await exported(api, window(T0, T0 + DAY))
        await api.advance(DAY - 1)
        assert len(await rows_of(api, done)) == 1
        await api.advance(1)
        gone = await api.client.get(done["artifact_url"])
        assert gone.status_code == 410
        assert gone.json()["error_name"] == "artifact_expired"
        await api.authorize()  # the token lived 6 h
        later = jsonparse.loads((await ask(api, done["id"])).content)
        assert later == {**done, "state": 4}


async def test_a_task_the_fault_fails_answers_export_failed_after_queued_and_running() -> None:
    """With export_failure_rate 1, a task is queued, then running, then every ask is 409
    export_failed; a task requested before the fault was set still finishes."""
    async with sandbox_api() as api:
        earlier = await api.ok("transaction.csv_export", window(T0, T0 + DAY))
        faults = await api.client.post("/sandbox/faults", json={"export_failure_rate": 1})
        assert faults.status_code == 200, faults.text
        task = await api.ok("transaction.csv_export", window(T0, T0 + DAY))
        states = [jsonparse.loads((await ask(api, task["id"])).content)["state"] for _ in "12"]
        assert states == [0, 1]
        for _ in range(2):
            answer = await ask(api, task["id"])
            assert answer.status_code == 409
            assert answer.json()["error_name"] == "export_failed"
        for _ in range(3):
            finished = await ask(api, earlier["id"])
        assert "artifact_url" in finished.json()


async def test_a_file_made_after_a_reversal_shows_the_payouts_new_state() -> None:
    """The file is made from the records at the ask that finds the task done: a payout reversed
    (6 -> 3) after one export is state 3 in the next file of the same window."""
    async with sandbox_api() as api:
        start = api.sandbox.clock.now()
        payout = await api.payout("10.00")
        await api.advance(60)
        first = await rows_of(api, await exported(api, window(start - 1, start + 600, types=[1])))
        await api.client.post(f"/sandbox/transactions/{payout['id']}/reverse", json={"state": 3})
        second = await rows_of(api, await exported(api, window(start - 1, start + 600, types=[1])))
        assert [(r["id"], r["state"]) for r in first] == [(payout["id"], "6")]
        assert [(r["id"], r["state"]) for r in second] == [(payout["id"], "3")]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"settled_to": T0}, "settled_from"),
        ({"settled_from": T0}, "settled_to"),
        ({"settled_from": str(T0), "settled_to": T0 + 1}, "settled_from"),
        ({"settled_from": T0, "settled_to": T0}, "settled_to"),
        ({"settled_from": -1, "settled_to": T0}, "settled_from"),
        ({"settled_from": T0, "settled_to": T0 + 1, "types": []}, "types"),
        ({"settled_from": T0, "settled_to": T0 + 1, "types": ["refund"]}, "types"),
        ({"settled_from": T0, "settled_to": T0 + 1, "types": [True]}, "types"),
    ],
)
async def test_a_wrong_export_request_is_refused_naming_the_field(
    body: dict[str, Any], named: str
) -> None:
    """A missing or non-numeric bound, an empty window, a negative time, or types that are not
    the file's: 400 invalid_request naming the field, and no task is made."""
    async with sandbox_api() as api:
        answer = await api.call("transaction.csv_export", body)
        assert answer.status_code == 400
        assert answer.json()["error_name"] == "invalid_request"
        assert answer.json()["error_message"].startswith(named)
        assert api.sandbox.export_tasks == {}


async def test_another_merchants_task_and_rows_stay_its_own() -> None:
    """Brand B's token asking about the default merchant's task is 404 export_task_not_found,
    and brand B's export holds none of the default merchant's rows."""
    brand_b = Merchant(merchant_id="brand-b", public_key="b-key", secret=SecretStr("b-secret"))
    async with sandbox_api(SandboxConfig(merchants=[default_merchant(), brand_b])) as api:
        start = api.sandbox.clock.now()
        await api.payout("10.00")
        await api.advance(60)
        mine = await api.ok("transaction.csv_export", window(start - 1, start + 600))
        other = Api(api.client, api.sandbox)
        token = await api.client.post(
            "/api/merchant.authorize", json={"public_key": "b-key", "secret": "b-secret"}
        )
        other.token = token.json()["access_token"]
        refused = await ask(other, mine["id"])
        assert refused.status_code == 404
        assert refused.json()["error_name"] == "export_task_not_found"
        theirs = await rows_of(other, await exported(other, window(start - 1, start + 600)))
        assert theirs == []


async def test_an_unknown_artifact_url_is_not_found() -> None:
    """A token the sandbox never gave is 404 artifact_not_found."""
    async with sandbox_api() as api:
        answer = await api.client.get("/artifacts/not-a-token")
        assert answer.status_code == 404
        assert answer.json()["error_name"] == "artifact_not_found"


@pytest.mark.parametrize(
    ("path", "body", "status", "named"),
    [
        ("/sandbox/accounts/nobody/top_up", {"amount": 1}, 404, "account_not_found"),
        ("/sandbox/accounts/sandbox-merchant/top_up", {}, 400, "amount"),
        ("/sandbox/accounts/sandbox-merchant/top_up", {"amount": -1}, 400, "amount"),
        (
            "/sandbox/accounts/sandbox-merchant/merchant_withdrawal",
            {"amount": Decimal("1.5"), "currency": "JPY"},
            400,
            "amount",
        ),
        (
            "/sandbox/accounts/sandbox-merchant/top_up",
            {"amount": 1, "currency": "XYZ"},
            400,
            "currency",
        ),
        ("/sandbox/accounts/sandbox-merchant/top_up", {"amount": 1, "settled": -5}, 400, "settled"),
        ("/sandbox/accounts/sandbox-merchant/refund", {"amount": 1}, 404, ""),
    ],
)
async def test_a_wrong_movement_is_refused_and_books_nothing(
    path: str, body: dict[str, Any], status: int, named: str
) -> None:
    """An unknown account, a missing or negative amount, too many decimals, an unknown currency
    or time, or a kind that is neither top_up nor merchant_withdrawal: refused, nothing booked."""
    async with sandbox_api() as api:
        answer = await api.client.post(path, content=jsonparse.dumpb(body))
        assert answer.status_code == status
        assert named in answer.text
        assert api.sandbox.movements == []


def test_over_real_http_the_artifact_url_is_the_sandboxs_own_and_needs_no_token(
    payout_sandbox: LoopbackSandbox,
) -> None:
    """The artifact_url names the address the merchant reached the sandbox at; a plain GET
    without an Authorization header downloads the file."""
    url = payout_sandbox.url
    keys = {"public_key": payout_sandbox.public_key, "secret": payout_sandbox.secret}
    token = httpx.post(f"{url}/api/merchant.authorize", json=keys).json()["access_token"]
    headers = {"authorization": f"Bearer {token}"}
    booked = httpx.post(
        f"{url}/sandbox/accounts/sandbox-merchant/top_up", json={"amount": 7, "settled": T0}
    ).json()
    task = httpx.post(
        f"{url}/api/transaction.csv_export", json=window(T0, T0 + 1), headers=headers
    ).json()
    for _ in range(3):
        done = httpx.post(f"{url}/api/export_task.get", json=task, headers=headers).json()
    assert done["artifact_url"].startswith(f"{url}/artifacts/")
    file = httpx.get(done["artifact_url"])
    assert file.status_code == 200
    assert file.text.splitlines()[1].startswith(f"{booked['id']},top_up,6,7.00,eur,")
