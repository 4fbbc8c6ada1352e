"""A hostile provider over a real socket during a whole `recon run`.

A stand-in provider (a raw HTTP server on loopback) answers ``transaction.get`` of some payouts with
50,000 nested brackets, numbers of absurd magnitude, a 200 MB body, a body dripped one byte at a
time, or an answer about another transaction. Each of those payouts must end ``unchecked`` with
``fetch_failed``, the others settled, and the run must finish (exit 3) instead of crashing or
hanging. An answer from ``merchant.authorize`` that is not a token stops the run (exit 1) and no
payout becomes ``unknown``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from recon.constants import ExitCode, Outcome
from recon.errors import AuthorizeFailed, ProviderAuthError
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.settings import Settings
from recon.store.db import make_engine
from recon.store.tables import observations
from tests.e2e.run_support import by_id, read_csv
from tests.integration.provider_standin import Reply, serve_standin, token_answer

pytestmark = pytest.mark.timeout(120, method="thread")

MIB = 1024 * 1024
GOOD = [f"good-{i}" for i in range(4)]


def settled_answer(tid: str, **raw: str) -> str:
    """A settled transaction.get answer for ``tid``; ``raw`` replaces fields by raw JSON text."""
    fields = {"id": json.dumps(tid), "state": "6", "type": "1", "amount": "1.00"}
    fields["currency_id"] = '"EUR"'
    fields.update(raw)
    return "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"


async def megabytes_of_x() -> AsyncIterator[bytes]:
    """200 MB of a JSON string, made 64 KB at a time."""
    yield b'{"id": "big", "message": "'
    for _ in range(200 * 16):
        yield b"x" * (64 * 1024)
    yield b'"}'


async def dripping() -> AsyncIterator[bytes]:
    """A settled answer, one byte every 0.4 s (well within the read timeout)."""
    for byte in settled_answer("drip").encode():
        await asyncio.sleep(0.4)
        yield bytes([byte])


HOSTILE: dict[str, Reply] = {
    "deep": Reply(200, b"[" * 50_000),
    "deep-object": Reply.json(200, settled_answer("deep-object", surprise="{" * 50_000)),
    "deep-error": Reply(500, b"[" * 50_000),
    "huge-type": Reply.json(200, settled_answer("huge-type", type="1e999999999")),
    "huge-state": Reply.json(200, settled_answer("huge-state", state="1e999999999")),
    "digits": Reply.json(200, settled_answer("digits", state="6" + "0" * 4999)),
    "wrong-id": Reply.json(200, settled_answer("someone-else")),
    "big": Reply(200, megabytes_of_x),
    "big-declared": Reply(200, megabytes_of_x, length=200 * MIB + 29),
    "drip": Reply(200, dripping),
}


def hostile_provider(operation: str, body: dict[str, Any]) -> Reply:
    """Tokens as usual; hostile answers for the HOSTILE ids; settled answers for the rest."""
    if operation == "merchant.authorize":
        return token_answer()
    tid = str(body["id"])
    return HOSTILE.get(tid) or Reply.json(200, settled_answer(tid))


def run_once(tmp_path: Path, base_url: str, ids: list[str], **overrides: Any) -> RunResult:
    """Import ``ids`` into a fresh SQLite store and reconcile once against ``base_url``."""
    csv_path = tmp_path / "payouts.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"{tid},ref-{tid},1.00,EUR\n" for tid in ids)
    )
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    engine = make_engine(url)
    try:
        import_payouts_csv(engine, csv_path)
        options: dict[str, Any] = {
            "database_url": url,
            "api_base_url": base_url,
            "retry_attempts": 1,
            "read_timeout": 5,
            "request_deadline": 2,
            "max_answer_bytes": 512 * 1024,
            "concurrency": 4,
        }
        options.update(overrides)
        return run_reconciliation(
            Settings(**options), RunOptions(out_dir=tmp_path / "out", email=False), engine=engine
        )
    finally:
        engine.dispose()


def stored_observations(tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    """(status, error text) of every stored observation, by transaction id."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(observations.c.transaction_id, observations.c.status, observations.c.error)
            ).all()
    finally:
        engine.dispose()
    return {tid: (status, error) for tid, status, error in rows}


def test_hostile_answers_are_fetch_failed_and_the_run_completes(tmp_path: Path) -> None:
    """Deep nesting, absurd numbers, 200 MB, a drip and another id: each of those payouts is
    unchecked + fetch_failed (another id: wrong_transaction), the good ones settled, the run exits
    incomplete (3)."""
    with serve_standin(hostile_provider) as standin:
        result = run_once(tmp_path, standin.url, [*GOOD, *HOSTILE])
    rows = by_id(read_csv(tmp_path / "out" / "payouts.csv"))
    for tid in HOSTILE:
        assert rows[tid]["outcome"] == Outcome.UNCHECKED, (tid, rows[tid])
        finding = "wrong_transaction" if tid == "wrong-id" else "fetch_failed"
        assert finding in rows[tid]["exceptions"].split(";"), tid
    assert {rows[tid]["outcome"] for tid in GOOD} == {Outcome.SETTLED}
    assert result.exit_code == ExitCode.INCOMPLETE

    stored = stored_observations(tmp_path)
    errors = {tid: error or "" for tid, (status, error) in stored.items() if status != "ok"}
    assert errors.keys() == HOSTILE.keys()
    assert stored["wrong-id"][0] == "wrong_id"
    assert {status for tid, (status, _) in stored.items() if tid in HOSTILE} == {
        "error",
        "wrong_id",
    }
    assert errors["wrong-id"].startswith("wrong_transaction:")
    for tid in ("deep", "deep-object"):
        assert "deeper than" in errors[tid], errors[tid]
    for tid in ("big", "big-declared"):
        assert "RECON_MAX_ANSWER_BYTES" in errors[tid], errors[tid]
    assert "RECON_REQUEST_DEADLINE" in errors["drip"], errors["drip"]
    # The client stopped reading: most of the 200 MB was never sent (socket buffers hold a few MB).
    assert standin.written[("transaction.get", "big")] < 50 * MIB
    assert standin.written[("transaction.get", "big-declared")] < 50 * MIB


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(Reply.json(404, '{"error_name": "not_found"}'), id="404"),
        pytest.param(Reply.json(503, '{"error_name": "unavailable"}'), id="503"),
        pytest.param(Reply.json(200, "<html>a login page</html>"), id="not-json"),
        pytest.param(Reply(200, b"[" * 50_000), id="deep"),
    ],
)
def test_an_authorize_failure_stops_the_run_and_no_payout_becomes_unknown(
    tmp_path: Path, reply: Reply
) -> None:
    """merchant.authorize answering 404 (a wrong base URL), 5xx or garbage stops the run with
    AuthorizeFailed; no observation is stored, so no payout is read as not found."""

    def provider(operation: str, body: dict[str, Any]) -> Reply:
        if operation == "merchant.authorize":
            return reply
        return Reply.json(404, '{"error_name": "transaction_not_found"}')

    with serve_standin(provider) as standin, pytest.raises(AuthorizeFailed) as caught:
        run_once(tmp_path, standin.url, GOOD, retry_attempts=2, retry_max_wait=0.1)
    assert not isinstance(caught.value, ProviderAuthError)
    assert "\n" not in str(caught.value)
    assert ("transaction.get", GOOD[0]) not in standin.written
    assert stored_observations(tmp_path) == {}
