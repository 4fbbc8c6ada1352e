"""Random sequences of nights on a real SQLite store: no finding forgotten.

Each example imports four payouts, then runs a few nights. Before each night the provider's
states move, some fetches fail, callbacks arrive and people act on open findings. The provider
is scripted at the HTTP boundary (``httpx.MockTransport``), and it records which ids it was asked
about. After every night these must hold:

- a finding that was open never leaves Needs action without a closing event: it is listed as
  new or persisting, or it is cleared by an answer about its item;
- the report's "N problems need action" equals the open cases `recon exceptions list` shows;
- a payout with unspent evidence (a callback no answer has followed yet) is asked about.
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from recon.constants import NotificationSource
from recon.ingest.notifications import parse_body
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.store.cases import list_cases
from recon.store.db import ensure_schema, make_engine
from recon.store.notifications import store_notifications
from tests.integration.scripted_provider import (
    START,
    STATES,
    Provider,
    act_on_open_cases,
    night_settings,
    people_acting,
)

IDS = ("p0", "p1", "p2", "p3")


@dataclass(frozen=True)
class Night:
    """What happens before one run."""

    states: dict[str, int | None]
    failing: frozenset[str]
    callbacks: frozenset[str]
    actions: tuple[tuple[int, str], ...]  # (which open case, by position; what a person does)


nights = st.lists(
    st.builds(
        Night,
        states=st.dictionaries(st.sampled_from(IDS), st.sampled_from(STATES), max_size=4),
        failing=st.frozensets(st.sampled_from(IDS), max_size=3),
        callbacks=st.frozensets(st.sampled_from(IDS), max_size=2),
        actions=people_acting,
    ),
    min_size=2,
    max_size=4,
)


def _store(work: Path) -> Engine:
    engine = make_engine(f"sqlite:///{work / 'recon.db'}")
    ensure_schema(engine)
    rows = [
        {"transaction_id": i, "merchant_reference": f"ref-{i}", "amount": "10.00",
         "currency": "SEK", "bank_account_id": f"ba-{i}", "created": "1799300000"}
        for i in IDS
    ]  # fmt: skip
    path = work / "payouts.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    import_payouts_csv(engine, path)
    return engine


def _callback(engine: Engine, tx_id: str, state: int) -> bool:
    """Store a transaction callback; False when the same one was stored before (one
    notification delivered twice is one piece of evidence)."""
    body = json.dumps({"merchant_id": "m", "transaction_id": tx_id, "transaction_state": state})
    return store_notifications(engine, [parse_body(body, source=NotificationSource.FILE)]) > 0


def _open_cases(engine: Engine) -> list[tuple[str, str, str, str]]:
    with engine.connect() as conn:
        return [
            (c.exception_id, c.item_kind, c.item_id, c.flag)
            for c in list_cases(conn, states=["open"])
        ]


@settings(
    max_examples=15,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(story=nights)
def test_findings_and_evidence_survive_any_sequence_of_nights(
    no_retry_waits: None, story: list[Night]
) -> None:
    """No finding leaves Needs action unclosed; counts agree; unspent evidence is asked about."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        engine = _store(work)
        provider = Provider(states=dict.fromkeys(IDS, 1))
        transport = provider.transport()
        base = night_settings(engine, work)
        owed: set[str] = set()  # callbacks no answer has followed yet
        try:
            for n, night in enumerate(story):
                as_of = START + timedelta(hours=6 * n)  # on one or two calendar days
                provider.states.update(night.states)
                provider.failing = set(night.failing)
                for tx_id in sorted(night.callbacks):
                    if _callback(engine, tx_id, provider.states.get(tx_id) or 3):
                        owed.add(tx_id)
                acted = act_on_open_cases(engine, night.actions, as_of - timedelta(hours=1))
                before = [c for c in _open_cases(engine) if c[0] not in acted]
                provider.asked.clear()
                out = work / f"night{n}"
                run_reconciliation(
                    base, RunOptions(out_dir=out, as_of=as_of, email=False), transport=transport,
                    engine=engine,
                )  # fmt: skip
                asked = set(provider.asked)
                answered = asked - provider.failing
                assert owed <= asked, f"night {n}: evidence unspent but not asked: {owed - asked}"
                owed -= answered

                listed = {r["exception_id"]: r for r in _rows(out / "exceptions.csv")}
                for exception_id, kind, item, flag in before:
                    row = listed.get(exception_id)
                    assert row is not None, f"night {n}: {flag} on {item} left unclosed"
                    if row["status"] == "cleared":
                        assert item in answered or kind != "payout" or flag != "fetch_failed"
                    else:
                        assert row["status"] in ("new", "persisting"), row
                need = len(_open_cases(engine))
                html = (out / "report.html").read_text(encoding="utf-8")
                assert re.search(rf"\b{need} problems? needs? action", html), f"night {n}: {need}"
        finally:
            engine.dispose()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))
