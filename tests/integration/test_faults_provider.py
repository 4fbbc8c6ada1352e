"""Provider faults during a run: whatever the provider does, an error never becomes an outcome.

One sandbox night (aborted, failed, delayed, returned, settled payouts and an id the provider does
not know) is reconciled once without faults: the reference. Then the same payouts, each time in a
fresh SQLite store, are reconciled while the sandbox (or a wrapper around it, or a raw TCP server)
misbehaves. Every payout must then either have the reference's outcome and state, or be
``unchecked`` and flagged ``fetch_failed`` (the run exiting incomplete); never ``failed``,
``aborted`` or ``unknown`` because of a fault.

The sandbox's clock stands still after the reference run, so that every later run meets the payouts
as the reference did: on a running clock 13.01's delay ends about 100 s after the fixture, and a
module that took longer on a loaded machine saw it settled and failed its comparison. The id the
provider does not know has an account and customer of its own, so that its failed fetch pairs it
with no payout as a possible duplicate.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from recon import jsonparse
from recon.constants import ExitCode, Outcome
from recon.errors import AuthorizeFailed, ProviderAuthError
from recon.ingest.notification_file import import_notifications
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.sandbox.app import create_app
from recon.sandbox.clock import SandboxClock
from recon.sandbox.config import SandboxConfig
from recon.sandbox.engine import Sandbox
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.db import make_engine
from tests.e2e.run_support import (
    Spec,
    World,
    by_id,
    create_payouts,
    read_csv,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(90)

SPECS = [
    Spec("11.01"),  # aborted
    Spec("11.02"),  # aborted
    Spec("12.01"),  # failed
    Spec("13.01"),  # delayed in the bank
    Spec("14.01"),  # settled, then returned (a type-13 transaction)
    *(Spec(f"{20 + i}.{i:02d}", country=("DE", "SE", "GB")[i % 3]) for i in range(21)),
]
GHOST = "no-such-transaction-4711"  # the provider does not know it: unknown
NO_FAULTS: dict[str, Any] = {
    "latency_ms": 0,
    "latency_jitter_ms": 0,
    "error_rate": 0,
    "rate_429": 0,
    "rate_limit_rps": None,
    "malformed_rate": 0,
    "missing_state_rate": 0,
    "slow_rate": 0,
    "token_lifetime_seconds": None,
    # A failed merchant.authorize stops the run (exit 1, tested below): faults here hit the
    # payouts' own calls.
    "spare_authorize": True,
}
Rows = dict[str, dict[str, str]]


class StoppedTime:
    """The sandbox clock's time source: real time when the fixture starts, then standing still
    except inside :meth:`flowing`."""

    def __init__(self) -> None:
        self.now = time.time()
        self._since: float | None = None

    def __call__(self) -> float:
        return self.now if self._since is None else self.now + time.time() - self._since

    @contextmanager
    def flowing(self) -> Iterator[None]:
        """Let time pass in real time for the block (tokens expire), then stand still again."""
        self._since = time.time()
        try:
            yield
        finally:
            self.now, self._since = self(), None


@dataclass
class Night:
    """The served sandbox, the merchant's CSV of its payouts, and the reference (clean) run."""

    world: World
    sandbox: Sandbox
    app: Any
    csv: Path
    as_of: datetime
    clean: Rows
    workdir: Path
    time: StoppedTime
    clean_requests: int = 0

    def faults(self, **changes: Any) -> None:
        """Set the sandbox's injected faults (everything else off)."""
        answer = self.world.admin.post("/sandbox/faults", json={**NO_FAULTS, **changes})
        assert answer.status_code == 200, answer.text

    def run(
        self, name: str, base_url: str | None = None, **settings: Any
    ) -> tuple[RunResult, Rows]:
        """Reconcile the night's payouts in a fresh store; the result and payouts.csv by id."""
        return run_fresh(self, name, base_url or self.world.sandbox_url, **settings)

    def run_under(
        self, faults: dict[str, Any], name: str, **settings: Any
    ) -> tuple[RunResult, Rows]:
        """:meth:`run` with the sandbox injecting ``faults``, which are off again afterwards."""
        self.faults(**faults)
        try:
            return self.run(name, **settings)
        finally:
            self.faults()


