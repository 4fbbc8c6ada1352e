"""A night with the provider's export stored: a payout the export shows settled is decided without
asking (a poll saved), a payout row the record lacks is unrecorded_payout with no callback, and a
row disagreeing with the latest answer is asked about. The sandbox over loopback HTTP; the export's
rows inserted as stored (SQLite, PostgreSQL and MariaDB).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, insert, select

from recon.constants import DEFAULT_ACCOUNT
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.settings import Settings
from recon.store.export_tables import provider_export_files, provider_export_rows
from recon.store.tables import notifications, observations, payouts, record_changes
from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Payout,
    Spec,
    World,
    create_payouts,
    served_world,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(180, method="thread")


@dataclass
class Night:
    """A served sandbox, the record of the payouts made there, and nights run on them."""

    world: World
    engine: Engine
    workdir: Path
    payouts: list[Payout]
    outside: Payout  # made at the sandbox, never recorded, named by no callback
    nights: int = 0

    def run(self) -> RunResult:
        self.nights += 1
        settings = Settings(
            database_url=self.engine.url.render_as_string(hide_password=False),
            api_base_url=self.world.sandbox_url,
            out_dir=self.workdir,
            retry_attempts=2,
            retry_initial_wait=0,
            **DAILY_SCHEDULES,
        )
        as_of = datetime.fromtimestamp(float(Decimal(self.world.now())), UTC)
        return run_reconciliation(
            settings,
            RunOptions(out_dir=self.workdir / f"night{self.nights}", as_of=as_of, email=False),
            engine=self.engine,
        )


@pytest.fixture
def night(engine: Engine, tmp_path: Path) -> Iterator[Night]:
    """Two payouts at the sandbox (10.00 and 20.00 EUR), both settled an hour on, and the
    merchant's record of both; a third (12.34 EUR) the record lacks."""
    with served_world("sqlite://", settle_after=60, receiver=False) as world:
        made = create_payouts(world, [Spec("10.00"), Spec("20.00"), Spec("12.34")], prefix="ex")
        world.advance(3600)
        recorded = made[:2]
        import_payouts_csv(
            engine, write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in recorded])
        )
        yield Night(world, engine, tmp_path, recorded, made[2])


def store_export(
    engine: Engine, *rows: dict[str, Any], now: datetime | None = None, days: int = 2
) -> None:
    """One export file of the default account, holding ``rows`` (payout rows unless said), stored
    ``now`` (the wall clock unless given), covering the last ``days`` days."""
    now = now or datetime.now(UTC)
    with engine.begin() as conn:
        file_id = conn.execute(
            insert(provider_export_files).values(
                provider_account=DEFAULT_ACCOUNT,
                sha256=hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest(),
                settled_from=now - timedelta(days=days),
                settled_to=now + timedelta(days=1),
                rows=len(rows),
                capped=False,
                headers=json.dumps(["id", "type", "state", "amount", "currency_id"]),
                source="file",
                name="test.csv",
                stored_at=now,
            )
        ).inserted_primary_key[0]
        for line, row in enumerate(rows, start=2):
            values = {
                "provider_account": DEFAULT_ACCOUNT,
                "kind": "payout",
                "version": 1,
                "file_id": file_id,
                "line": line,
                "digest": hashlib.sha256(repr(sorted(row.items())).encode()).hexdigest(),
                "type_raw": "1",
                "state_raw": str(row.get("state", "")),
                "settled": now,
                **row,
            }
            conn.execute(insert(provider_export_rows).values(values))


