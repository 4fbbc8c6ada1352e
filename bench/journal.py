"""The night's journal step (:func:`recon.night.journal.book`) over stores of growing size.

Each store is the steady-state store (``bench/steady.py``) at ``per_day`` payouts a day, 1, 5 and
36 days of history: about 19,000, 95,000 and 700,000 settled payouts of one account. The step is
measured in-process, as a night runs it inside its apply transaction, with ``[journal]``
configured (every role's code), for a run after the store's latest one:

- *first booking*: no line in the journal yet and no mark, so every settled payout is read and
  booked (the generator stores no fee: one entry each); once, then committed;
- then the same step again on the store just booked (the facts have not changed: it adds
  nothing), each way the account's mark (``journal_marks``) can stand, the median of three, each
  rolled back: no mark (the whole account read: the step as it was before the mark); marked
  before the store's latest night (the payouts that night wrote read again, as a night reads its
  own writes); marked by the booking run (nothing read).

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

from sqlalchemy import Connection, Engine, delete, func, insert, select

from bench import steady
from recon.constants import DEFAULT_ACCOUNT, SETTLED_OUTCOMES, RunStatus
from recon.night.journal import book
from recon.night.lifecycle import Run, RunMode
from recon.reconcile.journal import JournalParams, Role
from recon.store.db import make_engine, write_transaction
from recon.store.journal import read_books, read_mark, write_mark
from recon.store.journal_tables import journal_marks
from recon.store.tables import payouts, runs

DAYS = (1, 5, 36)
CODES = {role: str(2000 + n) for n, role in enumerate(Role)}


@dataclass(frozen=True)
class Step:
    """One way of running the step: its seconds, CPU seconds, entries and payouts read."""

    seconds: float
    cpu: float
    entries: int
    read: int


@dataclass(frozen=True)
class Measured:
    """One store's journal step, each way it was run."""

    days: int
    payouts: int
    settled: int
    last_night: int  # payouts the store's latest run wrote
    first: Step  # an empty journal: every settled payout booked (no mark: the whole account)
    whole: Step  # booked already, no mark: the whole account read (the step before the mark)
    # booked already, marked before the latest run: its payouts read (None: one night, no run
    # before it to mark)
    since_last_night: Step | None
    nothing_since: Step  # booked already, marked by the booking run: nothing read


def _night(conn: Connection, as_of: datetime) -> Run:
    """A nightly run after the store's latest one, with its row in the run log."""
    row = conn.execute(
        insert(runs).values(
            started_at=as_of, as_of=as_of, status=RunStatus.RUNNING.value, counts="{}",
            host="bench", pid=0,
        )
    )  # fmt: skip
    key = row.inserted_primary_key
    assert key is not None
    return Run(RunMode.NIGHTLY, as_of, as_of, id=int(key[0]))


def _params(as_of: datetime) -> JournalParams:
    return JournalParams(provider_account=DEFAULT_ACCOUNT, codes=CODES, zone=ZoneInfo("UTC"),
                         as_of=as_of)  # fmt: skip


def _step(conn: Connection, as_of: datetime, mark: int | None) -> Step:
    """The journal step of a new run on ``conn`` after setting the account's mark to ``mark``
    (None: no mark)."""
    conn.execute(delete(journal_marks))
    if mark is not None:
        write_mark(conn, DEFAULT_ACCOUNT, mark)
    read = len(read_books(conn, DEFAULT_ACCOUNT, since=mark).payouts)  # not timed
    run = _night(conn, as_of)
    started, used = time.perf_counter(), time.process_time()
    made = book(conn, run, _params(as_of))
    return Step(time.perf_counter() - started, time.process_time() - used, made, read)


def _median(steps: list[Step]) -> Step:
    return Step(
        statistics.median(s.seconds for s in steps), statistics.median(s.cpu for s in steps),
        max(s.entries for s in steps), max(s.read for s in steps),
    )  # fmt: skip


def _rolled_back(engine: Engine, as_of: datetime, mark: int | None, rounds: int) -> Step:
    steps = []
    for _ in range(rounds):
        with engine.connect() as conn:
            steps.append(_step(conn, as_of, mark))
            conn.rollback()
    return _median(steps)