def run_fresh(night: Night, name: str, base_url: str, **overrides: Any) -> tuple[RunResult, Rows]:
    """Import the CSV into a new SQLite store and run once (fast retries, no email)."""
    url = f"sqlite:///{night.workdir / f'{name}.db'}"
    engine = make_engine(url)
    try:
        import_payouts_csv(engine, night.csv)
        options: dict[str, Any] = {
            "database_url": url,
            "api_base_url": base_url,
            "retry_attempts": 2,
            "retry_initial_wait": 0,
            "retry_max_wait": 0.2,
            "read_timeout": 5,
            "concurrency": 8,
        }
        options.update(overrides)
        out = night.workdir / name
        result = run_reconciliation(
            Settings(**options),
            RunOptions(out_dir=out, as_of=night.as_of, email=False),
            engine=engine,
        )
    finally:
        engine.dispose()
    return result, by_id(read_csv(out / "payouts.csv"))


def flags(row: dict[str, str]) -> set[str]:
    return {f for f in row["exceptions"].split(";") if f}


def assert_errors_never_became_outcomes(faulted: Rows, clean: Rows) -> tuple[int, int]:
    """Each payout has the clean outcome, or is unchecked + fetch_failed; (confirmed, failed)."""
    assert faulted.keys() == clean.keys()
    confirmed = failed = 0
    for tid, row in faulted.items():
        reference = clean[tid]
        if "fetch_failed" in flags(row):
            failed += 1
            assert row["outcome"] == Outcome.UNCHECKED, (tid, row, reference)
            assert row["state"] == "", (tid, row)
            continue
        confirmed += 1
        got = (row["outcome"], row["state"], row["error_code"], flags(row))
        want = (reference["outcome"], reference["state"], reference["error_code"], flags(reference))
        if reference["outcome"] == Outcome.RETURNED and row["outcome"] == Outcome.SETTLED:
            # The return itself could not be fetched: the payout is settled as far as confirmed.
            want = (Outcome.SETTLED, reference["state"], reference["error_code"], flags(reference))
        assert got == want, tid
    return confirmed, failed


def assert_incomplete(result: RunResult, rows: Rows) -> None:
    """The run says it is incomplete exactly when some payout could not be fetched."""
    failed = sum("fetch_failed" in flags(r) for r in rows.values())
    if failed:
        assert result.exit_code == ExitCode.INCOMPLETE
        assert result.status == "incomplete"
    else:
        assert result.exit_code == ExitCode.OK


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    """A sandbox night with every kind of outcome, and its reconciliation without faults."""
    workdir = tmp_path_factory.mktemp("faults")
    app = create_app(SandboxConfig(settle_after_seconds=60))
    stopped = StoppedTime()
    app.state.sandbox.clock = SandboxClock(stopped)
    with ExitStack() as stack:
        url = stack.enter_context(serve_in_thread(app))
        admin = stack.enter_context(httpx.Client(base_url=url, timeout=30))
        world = World(url, None, admin)
        payouts = create_payouts(world, SPECS, prefix="fault")
        # Everything ordinary has settled and 14.01 came back; 13.01 is still delayed (300 s).
        world.advance(200)
        rows = [p.csv_row() for p in payouts]
        # An account and customer of its own: a copy of the last payout's would pair with it as a
        # possible duplicate whenever the ghost's fetch fails (unchecked is in flight).
        ghost = {"transaction_id": GHOST, "merchant_reference": "ghost-1",
                 "bank_account_id": "ghost-account", "customer_id": "ghost-customer"}  # fmt: skip
        rows.append({**rows[-1], **ghost})
        csv_path = write_payouts_csv(workdir / "payouts.csv", rows)
        as_of = datetime.fromtimestamp(float(Decimal(world.now())), UTC)
        night = Night(world, app.state.sandbox, app, csv_path, as_of, {}, workdir, stopped)
        result, night.clean = night.run("clean")
        assert result.exit_code == ExitCode.OK, result.summary
        night.clean_requests = result.counts.requests
        yield night


def test_the_clean_night_has_every_outcome(night: Night) -> None:
    """The reference run sees aborted, failed, delayed, returned, settled and unknown payouts."""
    outcomes = {row["outcome"] for row in night.clean.values()}
    assert outcomes == {"aborted", "failed", "delayed", "returned", "settled", "unknown"}
    assert night.clean[GHOST]["outcome"] == Outcome.UNKNOWN