def test_a_settled_row_saves_a_poll_and_a_row_the_record_lacks_is_unrecorded(
    night: Night,
) -> None:
    """The first payout's row (settled, 10.00 EUR) decides it: settled, never asked about, one
    poll saved; the second payout is asked about as always; the row of the third (12.34 EUR), an
    id no callback named, is asked about as an id the record lacks, and is unrecorded_payout."""
    first, second = night.payouts
    outside = night.outside
    store_export(
        night.engine,
        {"transaction_id": first.transaction_id, "state": 6, "amount_minor": 1000,
         "currency": "EUR", "merchant_reference": first.reference},
        {"transaction_id": outside.transaction_id, "state": 6, "amount_minor": 1234,
         "currency": "EUR", "merchant_reference": outside.reference},
    )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls_saved == 1
    assert result.counts.polls.get("open") == 1  # the second payout only
    assert result.counts.flags.get("unrecorded_payout") == 1
    assert result.counts.provider.get("unrecorded_payouts") == 1
    o, p = observations.c, payouts.c
    with night.engine.connect() as conn:
        asked = set(conn.execute(select(o.transaction_id)).scalars())
        outcomes = dict(conn.execute(select(p.transaction_id, p.outcome)).all())
    assert asked == {second.transaction_id, outside.transaction_id}
    assert outcomes == {first.transaction_id: "settled", second.transaction_id: "settled"}
    report = (night.workdir / "night1").rglob("report.html")
    assert any("polls saved" in path.read_text() for path in report)


def test_a_row_disagreeing_with_the_latest_answer_is_asked_about(night: Night) -> None:
    """Both payouts answered settled the first night; a row of the next day's file says the first
    failed: the next night asks about it (reason export), and the provider's answer (settled)
    decides; the second, not due, is not asked about."""
    first, _ = night.payouts
    assert night.run().exit_code == 0
    night.world.advance(60)
    store_export(
        night.engine,
        {"transaction_id": first.transaction_id, "state": 3, "amount_minor": 1000,
         "currency": "EUR"},
    )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls.get("export") == 1
    assert result.counts.polls_saved == 0
    o, p = observations.c, payouts.c
    with night.engine.connect() as conn:
        asked = conn.execute(
            select(func.count()).where(o.transaction_id == first.transaction_id)
        ).scalar_one()
        outcome = conn.execute(
            select(p.outcome).where(p.transaction_id == first.transaction_id)
        ).scalar_one()
    assert (asked, outcome) == (2, "settled")


def test_covered_days_stand_in_for_a_return_watch_check_unless_a_return_names_it(
    night: Night,
) -> None:
    """Both payouts answered settled the first night and due for the return watch the next day; a
    complete file covers every day since, with a returned-funds row naming the second: the first
    is decided from its latest answer (a poll saved, its check moved on as if asked), the second
    is asked about."""
    first, second = night.payouts
    assert night.run().exit_code == 0
    night.world.advance(86400)
    now = datetime.fromtimestamp(float(Decimal(night.world.now())), UTC)
    store_export(
        night.engine,
        {"transaction_id": "R-1", "kind": "returned_funds", "type_raw": "13", "state": 6,
         "amount_minor": 2000, "currency": "EUR",
         "related_transaction_id": second.transaction_id, "settled": now},
        now=now,
        days=3,
    )  # fmt: skip
    p, o = payouts.c, observations.c
    with night.engine.connect() as conn:
        before = dict(conn.execute(select(p.transaction_id, p.next_check_at)).all())
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls_saved == 1
    assert result.counts.polls.get("return watch") == 1
    with night.engine.connect() as conn:
        asked = dict(
            conn.execute(select(o.transaction_id, func.count()).group_by(o.transaction_id)).all()
        )
        after = {
            tid: (outcome, checked, due)
            for tid, outcome, checked, due in conn.execute(
                select(p.transaction_id, p.outcome, p.last_checked_at, p.next_check_at)
            ).all()
        }
    assert asked == {first.transaction_id: 1, second.transaction_id: 2}
    outcome, checked, due = after[first.transaction_id]
    assert outcome == "settled"
    assert (checked, due) == after[second.transaction_id][1:]  # moved on as if it was asked
    assert due is not None
    assert due > before[first.transaction_id]


def test_a_callback_since_the_last_answer_keeps_the_return_watch_check(night: Night) -> None:
    """Both payouts due for the return watch, every day since covered; a transaction callback
    about the first came after its last answer: it is asked about, the second is decided from its
    latest answer."""
    first, second = night.payouts
    assert night.run().exit_code == 0
    night.world.advance(86400)
    now = datetime.fromtimestamp(float(Decimal(night.world.now())), UTC)
    store_export(night.engine, now=now, days=3)
    with night.engine.begin() as conn:
        conn.execute(
            insert(notifications).values(
                provider_account=DEFAULT_ACCOUNT, dedupe_key="0" * 64, kind="transaction",
                transaction_id=first.transaction_id, state=6, query="", source="receiver",
                received_at=datetime.now(UTC),
            )
        )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls_saved == 1
    o = observations.c
    with night.engine.connect() as conn:
        asked = dict(
            conn.execute(select(o.transaction_id, func.count()).group_by(o.transaction_id)).all()
        )
    assert asked == {first.transaction_id: 2, second.transaction_id: 1}


