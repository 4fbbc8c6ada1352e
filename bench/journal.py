"""The night's journal step (:func:`recon.night.journal.book`) over stores of growing size.

Each store is the steady-state store (``bench/steady.py``) at ``per_day`` payouts a day, 1, 5 and
36 days of history: about 19,000, 95,000 and 700,000 settled payouts of one account. The step is
measured in-process, as a night runs it inside its apply transaction, with ``[journal]``
configured (every role's code), for a run after the store's latest one:

- *first booking*: no line in the journal yet, so every settled payout is booked (its entry and,
  where the provider charged one, its fee; the generator stores none); once, then committed;
- *already booked*: the same step again on the store just booked, where the facts have not
  changed and the step adds nothing; the median of three, each rolled back.

Seconds are wall time, *CPU s* ``time.process_time`` of recon's process (with SQLite that
includes the database's own work).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, func, insert, select

from bench import steady
from recon.constants import DEFAULT_ACCOUNT, SETTLED_OUTCOMES, RunStatus
from recon.night.journal import book
from recon.night.lifecycle import Run, RunMode
from recon.reconcile.journal import JournalParams, Role
from recon.store.db import make_engine, write_transaction
from recon.store.tables import payouts, runs

DAYS = (1, 5, 36)
CODES = {role: str(2000 + n) for n, role in enumerate(Role)}


@dataclass(frozen=True)
class Measured:
    """One store's journal step: its size, the step's seconds and entries, first and again."""

    days: int
    payouts: int
    settled: int
    first_seconds: float
    first_cpu: float
    first_entries: int
    again_seconds: float
    again_cpu: float
    again_entries: int


def _night(conn: Connection, as_of: datetime) -> Run:
    """A nightly run after the store's latest one, with its row in the run log."""
    row = conn.execute(
        insert(runs).values(
            started_at=as_of, as_of=as_of, status=RunStatus.RUNNING.value, counts="{}", host="bench",
            pid=0,
        )
    )
    return Run(RunMode.NIGHTLY, as_of, as_of, id=int(row.inserted_primary_key[0]))


def _params(as_of: datetime) -> JournalParams:
    return JournalParams(
        provider_account=DEFAULT_ACCOUNT,
        codes=CODES,
        zone=ZoneInfo("UTC"),
        as_of=as_of,
    )


def _timed(conn: Connection, run: Run, params: JournalParams) -> tuple[float, float, int]:
    started, used = time.perf_counter(), time.process_time()
    made = book(conn, run, params)
    return time.perf_counter() - started, time.process_time() - used, made


def measure(url: str, days: int, per_day: int) -> Measured:
    """Generate the store at ``url`` (empty), book it once, then measure the step again."""
    generated = steady.generate(url, days=days, per_day=per_day, as_of=steady.tonight())
    as_of = generated.as_of + timedelta(hours=1)
    params = _params(as_of)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            settled = int(
                conn.scalar(
                    select(func.count()).where(
                        payouts.c.outcome.in_([o.value for o in SETTLED_OUTCOMES])
                    )
                )
                or 0
            )
        with write_transaction(engine) as conn:
            first = _timed(conn, _night(conn, as_of), params)
        again = []
        for _ in range(3):
            with engine.connect() as conn:
                again.append(_timed(conn, _night(conn, as_of), params))
                conn.rollback()
    finally:
        engine.dispose()
    return Measured(
        days=days,
        payouts=generated.rows["payouts"],
        settled=settled,
        first_seconds=first[0],
        first_cpu=first[1],
        first_entries=first[2],
        again_seconds=statistics.median(a[0] for a in again),
        again_cpu=statistics.median(a[1] for a in again),
        again_entries=max(a[2] for a in again),
    )


def bench_journal(
    per_day: int, work: Path, say: Callable[[str], None], days: tuple[int, ...] = DAYS
) -> list[Measured]:
    """Every history length on SQLite (a file of its own each, removed after)."""
    out = []
    for day_count in days:
        db = work / f"journal-{day_count}.db"
        say(f"journal step, SQLite: {day_count} days of {per_day:,} payouts a day")
        out.append(measure(f"sqlite:///{db}", day_count, per_day))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return out


def markdown(results: list[Measured], per_day: int) -> list[str]:
    """The table of BENCHMARKS.md's journal section."""
    lines = [
        f"The steady-state store at {per_day:,} payouts a day (`bench/journal.py`, SQLite); "
        "`recon.night.journal.book` in-process for a run after the store's latest. *First "
        "booking*: an empty journal, every settled payout booked, once. *Already booked*: the "
        "same step again once those lines are committed (nothing to add), the median of three, "
        "each rolled back. CPU s is `time.process_time` (SQLite's work included).",
        "",
        "| history days | payouts stored | settled | first booking s | CPU s | entries "
        "| already booked s | CPU s | entries |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r.days} | {r.payouts:,} | {r.settled:,} | {r.first_seconds:.2f} | "
        f"{r.first_cpu:.2f} | {r.first_entries:,} | {r.again_seconds:.2f} | "
        f"{r.again_cpu:.2f} | {r.again_entries:,} |"
        for r in results
    ]
    return lines


def main() -> None:  # pragma: no cover - `python -m bench.journal [days...]`
    import sys
    import tempfile

    chosen = tuple(int(a) for a in sys.argv[1:]) or DAYS
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = bench_journal(
            20_000, Path(tmp), lambda s: print(f"[{datetime.now(UTC):%H:%M:%S}] {s}", flush=True),
            chosen,
        )
    print("\n".join(markdown(results, 20_000)))


if __name__ == "__main__":
    main()
