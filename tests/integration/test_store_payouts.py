"""Payout records, observations and the run log on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, select, update

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.money import from_minor, to_minor
from recon.store._batch import ROWS_PER_STATEMENT, one_of
from recon.store.db import write_transaction
from recon.store.observations import insert_observations
from recon.store.payouts import UpsertCounts, upsert_payouts
from recon.store.runs import finish_run, latest_runs, start_run
from recon.store.tables import observations, payouts

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def payout(tid: str, amount: str = "100.10", currency: str = "EUR", **extra: Any) -> dict[str, Any]:
    return {
        "transaction_id": tid,
        "merchant_reference": f"ref-{tid}",
        "amount_minor": to_minor(Decimal(amount), currency),
        "currency": currency,
        "created": T0,
        **extra,
    }


def stored(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {row.transaction_id: row for row in conn.execute(select(payouts))}


def test_ids_differing_only_in_case_are_two_payouts(engine: Engine) -> None:
    """`abc` and `ABC` are distinct transaction ids on every database."""
    with write_transaction(engine) as conn:
        counts = upsert_payouts(conn, [payout("abc", "1.00"), payout("ABC", "2.00")])
    assert counts == UpsertCounts(inserted=2)
    rows = stored(engine)
    assert {tid: row.amount_minor for tid, row in rows.items()} == {"abc": 100, "ABC": 200}


def test_amounts_round_trip_exactly(engine: Engine) -> None:
    """Amounts come back to the same exact decimal, whatever the currency's digits."""
    cases = [
        ("a", "0.10", "EUR"),
        ("b", "100.10", "EUR"),
        ("c", "99999999999.99", "EUR"),
        ("d", "1500", "JPY"),
        ("e", "12.345", "KWD"),
        ("f", "92233720368547758.07", "EUR"),  # the largest BIGINT
    ]
    with write_transaction(engine) as conn:
        upsert_payouts(conn, [payout(tid, amount, cur) for tid, amount, cur in cases])
    rows = stored(engine)
    for tid, amount, currency in cases:
        row = rows[tid]
        assert from_minor(row.amount_minor, row.currency) == Decimal(amount)
        assert row.currency == currency


def test_timestamps_come_back_as_the_same_utc_instant(engine: Engine) -> None:
    """Created/eta keep microseconds and are returned aware, in UTC."""
    local = T0.astimezone(timezone(timedelta(hours=2)))
    with write_transaction(engine) as conn:
        upsert_payouts(conn, [payout("t", created=local, eta=None)])
    row = stored(engine)["t"]
    assert row.created == T0
    assert row.created.utcoffset() == timedelta(0)
    assert row.eta is None


def test_upserting_identical_data_changes_nothing_not_even_imported_at(engine: Engine) -> None:
    """A second upsert of the same rows counts them unchanged and leaves imported_at alone."""
    with write_transaction(engine) as conn:
        upsert_payouts(conn, [payout("x"), payout("y")], now=T0)
    with write_transaction(engine) as conn:
        counts = upsert_payouts(conn, [payout("x"), payout("y")], now=T0 + timedelta(days=1))
    assert counts == UpsertCounts(unchanged=2)
    assert {row.imported_at for row in stored(engine).values()} == {T0}


def test_an_upsert_updates_the_record_but_never_the_reconciled_state(engine: Engine) -> None:
    """A changed record is updated; outcome and the other run columns stay as the run left them."""
    with write_transaction(engine) as conn:
        upsert_payouts(conn, [payout("x"), payout("y")], now=T0)
        conn.execute(
            update(payouts)
            .where(payouts.c.transaction_id == "x")
            .values(outcome="failed", state=3, ever_failed=True, outcome_since=T0)
        )
    later = T0 + timedelta(hours=1)
    with write_transaction(engine) as conn:
        counts = upsert_payouts(
            conn,
            [payout("x", "200.00", bank_account_id="ba-1"), payout("y"), payout("z")],
            now=later,
        )
    assert counts == UpsertCounts(inserted=1, updated=1, unchanged=1)
    x = stored(engine)["x"]
    assert (x.amount_minor, x.bank_account_id, x.imported_at) == (20000, "ba-1", later)
    assert (x.outcome, x.state, x.ever_failed, x.outcome_since) == ("failed", 3, True, T0)