@pytest.mark.parametrize(
    ("name", "faults"),
    [
        pytest.param("burst_5xx", {"error_rate": 0.6, "seed": 3}, id="bursts-of-5xx"),
        pytest.param(
            "rate_429", {"rate_429": 0.5, "retry_after_seconds": 1, "seed": 5}, id="429-too-long"
        ),
        pytest.param("malformed", {"malformed_rate": 0.4, "seed": 7}, id="malformed-json"),
        pytest.param("no_state", {"missing_state_rate": 0.4, "seed": 9}, id="200-without-state"),
    ],
)
def test_a_fault_gives_fetch_failed_and_never_an_outcome(
    night: Night, name: str, faults: dict[str, Any]
) -> None:
    """Under each fault every payout keeps the clean outcome or is unchecked and fetch_failed."""
    result, rows = night.run_under(faults, name)
    confirmed, failed = assert_errors_never_became_outcomes(rows, night.clean)
    assert failed > 0, (confirmed, failed)
    assert confirmed > 0, (confirmed, failed)
    assert_incomplete(result, rows)


def test_429_with_a_short_retry_after_is_waited_out(night: Night) -> None:
    """A 429 whose Retry-After is within the retry budget is honoured and the run completes."""
    result, rows = night.run_under(
        {"rate_429": 0.2, "retry_after_seconds": 0, "seed": 11}, "rate_429_short", retry_attempts=6
    )
    assert rows == night.clean
    assert result.exit_code == ExitCode.OK


def test_answers_slower_than_the_read_timeout_are_fetch_failed(night: Night) -> None:
    """Answers slower than RECON_READ_TIMEOUT time out, are retried, and never become outcomes."""
    result, rows = night.run_under(
        {"slow_rate": 0.4, "slow_seconds": 1.5, "seed": 13}, "slow", read_timeout=0.3
    )
    confirmed, failed = assert_errors_never_became_outcomes(rows, night.clean)
    assert failed > 0, (confirmed, failed)
    assert confirmed > 0, (confirmed, failed)
    assert_incomplete(result, rows)


def test_a_token_expiring_mid_run_is_renewed_and_nothing_fails(night: Night) -> None:
    """With half-second tokens and latency the run re-authorizes as needed and completes."""
    with night.time.flowing():
        result, rows = night.run_under(
            {"token_lifetime_seconds": 0.5, "latency_ms": 60}, "token", concurrency=2
        )
    assert rows == night.clean
    assert result.exit_code == ExitCode.OK
    # Re-authorizations and the calls answered 401 are extra requests over the clean run's.
    assert result.counts.requests > night.clean_requests


# --- connections cut mid-answer -------------------------------------------------------------------


