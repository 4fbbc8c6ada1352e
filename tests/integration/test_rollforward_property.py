"""Random nights on a real SQLite store close every roll-forward identity; one row removed or
edited behind recon's back breaks one (issue 26, done-when 1).

Before each night: new payouts are imported, the provider's answers move outcomes, an import
changes a reconciled record, people act on open findings. The provider is scripted at the HTTP
boundary (``httpx.MockTransport``). After the nights, one stored row is removed or edited
directly in the database, and the next night must report ``rollforward_break`` (exit 3).
"""

from __future__ import annotations

import csv
import json
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, select, update

from recon.constants import CaseAction, ExitCode
from recon.decision import ActionRequest
from recon.ingest.payouts import import_payouts_csv
from recon.ops.findings import act
from recon.reconcile.run import RunOptions, run_reconciliation
from recon.settings import Settings
from recon.store.cases import list_cases
from recon.store.db import ensure_schema, make_engine, write_transaction
from recon.store.tables import (
    exception_actions,
    exception_cases,
    outcome_history,
    payouts,
    record_changes,
    run_exceptions,
    runs,
)

START = datetime(2027, 1, 4, 6, tzinfo=UTC)
STATES = (1, 2, 3, 6, None)  # pending, aborted, failed, settled, unknown to the provider
TAMPERS = (
    "delete_payout", "payout_amount", "payout_outcome", "history_amount", "history_outcome",
    "case_state", "delete_case",
)  # fmt: skip


@dataclass
class Provider:
    """The provider's side: each id's state (None: unknown) and amount."""

    states: dict[str, int | None] = field(default_factory=dict)

    def handle(self, request: httpx.Request) -> httpx.Response:
        operation = request.url.path.rpartition("/api/")[2]
        body = json.loads(request.content)
        if operation == "merchant.authorize":
            return _json(200, '{"access_token": "tok", "expires": 4102444800.0}')
        tx_id = str(body["id"])
        state = self.states.get(tx_id)
        if state is None:
            return _json(404, '{"error_name": "transaction_not_found"}')
        return _json(
            200,
            f'{{"id": "{tx_id}", "state": {state}, "type": 1, "amount": 10.00,'
            f' "currency_id": "sek", "merchant_reference": "ref-{tx_id}"}}',
        )


def _json(status: int, text: str) -> httpx.Response:
    return httpx.Response(
        status, content=text.encode(), headers={"content-type": "application/json"}
    )


@dataclass(frozen=True)
class Night:
    """What happens before one run."""

    new: int  # payouts imported
    states: tuple[tuple[int, int | None], ...]  # (which payout, by position; its new state)
    change: int | None  # which payout's amount an import changes
    actions: tuple[tuple[int, str], ...]  # (which open case, by position; what a person does)


nights = st.lists(
    st.builds(
        Night,
        new=st.integers(0, 3),
        states=st.lists(st.tuples(st.integers(0, 9), st.sampled_from(STATES)), max_size=3).map(
            tuple
        ),
        change=st.none() | st.integers(0, 9),
        actions=st.lists(
            st.tuples(st.integers(0, 5), st.sampled_from(["acknowledge", "resolve", "snooze"])),
            max_size=2,
        ).map(tuple),
    ),
    min_size=2,
    max_size=3,
)