def test_many_rows_are_written_in_multi_row_batches(engine: Engine) -> None:
    """Thousands of rows in one call are all stored (statements are chunked under the limits)."""
    rows = [payout(f"p{i:05d}", f"{i}.01") for i in range(1, 2501)]
    with write_transaction(engine) as conn:
        assert upsert_payouts(conn, rows) == UpsertCounts(inserted=2500)
    assert len(stored(engine)) == 2500


COUNTS = RunCounts(payouts=1, outcomes={"settled": 1}, seconds=Decimal("100.10"))


def test_observations_and_the_run_log_are_stored(engine: Engine) -> None:
    """A run is opened, its observations stored with exact amounts, and closed with its counts."""
    with write_transaction(engine) as conn:
        run_id = start_run(conn, as_of=T0, started_at=T0, host="h1", pid=42)
        written = insert_observations(
            conn,
            [
                {
                    "run_id": run_id,
                    "transaction_id": "Tx",
                    "fetched_at": T0,
                    "status": "ok",
                    "state": 6,
                    "type": 1,
                    "amount": "100.10",
                    "amount_minor": 10010,
                    "currency": "EUR",
                    "raw": '{"id": "Tx", "amount": 100.10}',
                },
                {"run_id": run_id, "transaction_id": "tx", "fetched_at": T0, "status": "error",
                 "error": "timeout"},
            ],
        )  # fmt: skip
        finish_run(
            conn,
            run_id,
            status=RunStatus.COMPLETE,
            finished_at=T0 + timedelta(minutes=5),
            counts=COUNTS,
        )
    assert written == 2
    with engine.connect() as conn:
        obs = {row.transaction_id: row for row in conn.execute(select(observations))}
        runs = latest_runs(conn, 5)
    assert obs["Tx"].amount == "100.10"
    assert obs["tx"].status == "error"
    assert obs["tx"].state is None
    assert [(r.id, r.status, r.pid) for r in runs] == [(run_id, "complete", 42)]
    assert runs[0].counts == RunCounts(
        payouts=1, outcomes={"settled": 1}, seconds=Decimal("100.10")
    )
    assert runs[0].finished_at == T0 + timedelta(minutes=5)


def test_latest_runs_are_newest_first(engine: Engine) -> None:
    """latest_runs(n) returns the n most recent runs, the newest first."""
    with write_transaction(engine) as conn:
        ids = [start_run(conn, as_of=T0, started_at=T0, host="h", pid=i) for i in range(3)]
    with engine.connect() as conn:
        assert [run.id for run in latest_runs(conn, 2)] == [ids[2], ids[1]]
        assert latest_runs(conn, 2)[0].status == "running"


def test_a_reimport_of_many_chunks_finds_every_stored_payout(engine: Engine) -> None:
    """Past psycopg's prepare threshold (5 runs) the id lookup still finds every stored row."""
    rows = [payout(f"tx-{i:05d}") for i in range(7 * ROWS_PER_STATEMENT + 3)]
    now = datetime(2026, 11, 20, tzinfo=UTC)
    with write_transaction(engine) as conn:
        first = upsert_payouts(conn, rows, now=now)
    with write_transaction(engine) as conn:
        again = upsert_payouts(conn, rows, now=now)
    assert first == UpsertCounts(len(rows), 0, 0)
    assert again == UpsertCounts(0, 0, len(rows))


def test_the_id_lookup_is_one_array_parameter_on_postgresql(engine: Engine) -> None:
    """On PostgreSQL ``= ANY($1)``, which keeps the index under a generic plan; IN elsewhere."""
    with engine.connect() as conn:
        query = select(payouts.c.transaction_id).where(
            one_of(conn, payouts.c.transaction_id, ["a", "b", "c"])
        )
        sql = str(query.compile(conn))
        assert conn.execute(query).all() == []
    if engine.dialect.name == "postgresql":
        assert "= ANY (" in sql
        assert " IN " not in sql
    else:
        assert " IN " in sql
