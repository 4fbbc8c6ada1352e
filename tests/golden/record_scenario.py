"""Record the 22-night scenario against the sandbox as a cassette (a dev tool, run by hand; not
part of the suite).

    .venv/bin/python -m tests.golden.record_scenario   # rewrites tests/golden/scenario/cassette/
                                                        # and tests/golden/scenario/README.md

A merchant pays out through the sandbox (served on loopback, its clock frozen at ``T0`` and moved
only by ``clock/advance``, so every time in the cassette is the story's, not the recording's) and
reconciles with recon every night at 21:00 UTC, for 22 nights from Monday 16 March 2026 (the clocks
of Europe/Stockholm, the report's zone, go forward on night 13). The story (``story``) plays the
cases recon must tell apart: returns, duplicates, a double payment, reversals, record changes,
people working the queue, provider-side payouts, a roll-forward break, fetch failures, unknown ids,
delays, mismatches. The sandbox's callbacks go to an in-process collector and are stored through
the receiver's own store function with the sandbox time they were sent at. recon's wall clock is
pinned to each run's as-of while it runs (as the replay does), so the recording and its replay are
the same computation. Fetch failures (HTTP 500) are injected by the recording's transport for the
ids named; everything else is the sandbox's answer.

The sandbox's ids are random, so a new recording changes every file: re-record only when the story
changes, then rewrite the expected packs (``python -m tests.golden.replay --update scenario``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import time_machine

from recon.jsonparse import dumpb, loads
from recon.sandbox.app import create_app
from recon.sandbox.clock import SandboxClock
from recon.sandbox.config import SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from tests.golden import product
from tests.golden.cassette import Recorder
from tests.golden.timeline import NightRecord, iso, write_cassette

GOLDEN = Path(__file__).resolve().parent / "scenario"
T0 = datetime(2026, 3, 16, 7, 0, tzinfo=UTC)  # day 1 starts; each night runs at 21:00 UTC
NIGHTS = 22
SETTINGS: dict[str, Any] = {"timezone": "Europe/Stockholm"}
RECEIVER = "http://receiver.golden.test/callbacks"
STATES = (2, 3, 4, 6)  # aborted, failed, completed, settled: the callbacks each payout asks for
CSV_COLUMNS = (
    "transaction_id",
    "merchant_reference",
    "amount",
    "currency",
    "bank_account_id",
    "customer_id",
    "country_id",
    "created",
    "eta",
)
COUNTRIES = {"SE": "SEK", "DE": "EUR", "FI": "EUR", "GB": "GBP", "DK": "DKK"}


class Faults(httpx.AsyncBaseTransport):
    """The provider failing ``transaction.get`` for some ids: HTTP 500 for their first n asks."""

    def __init__(self, inner: httpx.AsyncBaseTransport, failures: dict[str, int]) -> None:
        self.inner = inner
        self.failures = dict(failures)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        asked = json.loads(request.content or b"{}").get("id")
        if request.url.path.endswith("/transaction.get") and self.failures.get(asked, 0) > 0:
            self.failures[asked] -= 1
            body = {"error_name": "internal_error", "error_message": "internal server error"}
            return httpx.Response(500, json=body)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Collector:
    """The merchant's callback endpoint: what the sandbox sent, and the sandbox time it was sent."""

    sandbox: Any = None
    received: list[tuple[datetime, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        due = self.sandbox.dispatcher.log[-1].due  # the attempt being posted, stamped when due
        note = {
            "body": request.content.decode("utf-8"),
            "query": request.url.query.decode("ascii"),
            "source": "receiver",
        }
        self.received.append((datetime.fromtimestamp(due, UTC), note))
        return httpx.Response(200, json={"status": "stored"})


class Story:
    """The merchant, the sandbox and recon, night by night; what happens is kept as a cassette."""

    def __init__(self, url: str, sandbox: Any, collector: Collector, work: Path) -> None:
        self.url = url
        self.sandbox = sandbox
        self.collector = collector
        self.http = httpx.Client(base_url=url, timeout=30)
        self.database_url = f"sqlite:///{work / 'recon.db'}"
        self.engine = product.new_store(self.database_url)
        self.settings = product.settings(self.database_url, {**SETTINGS, "api_base_url": url})
        self.work = work
        self.night = 1
        self.nights: list[NightRecord] = []
        self.current = NightRecord()
        self.notes: dict[int, list[str]] = {}
        self.accounts: dict[str, tuple[str, str]] = {}
        self.records: dict[str, dict[str, Any]] = {}  # by merchant_reference
        self.todays: list[str] = []  # references to export tonight
        self.token = self._api(
            "merchant.authorize", public_key="sandbox-public-key", secret="sandbox-secret"
        )["access_token"]

    # --- the clock ------------------------------------------------------------------------------

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.sandbox.clock.now(), UTC)

    def at(self, hours: float) -> datetime:
        """Move the sandbox clock to ``hours`` after this day's start (07:00 UTC)."""
        target = T0 + timedelta(days=self.night - 1, hours=hours)
        seconds = (target - self.now()).total_seconds()
        if seconds < 0:
            raise AssertionError(f"night {self.night}: the clock is past {target}")
        self._admin("clock/advance", {"seconds": Decimal(str(seconds))})
        return target

    # --- the provider's API and admin routes ----------------------------------------------------

    def _api(self, operation: str, **body: Any) -> dict[str, Any]:
        headers = {"content-type": "application/json"}
        if operation != "merchant.authorize":
            headers["authorization"] = f"Bearer {self.token}"
        answer = self.http.post(f"/api/{operation}", content=dumpb(body), headers=headers)
        if answer.status_code == 401 and operation != "merchant.authorize":
            # the sandbox's tokens last six hours of its clock: authorize again, once
            self.token = self._api(
                "merchant.authorize", public_key="sandbox-public-key", secret="sandbox-secret"
            )["access_token"]
            return self._api(operation, **body)
        if answer.status_code != 200:
            raise AssertionError(f"{operation}: {answer.status_code} {answer.text}")
        result: dict[str, Any] = loads(answer.content)
        return result

    def _admin(self, route: str, body: dict[str, Any] | None = None) -> Any:
        answer = self.http.post(f"/sandbox/{route}", content=dumpb(body or {}))
        if answer.status_code not in (200, 202):
            raise AssertionError(f"{route}: {answer.status_code} {answer.text}")
        return loads(answer.content)

    def admin(self, ref: str, action: str, body: dict[str, Any] | None = None) -> Any:
        """An admin route on a payout named by its reference (``confirm``, ``return``, …)."""
        return self._admin(f"transactions/{self.records[ref]['transaction_id']}/{action}", body)

    def transaction(self, transaction_id: str) -> dict[str, Any]:
        return self._api("transaction.get", id=transaction_id)

    def returns_of(self, ref: str) -> list[str]:
        listing = loads(self.http.get("/sandbox/transactions").content)["transactions"]
        original = self.records[ref]["transaction_id"]
        return [t["id"] for t in listing if t.get("original_transaction_id") == original]

    # --- the merchant ---------------------------------------------------------------------------

    def account(self, customer: str, country: str) -> str:
        if customer not in self.accounts:
            digits = f"{len(self.accounts) + 1:020d}"
            created = self._api(
                "bank_account.create", country_id=country, iban=f"{country}{digits}"
            )
            self.accounts[customer] = (created["id"], country)
        return self.accounts[customer][0]

    def pay(
        self, ref: str, customer: str, country: str, amount: str, *, record: bool = True
    ) -> str:
        """A payout through the API; recorded (exported tonight) unless ``record`` is false."""
        account = self.account(customer, country)
        created = self._api(
            "transaction.create_withdrawal",
            amount=Decimal(amount),
            bank_account_id=account,
            merchant_reference=ref,
            callbacks=[{"url": f"{RECEIVER}?via=scenario", "transaction_state": s} for s in STATES],
        )
        tx = self.transaction(created["id"])
        row = {
            "transaction_id": created["id"],
            "merchant_reference": ref,
            "amount": amount,
            "currency": str(tx["currency_id"]).upper(),
            "bank_account_id": account,
            "customer_id": customer,
            "country_id": country,
            "created": iso(datetime.fromtimestamp(float(tx["created"]), UTC)),
            "eta": _when(created.get("eta")),
        }
        if record:
            self.records[ref] = row
            self.todays.append(ref)
        return str(created["id"])

    def record(self, ref: str, **changes: str) -> None:
        """The merchant's record of ``ref`` changes (exported again tonight)."""
        self.records[ref] = {**self.records[ref], **changes}
        self.todays.append(ref)

    def record_only(self, ref: str, row: dict[str, str]) -> None:
        """A record with no payout behind it as recorded (a typo, a create without its id)."""
        self.records[ref] = {c: row.get(c, "") for c in CSV_COLUMNS} | {"merchant_reference": ref}
        self.todays.append(ref)

    def export(self) -> None:
        """Tonight's export of the merchant's records (new and changed rows), imported by recon."""
        if not self.todays:
            return
        lines = [",".join(CSV_COLUMNS)]
        for ref in dict.fromkeys(self.todays):
            lines.append(",".join(str(self.records[ref][c]) for c in CSV_COLUMNS))
        text = "\n".join(lines) + "\n"
        path = self.work / f"export-{self.night:02d}.csv"
        path.write_text(text, encoding="utf-8")
        now = self.now()
        self._deliver()
        product.import_payouts(self.engine, path, zone=self.settings.zone, now=now)
        self.current.add(now, "import", text)
        self.todays = []

    # --- what reaches recon ---------------------------------------------------------------------

    def _deliver(self) -> None:
        """Store what the sandbox sent so far, as the receiver would have when it arrived."""
        for at, note in self.collector.received:
            product.store_notification(
                self.engine,
                note["body"],
                query=note["query"],
                source=note["source"],
                received_at=at,
            )
            self.current.add(at, "notification", note)
        self.collector.received.clear()

    def post(self, body: dict[str, Any] | str, *, query: str = "via=scenario") -> None:
        """A body posted to the receiver by someone other than the sandbox (a forgery, a replay)."""
        self._deliver()
        text = body if isinstance(body, str) else dumpb(body).decode("utf-8")
        note = {"body": text, "query": query, "source": "receiver"}
        now = self.now()
        product.store_notification(
            self.engine, text, query=query, source="receiver", received_at=now
        )
        self.current.add(now, "notification", note)

    def case(self, ref_or_id: str, flag: str) -> str:
        """The open case of ``flag`` on a payout (by reference) or an item id."""
        item = self.records[ref_or_id]["transaction_id"] if ref_or_id in self.records else ref_or_id
        found = [
            c["exception_id"]
            for c in product.cases(self.engine)
            if c["item_id"] == item and c["flag"] == flag and c["ended_run_id"] is None
        ]
        if len(found) != 1:
            raise AssertionError(f"night {self.night}: {len(found)} live {flag} cases on {item}")
        return str(found[0])

    def act(self, *requests: dict[str, Any]) -> None:
        """People's actions, all at this moment (``recon exceptions …``)."""
        self._deliver()
        now = self.now()
        full = [
            {"note": None, "until": None, "where": "command line", "decided_by": None, **r}
            for r in requests
        ]
        product.act(self.database_url, full, now=now)
        self.current.add(now, "act", full)

    def tamper(self, *statements: dict[str, Any]) -> None:
        """The store changed behind recon's back."""
        self._deliver()
        product.execute(self.engine, statements)
        self.current.add(self.now(), "sql", list(statements))

    def note(self, text: str) -> None:
        self.notes.setdefault(self.night, []).append(text)

    def run(self, failures: dict[str, int] | None = None) -> None:
        """Tonight's export and run at 21:00 UTC, recorded; then the next day begins."""
        self.at(12)
        self.export()
        as_of = self.at(14)
        self._deliver()
        ids = {self.records[r]["transaction_id"]: n for r, n in (failures or {}).items()}
        recorder = Recorder(Faults(httpx.AsyncHTTPTransport(), ids))
        out = self.work / f"night-{self.night:02d}"
        with time_machine.travel(as_of, tick=False):
            end = product.run_night(
                self.settings, out, as_of=as_of, transport=recorder, email=False
            )
        self.current.run = {"as_of": iso(as_of), "clock": iso(as_of)}
        self.current.answers = recorder.exchanges
        self.nights.append(self.current)
        flags = sorted({row.split(",")[2] for row in _rows(out / "exceptions.csv")})
        print(f"night {self.night}: exit {end.exit_code}; {', '.join(flags)}", file=sys.stderr)
        self.current = NightRecord()
        self.night += 1


def _when(epoch: Any) -> str:
    return iso(datetime.fromtimestamp(float(epoch), UTC)) if epoch else ""


def _rows(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[1:]


def story(s: Story) -> None:
    """22 nights of a merchant's payouts; ``s.note`` says what each night holds (the README)."""

    def ordinary(n: int, ref: str) -> None:
        customers = [("c01", "SE"), ("c02", "DE"), ("c03", "FI"), ("c04", "GB"), ("c05", "DK")]
        customer, country = customers[n % len(customers)]
        s.pay(ref, customer, country, f"{100 + 17 * n + s.night}.{(n * 7) % 100:02d}")

    def daily(count: int = 2) -> None:
        for n in range(count):
            ordinary(n + s.night * 3, f"n{s.night:02d}-{n + 1}")

    # Night 1: the first payouts: ordinary ones, the sandbox amounts, mismatches, an unknown id.
    s.at(2)
    for n in range(1, 16):
        ordinary(n, f"p{n:02d}")
    s.pay("aborted-1", "c06", "SE", "11.01")
    s.pay("failed-1", "c07", "DE", "12.01")
    s.pay("failed-2", "c08", "GB", "12.01")
    s.pay("return-14", "c09", "DK", "14.01")
    s.pay("delayed-1", "c10", "SE", "210.00")
    s.admin(
        "delayed-1",
        "answer",
        {"fields": {"state": 4, "error_code": "transaction_is_delayed_in_bank", "settled": None}},
    )
    s.pay("stale-1", "c11", "DE", "95.50")
    s.admin("stale-1", "answer", {"fields": {"state": 4, "settled": None}})
    s.pay("amount-1", "c12", "SE", "310.00")
    s.record("amount-1", amount="301.00")  # the merchant recorded another amount
    s.pay("currency-1", "c13", "SE", "120.00")
    s.record("currency-1", currency="EUR")  # paid in SEK, recorded in EUR
    s.record_only(
        "typo-1",
        {
            "transaction_id": "tx-typo-0001",
            "amount": "42.00",
            "currency": "EUR",
            "customer_id": "c02",
        },
    )
    s.note(
        "first payouts: 15 ordinary, 11.01 aborted, two 12.01 failed, 14.01 (returned after "
        "settling, with its notification), a payout delayed in the bank "
        "(transaction_is_delayed_in_bank), one left completed without settling (stale "
        "later), an amount and a currency recorded wrong, an id the provider does not know "
        "(404)"
    )
    s.run()

    # Night 2: duplicates (a pair, a group of three), a forged return, a notification twice.
    s.at(2)
    daily()
    s.pay("pair-a", "c14", "FI", "75.00")
    s.at(2.2)
    s.pay("pair-b", "c14", "FI", "75.00")
    for n in (1, 2, 3):
        s.at(2.3 + n / 10)
        s.pay(f"trio-{n}", "c15", "SE", "45.00")
    s.at(4)
    s.post(
        {
            "transaction_id": "forged-return-0001",
            "original_transaction_id": s.records["p02"]["transaction_id"],
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": "sandbox-merchant",
            "country_id": "de",
            "amount": Decimal(s.records["p02"]["amount"]),
        },
        query="via=back-office",
    )
    twice = {
        "merchant_id": "sandbox-merchant",
        "transaction_id": s.records["p03"]["transaction_id"],
        "transaction_state": 6,
    }
    s.post(twice)
    s.post(twice)
    s.post('{"hello": "not a notification recon can read"}')
    s.admin("p04", "return")
    s.note(
        "possible duplicates: a pair (same account and amount, ten minutes apart) and a group "
        "of three; a forged RETURNED_TRANSACTION for a settled payout (unverified); one "
        "callback delivered twice; an unreadable notification; a return of an ordinary "
        "payout (type-13 answer and its notification)"
    )
    s.run()

    # Night 3: a callback says failed, the merchant re-pays, both settle; a bank confirms a 12.01.
    s.at(2)
    daily()
    s.admin("p05", "notify", {"state": 3, "url": f"{RECEIVER}?via=scenario"})
    s.at(3)
    p05 = s.records["p05"]
    s.pay("p05-repay", p05["customer_id"], p05["country_id"], p05["amount"])
    s.admin("failed-1", "confirm")
    s.note(
        "a callback says p05 failed though it settled; the merchant re-pays it and both "
        "settle (double payment, late settlement); the bank confirms failed-1 after all"
    )
    s.run()

    # Night 4: a reversal after settlement, fetch failures.
    s.at(2)
    daily(3)
    s.admin("p06", "reverse", {"state": 3, "error_code": "bank_rejected_transaction"})
    s.note(
        "p06, settled, turns failed (reversed after settlement); the provider answers HTTP "
        "500 to every ask about one new payout (fetch_failed, exit 3) and to the first two "
        "about another (retried, then answered)"
    )
    s.run(failures={"n04-1": 99, "n04-2": 2})

    # Night 5: people work the queue; a reconciled payout's record changes its amount.
    s.at(1)
    s.act(
        {
            "exception_id": s.case("typo-1", "unknown_transaction"),
            "action": "acknowledge",
            "note": "asking the shop for the right id",
            "by": "maria",
        },
        {
            "exception_id": s.case("forged-return-0001", "return_unverified"),
            "action": "resolve",
            "note": "no such return at the bank",
            "by": "maria",
        },
        {
            "exception_id": s.case("pair-a", "possible_duplicate"),
            "action": "snooze",
            "note": "waiting for the customer",
            "by": "jonas",
            "until": "2026-03-24T00:00:00+01:00",
        },
        {
            "exception_id": s.case("amount-1", "amount_mismatch"),
            "action": "acknowledge",
            "note": "booking corrected next week",
            "by": "jonas",
        },
    )
    s.at(2)
    daily()
    s.record("p09", amount=str(Decimal(s.records["p09"]["amount"]) - 9))
    s.note(
        "people act: acknowledge the unknown id, resolve the forged return, snooze a "
        "duplicate until 24 March, acknowledge the amount mismatch; p09's record is "
        "re-imported with another amount (record changed, amount mismatch)"
    )
    s.run()

    # Night 6: a return on an unsettled payout; a return nobody notifies; the delay ends.
    s.at(2)
    daily()
    s.admin("failed-2", "return", {"any_state": True})
    s.admin("p10", "return", {"notify": False})
    s.admin("delayed-1", "answer", {})
    s.note(
        "the bank returns failed-2, which never settled (return on unsettled); p10 is "
        "returned without a notification (found by the return watch); delayed-1's delay ends"
    )
    s.run()

    # Night 7: provider-side payouts the record lacks.
    s.at(2)
    daily()
    s.pay("shop-side-1", "c16", "GB", "66.60", record=False)
    s._admin("faults", {"drop_create_answer": ["lost-1"]})
    lost = {"customer": "c17", "country": "DE", "amount": "88.80"}
    account = s.account(lost["customer"], lost["country"])
    answer = s.http.post(
        "/api/transaction.create_withdrawal",
        content=dumpb(
            {
                "amount": Decimal(lost["amount"]),
                "bank_account_id": account,
                "merchant_reference": "lost-1",
                "callbacks": [
                    {"url": f"{RECEIVER}?via=scenario", "transaction_state": st} for st in STATES
                ],
            }
        ),
        headers={"content-type": "application/json", "authorization": f"Bearer {s.token}"},
    )
    assert answer.status_code == 504, answer.text
    s._admin("faults", {"drop_create_answer": []})
    s.record_only(
        "lost-1",
        {
            "transaction_id": "",
            "amount": lost["amount"],
            "currency": "EUR",
            "bank_account_id": account,
            "customer_id": lost["customer"],
            "country_id": lost["country"],
            "created": iso(s.now()),
        },
    )
    s.pay("lost-1-retry", lost["customer"], lost["country"], lost["amount"])
    s.note(
        "a payout made outside the record (its callbacks name an id recon does not know: "
        "answered as a type-1 payout); a create whose answer was lost, recorded without an "
        "id, and its retry: the lost one is found through its callback, the retry its twin"
    )
    s.run()

    # Night 8: the stale payout settles; people resolve; a return claims another amount.
    s.at(1)
    s.act(
        {
            "exception_id": s.case("p05", "double_payment"),
            "action": "resolve",
            "note": "recovered from the customer",
            "by": "maria",
        },
        {
            "exception_id": s.case("p06", "reversed_after_settlement"),
            "action": "acknowledge",
            "note": "the bank says it bounced",
            "by": "jonas",
        },
    )
    s.at(2)
    daily()
    s.admin("stale-1", "answer", {})
    s.admin("p11", "return", {"notified_amount": Decimal("1.00")})
    s.note(
        "people resolve the double payment and acknowledge the reversal; stale-1 finally "
        "answers settled; p11 is returned and its notification claims another amount"
    )
    s.run()

    # Night 9: the store is edited behind recon's back; the snooze ends.
    s.at(1)
    gone, edited = s.records["p12"]["transaction_id"], s.records["p13"]["transaction_id"]
    s.tamper(
        *(
            {"sql": f"DELETE FROM {t} WHERE transaction_id = :id", "params": {"id": gone}}
            for t in ("outcome_history", "record_changes", "observations", "payouts")
        ),
        {
            "sql": "UPDATE outcome_history SET amount_minor = amount_minor + 1 "
            "WHERE transaction_id = :id",
            "params": {"id": edited},
        },
    )
    s.at(2)
    daily()
    s.note(
        "between nights the store is edited: p12's rows deleted, a history amount of p13 "
        "changed (roll-forward break, exit 3); the duplicate snoozed until 24 March is back"
    )
    s.run()

    # Night 10: an acknowledged case reopens because its facts change; a person reopens one.
    s.at(1)
    s.act(
        {
            "exception_id": s.case("typo-1", "unknown_transaction"),
            "action": "reopen",
            "note": "the shop has no better id",
            "by": "maria",
        }
    )
    s.at(2)
    daily()
    s.record("amount-1", amount="305.00")
    s.note(
        "amount-1's record changes again (305.00, still not the 310.00 paid): the "
        "acknowledged amount mismatch reopens; a person reopens the acknowledged unknown id"
    )
    s.run()

    # Night 11: a return in another currency; a confirmed return changes.
    s.at(2)
    daily()
    s.admin("p14", "return", {"amount": Decimal("50.00"), "currency": "SEK"})
    for return_id in s.returns_of("p04"):
        s._admin(f"transactions/{return_id}/change", {"amount": Decimal("10.00")})
    s.note(
        "p14 is returned in SEK though paid in another currency; p04's confirmed return now "
        "answers another amount (found when the return watch asks)"
    )
    s.run()

    # Night 12: a return larger than its payout; a wrong answer.
    s.at(2)
    daily()
    s.admin("p15", "return", {"amount": Decimal("999.00")})
    s.admin("n12-1", "answer", {"answer_of": s.records["p01"]["transaction_id"]})
    s.note(
        "p15 is returned for more than was paid; the answer about a new payout is about "
        "another transaction (wrong_transaction)"
    )
    s.run()

    # Night 13 (Stockholm is now on summer time): drift in an answer, a state nobody documents.
    s.at(2)
    daily()
    s.admin("n13-1", "answer", {"fields": {"merchant_reference": "someone-else"}})
    s.admin("n13-2", "answer", {"fields": {"state": 9}})
    s.admin("n12-1", "answer", {})
    s.note(
        "summer time in the report's zone; an answer names another merchant_reference; "
        "another answers an undocumented state (9); the wrong answer of night 12 is right now"
    )
    s.run()

    # Night 14: an id refused to this merchant account; more duplicates settle.
    s.at(2)
    daily()
    s.admin("n14-1", "refuse", {"status": 403})
    s.admin("n13-1", "answer", {})
    s.admin("n13-2", "answer", {})
    s.note(
        "one new payout is refused (403) to this merchant account; the drifting answers are "
        "right again"
    )
    s.run()

    # Night 15: fetch failures again; people resolve duplicates.
    s.at(1)
    s.act(
        *(
            {
                "exception_id": s.case(f"trio-{n}", "possible_duplicate"),
                "action": "resolve",
                "note": "three orders, three payouts",
                "by": "maria",
            }
            for n in (1, 2, 3)
        )
    )
    s.at(2)
    daily()
    s.admin("n14-1", "refuse", {"status": None})
    s.note(
        "people resolve the group of three as intended; HTTP 500 for two new payouts on "
        "every ask tonight"
    )
    s.run(failures={"n15-1": 99, "n15-2": 99})

    # Nights 16-22: the queue is worked, the watch schedules run, a return comes late.
    s.at(2)
    daily()
    s.note("a quiet night: new payouts; the failures of night 15 are answered")
    s.run()

    s.at(1)
    s.act(
        {
            "exception_id": s.case("amount-1", "amount_mismatch"),
            "action": "resolve",
            "note": "booked the difference",
            "by": "jonas",
        }
    )
    s.at(2)
    daily()
    s.admin("p07", "return", {"notify": False})
    s.note(
        "amount-1's mismatch resolved; p07 is returned sixteen days after it settled, "
        "without a notification (found when the return watch next asks)"
    )
    s.run()

    s.at(2)
    daily()
    s.note("a quiet night: new payouts, the watch schedules' asks")
    s.run()

    s.at(1)
    s.act(
        {
            "exception_id": s.case("p06", "reversed_after_settlement"),
            "action": "snooze",
            "note": "bank investigating",
            "by": "jonas",
            "until": "2026-04-05T00:00:00+02:00",
        }
    )
    s.at(2)
    daily()
    s.admin("p08", "reverse", {"state": 2})
    s.note(
        "p06's reversal snoozed until 5 April; p08 (settled) is aborted after all; the return "
        "watch finds p07's return"
    )
    s.run()

    s.at(2)
    daily(3)
    s.record("p09", amount=s.records["p09"]["amount"], merchant_reference="p09-corrected")
    s.note("p09's record is corrected again (another merchant_reference): record changed")
    s.run()

    s.at(2)
    daily()
    s.note("the snooze of p06 ends (5 April)")
    s.run()

    s.at(1)
    s.act(
        {
            "exception_id": s.case("p08", "reversed_after_settlement"),
            "action": "acknowledge",
            "note": "re-paid by bank transfer",
            "by": "maria",
        }
    )
    s.at(2)
    daily()
    s.note("the last night: p08's reversal acknowledged; the queue as it stands")
    s.run()


@contextmanager
def sandbox_on_loopback() -> Iterator[tuple[str, Any, Collector]]:
    collector = Collector()
    merchant = default_merchant().model_copy(
        update={"returned_funds_url": f"{RECEIVER}?via=back-office"}
    )
    config = SandboxConfig(
        merchants=[merchant],
        settle_after_seconds=60,
        callback_transport=httpx.MockTransport(collector),
    )
    app = create_app(config)
    sandbox = app.state.sandbox
    sandbox.clock = SandboxClock(time_source=lambda: T0.timestamp())  # the story's time only
    collector.sandbox = sandbox
    with serve_in_thread(app) as url:
        yield url, sandbox, collector


def readme(notes: dict[int, list[str]]) -> str:
    lines = [
        "# The golden scenario: 22 nights",
        "",
        "Recorded by `python -m tests.golden.record_scenario` (the story is its `story`"
        " function); replayed by `tests/golden/test_golden.py`. Each night runs at 21:00 UTC"
        " from Monday 16 March 2026; the report's zone is Europe/Stockholm. `night-NN/` holds"
        " the packs the replay must give; `cassette/` the recorded inputs.",
        "",
    ]
    for night, texts in sorted(notes.items()):
        lines.append(f"- night {night:02d}: " + "; ".join(texts))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="keep the recording's store and reports here")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="recon-golden-scenario-") as temp,
        product.no_retry_waits(),
        sandbox_on_loopback() as (url, sandbox, collector),
    ):
        work = args.keep or Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        s = Story(url, sandbox, collector, work)
        try:
            story(s)
        finally:
            s.engine.dispose()
        if len(s.nights) != NIGHTS:
            raise AssertionError(f"{len(s.nights)} nights told, {NIGHTS} meant")
        write_cassette(GOLDEN / "cassette", SETTINGS, s.nights)
        (GOLDEN / "README.md").write_text(readme(s.notes), encoding="utf-8")
    print(f"recorded {NIGHTS} nights into {GOLDEN / 'cassette'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