class Store:
    """The merchant's record (what each import holds) and the recon store."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.engine: Engine = make_engine(f"sqlite:///{work / 'recon.db'}")
        ensure_schema(self.engine)
        self.amounts: dict[str, str] = {}

    def import_record(self) -> None:
        path = self.work / "payouts.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["transaction_id", "merchant_reference", "amount", "currency",
                             "bank_account_id", "created"])  # fmt: skip
            for i, amount in self.amounts.items():
                writer.writerow([i, f"ref-{i}", amount, "SEK", f"ba-{i}", "1799300000"])
        import_payouts_csv(self.engine, path)


def _act(engine: Engine, night: Night, when: datetime) -> None:
    with engine.connect() as conn:
        cases = [c.exception_id for c in list_cases(conn, states=["open"])]
    done: set[str] = set()
    for position, action in night.actions:
        if not cases:
            return
        exception_id = cases[position % len(cases)]
        if exception_id in done:
            continue
        until = when + timedelta(days=2) if action == "snooze" else None
        request = ActionRequest(exception_id, CaseAction(action), "a note", "anna", until)
        with write_transaction(engine) as conn:
            act(conn, [request], now=when, source="test")
        done.add(exception_id)


def _tamper(engine: Engine, how: str, pick: int) -> bool:
    """Remove or edit one stored row behind recon's back; False when there is none to touch."""
    p, h, c = payouts.c, outcome_history.c, exception_cases.c
    with engine.begin() as conn:
        ids = list(conn.scalars(select(p.transaction_id).where(p.outcome.is_not(None))))
        last = conn.scalar(select(runs.c.id).order_by(runs.c.id.desc()).limit(1))
        rows = list(conn.scalars(select(h.id).where(h.run_id == last).order_by(h.id)))
        cases = list(conn.scalars(select(c.exception_id).where(c.ended_run_id.is_(None))))
        cases = [e for e in cases if conn.scalar(select(c.state).where(c.exception_id == e))
                 in ("open", "acknowledged", "snoozed")]  # fmt: skip
        if how.startswith("payout") or how == "delete_payout":
            if not ids:
                return False
            tx = ids[pick % len(ids)]
            if how == "delete_payout":
                for table in (outcome_history, record_changes):
                    conn.execute(delete(table).where(table.c.transaction_id == tx))
                conn.execute(delete(payouts).where(p.transaction_id == tx))
            elif how == "payout_amount":
                conn.execute(
                    update(payouts)
                    .where(p.transaction_id == tx)
                    .values(amount_minor=p.amount_minor + 1)
                )
            else:
                now = conn.scalar(select(p.outcome).where(p.transaction_id == tx))
                other = "returned" if now != "returned" else "settled"
                conn.execute(update(payouts).where(p.transaction_id == tx).values(outcome=other))
        elif how.startswith("history"):
            if not rows:
                return False
            row = rows[pick % len(rows)]
            if how == "history_amount":
                conn.execute(
                    update(outcome_history)
                    .where(h.id == row)
                    .values(amount_minor=h.amount_minor + 1)
                )
            else:
                now = conn.scalar(select(h.outcome).where(h.id == row))
                other = "returned" if now != "returned" else "settled"
                conn.execute(update(outcome_history).where(h.id == row).values(outcome=other))
        else:
            if not cases:
                return False
            case = cases[pick % len(cases)]
            if how == "case_state":
                conn.execute(
                    update(exception_cases).where(c.exception_id == case).values(state="resolved")
                )
            else:
                conn.execute(
                    delete(exception_actions).where(exception_actions.c.exception_id == case)
                )
                conn.execute(delete(exception_cases).where(c.exception_id == case))
    return True


@settings(
    max_examples=4,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(story=nights, how=st.sampled_from(TAMPERS), pick=st.integers(0, 20))
def test_random_nights_close_every_identity_and_any_row_touched_behind_recons_back_breaks_one(
    no_retry_waits: None, story: list[Night], how: str, pick: int
) -> None:
    """Every night closes; after one row is removed or edited, the next night breaks (exit 3)."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        store = Store(work)
        provider = Provider()
        transport = httpx.MockTransport(provider.handle)
        base = Settings(
            database_url=str(store.engine.url), api_base_url="http://provider.test",
            retry_attempts=1, report_workbook="off", out_dir=work / "out",
        )  # fmt: skip
        story = [Night(new=2, states=(), change=None, actions=()), *story]
        try:
            for n, night in enumerate(story):
                as_of = START + timedelta(hours=6 * n)
                for _ in range(night.new):
                    tx = f"p{len(store.amounts)}"
                    store.amounts[tx] = "10.00"
                    provider.states[tx] = 1
                known = list(store.amounts)
                for position, state in night.states:
                    provider.states[known[position % len(known)]] = state
                if night.change is not None:
                    changed = known[night.change % len(known)]
                    store.amounts[changed] = "11.50"
                store.import_record()
                _act(store.engine, night, as_of - timedelta(hours=1))
                result = run_reconciliation(
                    base, RunOptions(out_dir=work / f"night{n}", as_of=as_of, email=False),
                    transport=transport, engine=store.engine,
                )  # fmt: skip
                assert "rollforward_break" not in result.counts.flags, (n, _breaks(work, n))
            if not _tamper(store.engine, how, pick):
                return
            n = len(story)
            result = run_reconciliation(
                base, RunOptions(out_dir=work / f"night{n}", as_of=START + timedelta(hours=6 * n),
                                 email=False),
                transport=transport, engine=store.engine,
            )  # fmt: skip
            assert result.counts.flags.get("rollforward_break"), how
            assert result.exit_code == ExitCode.INCOMPLETE
            with store.engine.connect() as conn:
                assert conn.scalar(
                    select(run_exceptions.c.flag).where(
                        run_exceptions.c.flag == "rollforward_break"
                    )
                )
        finally:
            store.engine.dispose()


def _breaks(work: Path, n: int) -> list[str]:
    with (work / f"night{n}" / "exceptions.csv").open(encoding="utf-8") as handle:
        return [
            r["detail"] for r in csv.DictReader(handle) if r["exception"] == "rollforward_break"
        ]