def measure(url: str, days: int, per_day: int, whole_rounds: int = 3) -> Measured:
    """Generate the store at ``url`` (empty), book it once, then the step again each way."""
    generated = steady.generate(url, days=days, per_day=per_day, as_of=steady.tonight())
    as_of = generated.as_of + timedelta(hours=1)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            settled_outcomes = [o.value for o in SETTLED_OUTCOMES]
            settled = int(
                conn.scalar(select(func.count()).where(payouts.c.outcome.in_(settled_outcomes)))
                or 0
            )
            latest = int(conn.scalar(select(func.max(runs.c.id))) or 0)
            last_night = int(
                conn.scalar(select(func.count()).where(payouts.c.last_run_id == latest)) or 0
            )
        with write_transaction(engine) as conn:
            first = _step(conn, as_of, None)
            booked = read_mark(conn, DEFAULT_ACCOUNT)
        whole = _rolled_back(engine, as_of, None, whole_rounds)
        since_last_night = _rolled_back(engine, as_of, latest - 1, 3) if days > 1 else None
        nothing_since = _rolled_back(engine, as_of, booked, 3)
    finally:
        engine.dispose()
    return Measured(
        days, generated.rows["payouts"], settled, last_night, first, whole, since_last_night,
        nothing_since,
    )  # fmt: skip


def bench_journal(
    per_day: int, work: Path, say: Callable[[str], None], days: tuple[int, ...] = DAYS
) -> list[Measured]:
    """Every history length on SQLite (a file of its own each, removed after); the whole read
    of the longest once (it is the slowest and the step as it was)."""
    out = []
    for day_count in days:
        db = work / f"journal-{day_count}.db"
        say(f"journal step, SQLite: {day_count} days of {per_day:,} payouts a day")
        rounds = 1 if day_count == max(days) and len(days) > 1 else 3
        out.append(measure(f"sqlite:///{db}", day_count, per_day, rounds))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return out


_WAYS = (
    ("first", "first booking (no mark)"),
    ("whole", "booked, no mark: the whole account"),
    ("since_last_night", "booked, marked before the latest night"),
    ("nothing_since", "booked, marked by the booking run"),
)


def markdown(results: list[Measured], per_day: int) -> list[str]:
    """BENCHMARKS.md's journal section: what was measured, the table, the ratios."""
    lines = [
        "## The journal step",
        "",
        f"The steady-state store at {per_day:,} payouts a day (`bench/journal.py`, SQLite), "
        "`[journal]` configured; the night's journal step (`recon.night.journal.book`) "
        "in-process for a run after the store's latest, as the night runs it in its apply "
        "transaction. First booking: an empty journal, every settled payout read and booked, "
        "once. Then the same step on the booked store (nothing to add), each way the account's "
        "mark can stand, the median of three, each rolled back: *no mark* reads the whole "
        "account (the step before the mark, and still the first night after the upgrade); "
        "*marked before the latest night* reads again the payouts that night wrote, as a "
        "night reads its own writes; *marked by the booking run* reads none. *Payouts read* "
        "is what the core is given; CPU s is `time.process_time` (SQLite's work included).",
        "",
        "| history days | payouts stored | settled | latest night wrote | journal step "
        "| payouts read | entries | s | CPU s |",
        "| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for name, label in _WAYS:
            step: Step | None = getattr(r, name)
            if step is None:
                continue
            lines.append(
                f"| {r.days} | {r.payouts:,} | {r.settled:,} | {r.last_night:,} | {label} | "
                f"{step.read:,} | {step.entries:,} | {step.seconds:.2f} | {step.cpu:.2f} |"
            )
    lines.append("")
    for r in results:
        if r.since_last_night is not None:
            lines.append(
                f"- {r.settled:,} settled payouts booked: the step reading the latest night's "
                f"{r.last_night:,} payouts takes {r.since_last_night.cpu:.2f} CPU s against "
                f"{r.whole.cpu:.2f} for the whole account "
                f"({r.whole.cpu / max(r.since_last_night.cpu, 1e-9):.1f}x less)."
            )
    return lines


def main() -> None:  # pragma: no cover - `python -m bench.journal [days...]`
    import sys
    import tempfile

    chosen = tuple(int(a) for a in sys.argv[1:]) or DAYS
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = bench_journal(
            20_000, Path(tmp), lambda s: print(f"[{datetime.now(UTC):%H:%M:%S}] {s}", flush=True),
            chosen,
        )  # fmt: skip
    print("\n".join(markdown(results, 20_000)))


if __name__ == "__main__":
    main()