def test_a_callback_or_a_changed_record_is_spent_only_by_an_answer(night: Night) -> None:
    """Fresh settled rows for both payouts, never asked about before: a transaction callback
    names the first and an import changed the second's record (recorded after the night's pull,
    say): neither is decided from the export; both are asked about, no poll saved."""
    first, second = night.payouts
    store_export(
        night.engine,
        *({"transaction_id": p.transaction_id, "state": 6, "amount_minor": int(p.amount * 100),
           "currency": "EUR", "merchant_reference": p.reference} for p in (first, second)),
    )  # fmt: skip
    with night.engine.begin() as conn:
        conn.execute(
            insert(notifications).values(
                provider_account=DEFAULT_ACCOUNT, dedupe_key="1" * 64, kind="transaction",
                transaction_id=first.transaction_id, state=3, query="", source="receiver",
                received_at=datetime.now(UTC),
            )
        )  # fmt: skip
        conn.execute(
            insert(record_changes).values(
                provider_account=DEFAULT_ACCOUNT, transaction_id=second.transaction_id,
                field="amount", before="20.00", after="20.00", imported_at=datetime.now(UTC),
            )
        )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls_saved == 0
    with night.engine.connect() as conn:
        asked = set(conn.execute(select(observations.c.transaction_id)).scalars())
    assert {first.transaction_id, second.transaction_id} <= asked


def test_a_callback_older_than_the_file_is_answered_by_the_file(night: Night) -> None:
    """The mirror case: the callback about the first payout came an hour before the export file
    that shows it settled was stored; the file is the newer word, and the payout is decided from
    it (a poll saved); the second, with no row, is asked."""
    first, second = night.payouts
    stored = datetime.now(UTC)
    with night.engine.begin() as conn:
        conn.execute(
            insert(notifications).values(
                provider_account=DEFAULT_ACCOUNT, dedupe_key="2" * 64, kind="transaction",
                transaction_id=first.transaction_id, state=6, query="", source="receiver",
                received_at=stored - timedelta(hours=1),
            )
        )  # fmt: skip
    store_export(
        night.engine,
        {"transaction_id": first.transaction_id, "state": 6, "amount_minor": 1000,
         "currency": "EUR", "merchant_reference": first.reference},
        now=stored,
    )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.polls_saved == 1
    with night.engine.connect() as conn:
        asked = set(conn.execute(select(observations.c.transaction_id)).scalars())
    assert asked == {second.transaction_id}


def test_a_fee_row_apart_from_its_payouts_fee_is_fee_mismatch_in_the_pack(night: Night) -> None:
    """The first payout's row settles it with no fee; a fee row naming it charges 0.99 EUR: the
    night finds fee_mismatch on it, and exceptions.csv says which row charges what, with the
    fee's 0.99 at stake, not the payout's 10.00."""
    first, _ = night.payouts
    store_export(
        night.engine,
        {"transaction_id": first.transaction_id, "state": 6, "amount_minor": 1000,
         "currency": "EUR", "merchant_reference": first.reference},
        {"transaction_id": "fee-1", "kind": "fee", "type_raw": "fee", "state": 6,
         "amount_minor": 99, "currency": "EUR", "related_transaction_id": first.transaction_id},
    )  # fmt: skip
    result = night.run()
    assert result.exit_code == 0, result.summary
    assert result.counts.flags.get("fee_mismatch") == 1
    (exceptions,) = (night.workdir / "night1").rglob("exceptions.csv")
    read = csv.DictReader(exceptions.read_text().splitlines())
    rows = [r for r in read if r["exception"] == "fee_mismatch"]
    assert [(r["transaction_id"], r["amount_at_stake"]) for r in rows] == [
        (first.transaction_id, "0.99")
    ]
    assert rows[0]["detail"] == (
        "the export's fee row fee-1 charges 0.99 EUR; the payout's answer gives a fee of none"
    )
