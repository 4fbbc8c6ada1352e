"""Generated hostile answers, through the real client, to the stored outcome of a real run.

Each example is one night: a handful of payouts, each answered by ``transaction.get`` with an
answer that is valid, or broken in one way (nesting too deep, too large, a number of absurd
magnitude, a wrong type in a required field, another transaction's id, cut short). The provider
is faked at the HTTP boundary (``httpx.MockTransport``); everything after it is the real `recon
run` into a fresh SQLite store. Whatever the answers, the run completes, a broken answer is
``unchecked`` + ``fetch_failed``, and no payout is ``settled`` unless its answer says state 6
about that very id.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recon.constants import ExitCode, Outcome, TxState
from recon.ingest.payouts import import_payouts_csv
from recon.jsonparse import MAX_DEPTH
from recon.night.run import RunOptions, run_reconciliation
from recon.settings import Settings
from recon.store.db import make_engine
from tests.e2e.run_support import by_id, read_csv

pytestmark = pytest.mark.timeout(240, method="thread")

CAP = 8 * 1024  # RECON_MAX_ANSWER_BYTES for these runs
REQUIRED = ("id", "state", "type", "amount", "currency_id")
ABSURD_NUMBERS = (
    "1e999999999", "-1e999999999", "1e400000", "9e-999999999", "1" * 5000, "-" + "7" * 4301,
    "1" * 100, "123456789012345678901234567890",
)  # fmt: skip


@dataclass(frozen=True)
class Answer:
    """One generated answer: the body sent, and what it says (for the oracle)."""

    body: bytes
    broken: bool  # must be a malformed answer: fetch_failed, never an outcome
    says_settled: bool  # a valid answer saying state 6 about the id asked for
    finding: str = "fetch_failed"  # what a broken answer is (about another id: its own)


def encode(fields: dict[str, str]) -> bytes:
    """An object from raw JSON texts per key (numbers kept exactly as written)."""
    return ("{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in fields.items()) + "}").encode()


json_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
wrong_type = st.sampled_from(["null", "true", "false", "[]", "[6]", '{"state": 6}'])


@st.composite
def answers(draw: st.DrawFn, tid: str) -> Answer:
    """A transaction.get answer for ``tid``: valid, or broken in one generated way."""
    state = draw(st.sampled_from([int(s) for s in TxState]))
    fields = {
        "id": json.dumps(tid),
        "state": draw(st.sampled_from([str(state), json.dumps(TxState(state).name)])),
        "type": "1",
        "amount": draw(st.sampled_from(["1.00", "1", '"1.00"'])),
        "currency_id": draw(st.sampled_from(['"EUR"', '"eur"'])),
    }
    # Fields the interface does not name: kept, whatever their values.
    extra = draw(st.dictionaries(st.sampled_from(["surprise", "x_note"]), json_junk))
    fields.update({k: json.dumps(v) for k, v in extra.items()})
    valid = Answer(encode(fields), broken=False, says_settled=state == TxState.SETTLED)
    kind = draw(
        st.sampled_from(["valid", "deep", "large", "number", "wrong_type", "wrong_id", "cut"])
    )
    if kind == "valid":
        return valid
    if kind == "deep":
        depth = draw(st.integers(MAX_DEPTH + 1, 60_000))
        where = draw(st.sampled_from(["surprise", "state", "body"]))
        if where == "body":
            return Answer(b"[" * depth, broken=True, says_settled=False)
        fields[where] = "[" * depth + "6" + "]" * depth
    elif kind == "large":
        fields["x_note"] = json.dumps("x" * draw(st.integers(CAP, 4 * CAP)))
    elif kind == "number":
        fields[draw(st.sampled_from(["state", "type", "amount", "created"]))] = draw(
            st.sampled_from(ABSURD_NUMBERS)
        )
    elif kind == "wrong_type":
        fields[draw(st.sampled_from(REQUIRED))] = draw(wrong_type)
    elif kind == "wrong_id":
        other = draw(st.text(min_size=1, max_size=20).filter(lambda s: s != tid))
        fields["id"] = json.dumps(other)
        # An id with a NUL fits no column (PostgreSQL text refuses it), so the answer is malformed
        # before its id is compared: fetch_failed. Any other id is wrong_transaction.
        finding = "fetch_failed" if "\x00" in other else "wrong_transaction"
        return Answer(encode(fields), broken=True, says_settled=False, finding=finding)
    else:
        body = valid.body
        return Answer(body[: draw(st.integers(0, len(body) - 1))], broken=True, says_settled=False)
    return Answer(encode(fields), broken=True, says_settled=False)


@st.composite
def nights(draw: st.DrawFn) -> dict[str, Answer]:
    """Five to eight payouts and the answer each gets."""
    count = draw(st.integers(5, 8))
    return {f"hx-{i}": draw(answers(f"hx-{i}")) for i in range(count)}


def settled_about(answered: str) -> bytes:
    """A well-formed answer saying state 6 about ``answered``."""
    return encode({"id": json.dumps(answered), "state": "6", "type": "1", "amount": "1.00",
                   "currency_id": '"EUR"'})  # fmt: skip


# What hypothesis found: an id with a NUL is a malformed answer (fetch_failed), even the asked id
# and a NUL; an id that fits the store is another id (wrong_transaction).
NUL_IN_ID = {
    "hx-0": Answer(settled_about("\xae\x9e\xf1^f\x00"), broken=True, says_settled=False),
    "hx-1": Answer(settled_about("hx-1\x00"), broken=True, says_settled=False),
    "hx-2": Answer(
        settled_about("hx-1"), broken=True, says_settled=False, finding="wrong_transaction"
    ),
    "hx-3": Answer(settled_about("hx-3"), broken=False, says_settled=True),
}


def run_night(workdir: Path, night: dict[str, Answer]) -> tuple[int, dict[str, dict[str, str]]]:
    """Import the payouts, run once against a provider giving ``night``'s answers."""

    def provider(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        tid = json.loads(request.content)["id"]
        return httpx.Response(200, content=night[tid].body)

    csv_path = workdir / "payouts.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"{tid},ref-{tid},1.00,EUR\n" for tid in night)
    )
    url = f"sqlite:///{workdir / 'recon.db'}"
    engine = make_engine(url)
    try:
        import_payouts_csv(engine, csv_path)
        options: dict[str, Any] = {
            "database_url": url,
            "api_base_url": "http://provider.test",
            "retry_attempts": 1,
            "max_answer_bytes": CAP,
            "concurrency": 4,
        }
        result = run_reconciliation(
            Settings(**options),
            RunOptions(out_dir=workdir / "out", email=False),
            transport=httpx.MockTransport(provider),
            engine=engine,
        )
    finally:
        engine.dispose()
    return int(result.exit_code), by_id(read_csv(workdir / "out" / "payouts.csv"))


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@example(NUL_IN_ID)
@given(nights())
def test_hostile_answers_never_crash_a_run_nor_settle_what_they_do_not_say(
    night: dict[str, Answer],
) -> None:
    """The run completes; broken answers are unchecked + fetch_failed (an answer about another id
    is wrong_transaction instead); settled only when said."""
    with tempfile.TemporaryDirectory() as tmp:
        exit_code, rows = run_night(Path(tmp), night)
    assert exit_code in (ExitCode.OK, ExitCode.INCOMPLETE)
    assert rows.keys() == night.keys()
    for tid, answer in night.items():
        row = rows[tid]
        found = set(row["exceptions"].split(";")) & {"fetch_failed", "wrong_transaction"}
        failed = bool(found)
        if answer.broken:
            assert found == {answer.finding}, (tid, answer.body[:200], row)
            assert row["outcome"] == Outcome.UNCHECKED, (tid, row)
        else:
            assert not failed, (tid, answer.body[:200], row)
        if row["outcome"] == Outcome.SETTLED:
            assert answer.says_settled, (tid, answer.body[:200], row)
    broken = sum(a.broken for a in night.values())
    assert exit_code == (ExitCode.INCOMPLETE if broken else ExitCode.OK)
