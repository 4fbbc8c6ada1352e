"""Scale benchmarks: importing a large payout CSV, and ``recon report`` over a large history.

The CSV is generated (ids, references, exact two-decimal amounts, creation times spread over a
year). The history a report needs is generated directly in SQL after an import: one completed run
whose ``outcome_history`` holds a row for every payout (outcomes spread by the amount's cents:
90% settled, 4% pending, 2% failed, 1% aborted, 1% delayed, 1% returned, 1% unknown), and
``run_exceptions`` for 3% of the payouts. That is what a year of nightly runs leaves for the
report to read, without polling a million payouts first.

Every function takes a database URL, SQLite or PostgreSQL alike: the history is SQLAlchemy Core
``INSERT ... SELECT``, and ``recon import`` creates the schema itself on an empty database.
"""

from __future__ import annotations

import csv
import tempfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import islice
from pathlib import Path

from sqlalchemy import case, insert, literal, select, update

from bench.support import RECON, Measured, measure
from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.ingest.payouts import validate_row
from recon.store.db import ensure_schema, make_engine, write_transaction
from recon.store.runs import finish_run, start_run
from recon.store.tables import outcome_history, payouts, run_exceptions

_YEAR_START = datetime(2025, 1, 1, tzinfo=UTC)


def write_csv(path: Path, rows: int) -> None:
    """A payout CSV of ``rows`` distinct payouts (header line first)."""
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write("transaction_id,merchant_reference,amount,currency,customer_id,created\n")
        step = 365 * 86_400 / max(rows, 1)
        start = _YEAR_START.timestamp()
        for i in range(rows):
            created = datetime.fromtimestamp(start + i * step, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(
                f"tx{i:09d}Ab,ref-{i:09d},{100 + i % 900}.{i % 100:02d},EUR,"
                f"cust-{i % 50_000},{created}\n"
            )


def import_csv(
    database_url: str, csv_path: Path, *, timeout: float = 900.0, check: bool = True
) -> Measured:
    """``recon import payouts FILE`` as its own process (killed after ``timeout`` seconds)."""
    env = {"RECON_DATABASE_URL": database_url}
    cmd = [*RECON, "import", "payouts", str(csv_path)]
    return measure(cmd, env=env, timeout=timeout, check=check)


def load_payouts(database_url: str, csv_path: Path, batch_rows: int = 10_000) -> int:
    """Store the payouts of ``csv_path`` with plain INSERTs, into an empty database; how many.

    For a report when ``recon import`` did not finish in time: the same records the import stores
    (its own row validation), without its per-batch lookup of the rows already stored.
    """
    engine = make_engine(database_url)
    ensure_schema(engine)
    imported_at = datetime.now(UTC)
    count = 0
    with csv_path.open(newline="", encoding="utf-8") as handle, write_transaction(engine) as conn:
        reader = csv.DictReader(handle)
        while rows := list(islice(reader, batch_rows)):
            records = []
            for cells in rows:
                record, problems = validate_row(cells)
                if record is None:
                    raise ValueError(f"{csv_path}: {cells}: {problems}")
                records.append({**record, "imported_at": imported_at})
            conn.execute(insert(payouts), records)
            count += len(records)
    engine.dispose()
    return count


def write_history(database_url: str) -> int:
    """One completed run over every stored payout, its history rows and 3% exceptions; its id."""
    engine = make_engine(database_url)
    as_of = _YEAR_START + timedelta(days=366)
    cents = payouts.c.amount_minor % 100
    outcome = case(
        (cents < 90, "settled"),
        (cents < 94, "pending"),
        (cents < 96, "failed"),
        (cents < 97, "aborted"),
        (cents < 98, "delayed"),
        (cents < 99, "returned"),
        else_="unknown",
    )
    state = case((cents < 90, 6), (cents < 94, 4), (cents < 96, 3), (cents < 97, 2), else_=6)
    flag = case(
        (cents == 96, "amount_mismatch"), (cents == 97, "stale"), else_="unknown_transaction"
    )
    with write_transaction(engine) as conn:
        run_id = start_run(conn, as_of=as_of, started_at=as_of, host="bench", pid=0)
        history = select(
            payouts.c.transaction_id,
            literal(run_id),
            literal(None),
            outcome,
            state,
            literal(None),
            literal(None),
            literal(""),
            literal(""),
            literal(as_of),
            literal(as_of),
        )
        conn.execute(
            insert(outcome_history).from_select(
                [
                    "transaction_id",
                    "run_id",
                    "previous_outcome",
                    "outcome",
                    "state",
                    "error_code",
                    "returned_minor",
                    "exceptions",
                    "candidate_duplicates",
                    "outcome_since",
                    "changed_at",
                ],
                history,
            )
        )
        flagged = select(
            literal(run_id),
            literal("payout"),
            payouts.c.transaction_id,
            flag,
            literal("new"),
            literal("generated by the benchmark"),
        ).where(cents >= 96, cents != 98)
        conn.execute(
            insert(run_exceptions).from_select(
                ["run_id", "item_kind", "item_id", "flag", "status", "detail"], flagged
            )
        )
        finish_run(
            conn,
            run_id,
            status=RunStatus.COMPLETE,
            finished_at=as_of,
            counts=RunCounts(seconds=Decimal("1.000")),
        )
    engine.dispose()
    return run_id


def report(
    database_url: str, work: Path, *, timeout: float = 900.0, check: bool = True
) -> Measured:
    """``recon report`` (every report file) as its own process (killed after ``timeout`` s)."""
    with tempfile.TemporaryDirectory(dir=work) as out:
        env = {"RECON_DATABASE_URL": database_url}
        cmd = [*RECON, "report", "--out", out]
        return measure(cmd, env=env, timeout=timeout, check=check)


def set_outcomes(database_url: str) -> None:
    """Give every payout its generated history's outcome and state, as the runs that wrote the
    history would have (``write_history`` writes ``outcome_history`` alone, which is all
    ``recon report`` needs; ``recon export`` reads the payouts' own columns)."""
    engine = make_engine(database_url)
    h = outcome_history.c
    mine = h.transaction_id == payouts.c.transaction_id
    with write_transaction(engine) as conn:
        conn.execute(
            update(payouts).values(
                outcome=select(h.outcome).where(mine).limit(1).scalar_subquery(),
                state=select(h.state).where(mine).limit(1).scalar_subquery(),
            )
        )
    engine.dispose()


def export(
    database_url: str, work: Path, fmt: str, *, timeout: float = 900.0, check: bool = True
) -> Measured:
    """``recon export payouts --since`` the first generated day (every payout), as a process."""
    with tempfile.TemporaryDirectory(dir=work) as out:
        env = {"RECON_DATABASE_URL": database_url, "RECON_TIMEZONE": "UTC"}
        since = _YEAR_START.strftime("%Y-%m-%d")
        cmd = [*RECON, "export", "payouts", "--since", since, "--format", fmt,
               "--out", str(Path(out) / f"payouts.{fmt}")]  # fmt: skip
        return measure(cmd, env=env, timeout=timeout, check=check)
