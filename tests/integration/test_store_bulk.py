"""Rows written column by column (recon/store/bulk.py) are stored exactly as SQLAlchemy's own
executemany stores them, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, bindparam, insert, update

from recon.store.bulk import execute_columns
from recon.store.db import write_transaction
from recon.store.observations import insert_observations
from recon.store.runs import start_run
from recon.store.tables import observations, payouts

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
BERLIN = timezone(timedelta(hours=1))
OBSERVED = [
    "transaction_id",
    "fetched_at",
    "status",
    "state",
    "type",
    "error_code",
    "amount",
    "amount_minor",
    "currency",
    "related_transaction_id",
    "original_transaction_id",
    "merchant_reference",
    "to_bank_account_id",
    "created",
    "eta",
    "state_raw",
    "error",
    "raw",
]


def _observation(tid: str, **values: Any) -> dict[str, Any]:
    return {"transaction_id": tid, "fetched_at": T0, "status": "ok", **values}


def _observations(run_id: int, prefix: str) -> list[dict[str, Any]]:
    """Answers of every shape a run stores: whole, sparse, odd text, other time zones."""
    return [
        {
            **_observation(f"{prefix}-full"),
            "state": 6,
            "type": 1,
            "amount": "92233720368547758.07",
            "amount_minor": 9223372036854775807,
            "currency": "EUR",
            "related_transaction_id": "rel-1",
            "merchant_reference": "Référence ✓ 𝄞",
            "to_bank_account_id": "acct-1",
            "created": datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            "eta": datetime(2025, 3, 2, 1, 0, tzinfo=BERLIN),  # stored as 00:00 UTC
            "raw": '{"id": "x", "amount": 1.10, "text": "line\\nbreak"}',
            "run_id": run_id,
        },
        {**_observation(f"{prefix}-missing", status="not_found"), "run_id": run_id},
        {
            **_observation(f"{prefix}-error", status="error", fetched_at=T0.replace(microsecond=0)),
            "error": "HTTP 503: " + "x" * 1990,
            "run_id": run_id,
        },
        {
            **_observation(f"{prefix}-odd", state=None, state_raw="STATE_REFUNDED"),
            "error_code": "",
            "amount": "0.000000000000000001",
            "amount_minor": None,
            "currency": None,
            "run_id": run_id,
        },
    ]


def _stored(conn: Connection, sql: str, prefix: str) -> list[tuple[Any, ...]]:
    """The rows as the driver returns them (no SQLAlchemy result processing), without prefix."""
    rows = conn.exec_driver_sql(sql).all()
    return sorted(
        (row[0].removeprefix(prefix), *row[1:]) for row in rows if row[0].startswith(prefix)
    )


def _run(conn: Connection) -> int:
    return start_run(conn, as_of=T0, started_at=T0, host="test", pid=1)


def test_observations_are_stored_as_sqlalchemys_executemany_stores_them(engine: Engine) -> None:
    """The sink's column-by-column insert and SQLAlchemy's row-by-row one store the same values."""
    with write_transaction(engine) as conn:
        run_id = _run(conn)
        insert_observations(conn, _observations(run_id, "bulk"))
        # What insert_observations did before: SQLAlchemy's executemany of whole rows.
        whole = [
            {c: row.get(c) for c in ["run_id", *OBSERVED]} for row in _observations(run_id, "orm")
        ]
        conn.execute(insert(observations), whole)
    sql = f"SELECT {', '.join(OBSERVED)} FROM observations"
    with engine.connect() as conn:
        fast, slow = _stored(conn, sql, "bulk"), _stored(conn, sql, "orm")
    assert len(fast) == 4
    assert fast == slow


def _payout(tid: str) -> dict[str, Any]:
    return {
        "transaction_id": tid,
        "merchant_reference": f"ref-{tid}",
        "amount_minor": 1010,
        "currency": "EUR",
        "imported_at": T0,
    }


def _decided(prefix: str, run_id: int) -> list[dict[str, Any]]:
    return [
        {
            "b_id": f"{prefix}-1",
            "outcome": "settled",
            "state": 6,
            "exceptions": "",
            "ever_failed": True,
            "outcome_since": T0,
            "next_check_at": None,
            "eta": datetime(2025, 3, 1, 14, 0, tzinfo=BERLIN),
            "last_run_id": run_id,
        },
        {
            "b_id": f"{prefix}-2",
            "outcome": "pending",
            "state": None,
            "exceptions": "amount_mismatch;stale",
            "ever_failed": False,
            "outcome_since": None,
            "next_check_at": T0 + timedelta(days=3),
            "eta": None,
            "last_run_id": run_id,
        },
    ]


def test_payout_updates_are_stored_as_sqlalchemys_executemany_stores_them(
    engine: Engine,
) -> None:
    """An UPDATE by bound names, with a value of its own (last_checked_at), stores the same."""
    keys = ["outcome", "state", "exceptions", "ever_failed", "outcome_since", "next_check_at"]
    statement = (
        update(payouts)
        .where(payouts.c.transaction_id == bindparam("b_id"))
        .values(
            **{key: bindparam(key) for key in [*keys, "eta", "last_run_id"]},
            last_checked_at=T0,
        )
    )
    with write_transaction(engine) as conn:
        run_id = _run(conn)
        conn.execute(
            insert(payouts), [_payout(f"{p}-{n}") for p in ("bulk", "orm") for n in (1, 2)]
        )
        fast = _decided("bulk", run_id)
        written = execute_columns(conn, statement, {k: [r[k] for r in fast] for k in fast[0]})
        conn.execute(statement, _decided("orm", run_id))
    assert written == 2
    columns = ["transaction_id", *keys, "eta", "last_run_id", "last_checked_at", "imported_at"]
    sql = f"SELECT {', '.join(columns)} FROM payouts"
    with engine.connect() as conn:
        assert _stored(conn, sql, "bulk") == _stored(conn, sql, "orm")


def test_no_rows_is_no_statement(engine: Engine) -> None:
    """Empty columns write nothing (and need no compiled statement)."""
    with write_transaction(engine) as conn:
        assert execute_columns(conn, insert(observations), {"transaction_id": []}) == 0


def test_columns_of_different_lengths_are_refused(engine: Engine) -> None:
    """A column shorter than the others is a bug in the caller, not rows with NULLs."""
    with write_transaction(engine) as conn, pytest.raises(ValueError, match="has 1 values"):
        execute_columns(
            conn, insert(payouts), {"transaction_id": ["a", "b"], "merchant_reference": ["r"]}
        )
