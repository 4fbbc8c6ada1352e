"""The roll-forward's ``fees`` lines over random nights on a real SQLite store: per currency,
previous + charged + changed = now every night, ``now`` is the stored fees' sum, and a fee edited
behind recon's back breaks the next night that no answer explains it.

Before each night new payouts are imported in two currencies, the provider's answers move their
states, and its fees appear, change or go away (scripted at the HTTP boundary).
"""

from __future__ import annotations

import csv
import json
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select, update

from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.store.db import ensure_schema, make_engine
from recon.store.tables import payouts
from tests.integration.scripted_provider import START, night_settings

CURRENCIES = ("SEK", "JPY")
FEES = (None, "0", "1", "2", "25")  # whole units: they fit SEK and JPY alike


@dataclass
class FeeProvider:
    """Each id's state, currency and fee (None: no fee in its answer)."""

    states: dict[str, int] = field(default_factory=dict)
    currency: dict[str, str] = field(default_factory=dict)
    fees: dict[str, str | None] = field(default_factory=dict)
    down: bool = False  # every transaction.get fails: nothing is answered

    def handle(self, request: httpx.Request) -> httpx.Response:
        """The answer of a provider in this state."""
        if request.url.path.endswith("merchant.authorize"):
            return httpx.Response(200, json={"access_token": "t", "expires": 4102444800})
        if self.down:
            return httpx.Response(500, json={"error_name": "internal"})
        tid = str(json.loads(request.content)["id"])
        body: dict[str, object] = {"id": tid, "state": self.states[tid], "type": 1,
                                   "amount": "100", "currency_id": self.currency[tid],
                                   "merchant_reference": f"ref-{tid}"}  # fmt: skip
        fee = self.fees.get(tid)
        if fee is not None:
            body |= {"fee_amount": fee, "fee_id": f"F-{tid}-{fee}"}
        return httpx.Response(200, content=json.dumps(body).encode())


@dataclass(frozen=True)
class Night:
    """What happens before one run: payouts imported, answers and fees that change."""

    new: int
    states: tuple[tuple[int, int], ...]
    fees: tuple[tuple[int, str | None], ...]


nights = st.lists(
    st.builds(
        Night,
        new=st.integers(0, 3),
        states=st.lists(st.tuples(st.integers(0, 9), st.sampled_from((1, 2, 3, 6))), max_size=3)
        .map(tuple),
        fees=st.lists(st.tuples(st.integers(0, 9), st.sampled_from(FEES)), max_size=4).map(tuple),
    ),
    min_size=2,
    max_size=4,
)  # fmt: skip


def fee_lines(out: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """Per currency, the ``fees`` lines of rollforward.csv: line -> (count, amount in minor)."""
    got: dict[str, dict[str, tuple[int, int]]] = {}
    with (out / "rollforward.csv").open(encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            if r["outcome"] == "fees":
                minor = int(r["amount"].replace(".", ""))
                got.setdefault(r["currency"], {})[r["line"]] = (int(r["count"]), minor)
    return got


def stored_fees(engine: Engine) -> dict[str, tuple[int, int]]:
    p = payouts.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(p.currency, func.count(p.fee_minor), func.sum(p.fee_minor))
            .where(p.fee_minor.is_not(None), p.outcome.is_not(None))
            .group_by(p.currency)
        ).all()
    return {str(c): (int(n), int(s)) for c, n, s in rows}


def _import(engine: Engine, work: Path, provider: FeeProvider) -> None:
    path = work / "payouts.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["transaction_id", "merchant_reference", "amount", "currency", "created"])
        for tid, currency in provider.currency.items():
            writer.writerow([tid, f"ref-{tid}", "100", currency, "1799300000"])
    import_payouts_csv(engine, path)


@settings(
    max_examples=5,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(story=nights)
def test_the_fees_lines_close_every_night_and_a_fee_edited_behind_recons_back_breaks_them(
    no_retry_waits: None, story: list[Night]
) -> None:
    """previous + charged + changed = now per currency; now is the stored fees; an edit breaks."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        engine = make_engine(f"sqlite:///{work / 'recon.db'}")
        ensure_schema(engine)
        provider = FeeProvider()
        base = night_settings(engine, work)
        story = [Night(new=2, states=(), fees=((0, "1"),)), *story]
        try:
            for n, night in enumerate(story):
                for _ in range(night.new):
                    tid = f"p{len(provider.states)}"
                    provider.states[tid] = 1
                    provider.currency[tid] = CURRENCIES[len(provider.states) % 2]
                known = list(provider.states)
                for position, state in night.states:
                    provider.states[known[position % len(known)]] = state
                for position, fee in night.fees:
                    provider.fees[known[position % len(known)]] = fee
                _import(engine, work, provider)
                out = work / f"night{n}"
                result = run_reconciliation(
                    base, RunOptions(out_dir=out, as_of=START + timedelta(hours=6 * n),
                                     email=False),
                    transport=httpx.MockTransport(provider.handle), engine=engine,
                )  # fmt: skip
                assert "rollforward_break" not in result.counts.flags, n
                lines, stored = fee_lines(out), stored_fees(engine)
                for currency, got in lines.items():
                    count = sum(got[x][0] for x in ("previous", "charged", "changed"))
                    amount = sum(got[x][1] for x in ("previous", "charged", "changed"))
                    assert (count, amount) == got["now"], (n, currency, got)
                    assert got["now"] == stored.get(currency, (0, 0)), (n, currency)
                assert set(stored) <= set(lines)
            with engine.begin() as conn:
                tampered = conn.execute(
                    update(payouts)
                    .where(payouts.c.fee_minor.is_not(None))
                    .values(fee_minor=payouts.c.fee_minor + 1)
                ).rowcount
            if not tampered:
                return
            # A night the provider answers nothing: no answer explains the stored fees' change.
            provider.down = True
            n = len(story)
            result = run_reconciliation(
                base, RunOptions(out_dir=work / f"night{n}",
                                 as_of=START + timedelta(hours=6 * n), email=False),
                transport=httpx.MockTransport(provider.handle), engine=engine,
            )  # fmt: skip
            assert result.counts.flags.get("rollforward_break")
        finally:
            engine.dispose()
