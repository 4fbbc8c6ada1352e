"""Random nights on a real SQLite store close every roll-forward identity; one row removed or
edited behind recon's back breaks one.

Before each night: new payouts are imported, the provider's answers move outcomes, an import
changes a reconciled record, people act on open findings. The provider is scripted at the HTTP
boundary (``httpx.MockTransport``). After the nights, one stored row is removed or edited
directly in the database, and the next night must report ``rollforward_break`` (exit 3).
"""

from __future__ import annotations

import csv
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import ColumnElement, Connection, Engine, Table, delete, select, update

from recon.constants import ExitCode
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.store.db import ensure_schema, make_engine
from recon.store.tables import (
    exception_actions,
    exception_cases,
    outcome_history,
    payouts,
    record_changes,
    run_exceptions,
    runs,
)
from tests.integration.scripted_provider import (
    START,
    STATES,
    Provider,
    act_on_open_cases,
    night_settings,
    people_acting,
)

TAMPERS = (
    "delete_payout", "payout_amount", "payout_outcome", "history_amount", "history_outcome",
    "case_state", "delete_case",
)  # fmt: skip


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
        actions=people_acting,
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


def _edit(conn: Connection, table: Table, where: ColumnElement[bool], how: str) -> None:
    """Add one minor unit to the row's amount (``*_amount``), or flip its outcome between
    settled and returned."""
    if how.endswith("_amount"):
        conn.execute(update(table).where(where).values(amount_minor=table.c.amount_minor + 1))
    else:
        now = conn.scalar(select(table.c.outcome).where(where))
        other = "returned" if now != "returned" else "settled"
        conn.execute(update(table).where(where).values(outcome=other))


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
            else:
                _edit(conn, payouts, p.transaction_id == tx, how)
        elif how.startswith("history"):
            if not rows:
                return False
            _edit(conn, outcome_history, h.id == rows[pick % len(rows)], how)
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
        transport = provider.transport()
        base = night_settings(store.engine, work)
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
                act_on_open_cases(store.engine, night.actions, as_of - timedelta(hours=1))
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