class CutMidAnswer:
    """ASGI wrapper: answers ``transaction.get`` of doomed ids with headers and half a body, then
    drops the connection (``cuts`` times per id; ``None`` for every time)."""

    def __init__(self, app: Any, doomed: set[str], cuts: int | None) -> None:
        self.app = app
        self.doomed = doomed
        self.cuts = cuts
        self.count: dict[str, int] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("transaction.get"):
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        victim = next((t for t in self.doomed if t.encode() in body), None)
        if victim is not None and (self.cuts is None or self.count.get(victim, 0) < self.cuts):
            self.count[victim] = self.count.get(victim, 0) + 1
            headers = [(b"content-type", b"application/json"), (b"content-length", b"4000")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"id": "', "more_body": True})
            return  # uvicorn closes the connection of an unfinished answer

        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()  # type: ignore[no-any-return]
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


@pytest.mark.parametrize("cuts", [1, None], ids=["once-then-retried", "every-time"])
def test_a_connection_cut_mid_answer_is_retried_or_fetch_failed(
    night: Night, cuts: int | None
) -> None:
    """A connection dropped half-way through the answer is retried; if it keeps dropping, the
    payout is fetch_failed and keeps no invented outcome."""
    doomed = {tid for i, tid in enumerate(sorted(night.clean)) if i % 3 == 0}
    wrapper = CutMidAnswer(night.app, doomed, cuts)
    with serve_in_thread(wrapper) as url:
        result, rows = night.run(f"cut_{cuts}", base_url=url)
    assert all(wrapper.count.get(t, 0) >= 1 for t in doomed)
    if cuts == 1:
        assert rows == night.clean
        assert result.exit_code == ExitCode.OK
    else:
        confirmed, _failed = assert_errors_never_became_outcomes(rows, night.clean)
        assert {t for t, r in rows.items() if "fetch_failed" in flags(r)} == doomed
        assert confirmed == len(rows) - len(doomed)
        assert result.exit_code == ExitCode.INCOMPLETE


@contextmanager
def resetting_server() -> Iterator[str]:
    """A raw TCP server that reads a request and resets the connection (RST, no answer)."""
    loop = asyncio.new_event_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        raw = writer.get_extra_info("socket")
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    server = loop.run_until_complete(asyncio.start_server(handle, sock=sock))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


def test_a_provider_that_resets_every_connection_stops_the_run_at_authorize(night: Night) -> None:
    """Against a provider resetting every connection, merchant.authorize fails after its retries
    and the run stops with AuthorizeFailed (exit 1): no payout is fetch_failed one by one."""
    with resetting_server() as url, pytest.raises(AuthorizeFailed) as caught:
        night.run("reset", base_url=url)
    assert "connection failed" in str(caught.value)


# --- answers no column can hold, and a provider that refuses the keys -----------------------------


def odd_answers(request: httpx.Request) -> httpx.Response:
    """A provider whose 200s carry values beyond what a database column holds."""
    if request.url.path.endswith("merchant.authorize"):
        return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
    tid = jsonparse.loads(request.content)["id"]
    body: dict[str, Any] = {"id": tid, "state": 6, "type": 1, "amount": 1, "currency_id": "EUR"}
    odd: dict[int, dict[str, Any]] = {
        0: {"amount": Decimal("1e30")},
        1: {"state": 10**20},
        2: {"error_code": "x" * 300},
        3: {"related_transaction_id": "\udc80"},
        4: {"amount": Decimal("9e999999")},
    }
    body.update(odd.get(int(tid.rsplit("-", 1)[1]) % 6, {}))
    return httpx.Response(200, content=jsonparse.dumpb(body))


def test_answers_no_column_can_hold_are_fetch_failed_not_a_crash(tmp_path: Path) -> None:
    """Huge amounts and states, over-long codes and surrogates in a 200 make those payouts
    fetch_failed; the run stores the rest and exits incomplete instead of crashing."""
    csv_path = tmp_path / "p.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"odd-{i},r-{i},1.00,EUR\n" for i in range(12))
    )
    url = f"sqlite:///{tmp_path / 'odd.db'}"
    engine = make_engine(url)
    import_payouts_csv(engine, csv_path)
    settings = Settings(database_url=url, api_base_url="http://provider", retry_attempts=1)
    result = run_reconciliation(
        settings,
        RunOptions(out_dir=tmp_path / "out", email=False),
        transport=httpx.MockTransport(odd_answers),
        engine=engine,
    )
    engine.dispose()
    rows = by_id(read_csv(tmp_path / "out" / "payouts.csv"))
    failed = {t for t, r in rows.items() if "fetch_failed" in flags(r)}
    assert failed == {f"odd-{i}" for i in range(12) if i % 6 < 5}
    assert {rows[t]["outcome"] for t in failed} == {Outcome.UNCHECKED}
    assert {rows[t]["outcome"] for t in rows.keys() - failed} == {Outcome.SETTLED}
    assert result.exit_code == ExitCode.INCOMPLETE


def test_wrong_api_keys_stop_the_run_at_once_instead_of_failing_every_payout(
    night: Night,
) -> None:
    """A refused merchant.authorize is a dependency failure (exit 1), not N fetch failures."""
    with pytest.raises(ProviderAuthError):
        night.run("wrong_keys", api_secret="not-the-secret")


def test_forged_notifications_never_change_an_outcome(night: Night) -> None:
    """A return claimed for a real settled payout that the provider does not confirm, and one
    from an unknown merchant id, leave every outcome as the clean run has it."""
    settled = sorted(t for t, r in night.clean.items() if r["outcome"] == Outcome.SETTLED)[:2]
    forged = [
        {
            "transaction_id": "forged-return-1",
            "original_transaction_id": settled[0],
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": "sandbox-merchant",
            "country_id": "DE",
            "amount": Decimal("20.00"),
        },
        {
            "transaction_id": "forged-return-2",
            "original_transaction_id": settled[1],
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": "someone-else",
            "country_id": "DE",
            "amount": Decimal("21.01"),
        },
    ]
    jsonl = night.workdir / "forged.jsonl"
    jsonl.write_bytes(b"\n".join(jsonparse.dumpb(body) for body in forged) + b"\n")
    engine = make_engine(f"sqlite:///{night.workdir / 'forged.db'}")
    import_notifications(engine, jsonl)
    engine.dispose()
    result, rows = night.run("forged")
    assert {t: r["outcome"] for t, r in rows.items()} == {
        t: r["outcome"] for t, r in night.clean.items()
    }
    assert rows[settled[0]]["returned_amount"] in ("", "0.00")
    returns = by_id(read_csv(night.workdir / "forged" / "returns.csv"), "return_transaction_id")
    assert {returns[f"forged-return-{i}"]["confirmed"] for i in (1, 2)} == {"false"}
    assert result.exit_code == ExitCode.OK
