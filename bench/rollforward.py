"""The roll-forward's cost at 1, 90 and 365 days of history.

Each store is the steady-state store (``bench/steady.py``: one run a night, the first outcome of
every payout in ``outcome_history``), generated at ``per_day`` payouts a day. The roll-forward of a
night after the store's latest run is measured in-process, as the run does it around a decision
that wrote nothing: its reads before the decision (:func:`recon.night.rollforward.read_rollforward`:
every line's rows, the previous run's window again), the core's lines and breaks
(:mod:`recon.reconcile.rollforward`), the lines written; then rolled back; the median of three.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from sqlalchemy import Connection, func, select

from bench import steady
from bench.support import PostgresServer, throwaway_database
from recon import frames as fr
from recon.decision import CaseDecision
from recon.night.rollforward import read_rollforward
from recon.reconcile import night_lines as rf
from recon.store.cases import live_cases
from recon.store.db import make_engine
from recon.store.rollforward_reads import write_lines
from recon.store.tables import runs

_P = fr.PayoutsDecided
# A decision that writes nothing: the columns the roll-forward reads of its payouts.
_NOTHING = pd.DataFrame(
    {
        _P.TRANSACTION_ID: pd.Series(dtype="string"),
        _P.CURRENCY: pd.Series(dtype="string"),
        _P.AMOUNT_MINOR: pd.Series(dtype="Int64"),
        _P.PREV_OUTCOME: pd.Series(dtype="string"),
        _P.OUTCOME: pd.Series(dtype="string"),
        _P.RECORD_CHANGED: pd.Series(dtype=bool),
        _P.WRITE: pd.Series(dtype=bool),
    }
)

DAYS = (1, 90, 365)
NOTE = (
    "- What grows with history is `now`: one index-only scan of `payouts(currency, outcome, "
    "amount_minor)`, linear in the payouts stored (by hand, on the 365-day store at 1,000 a day: "
    "0.09 CPU s for 366,000 payouts in `sqlite3`); every other line is bounded by the run window. "
    "Goal (under 1 s at 365 days, not growing): met at 1,000 payouts a day; at the steady "
    "state's 20,000 a day (7.3 million payouts) `now` alone would be about 2 s and it grows with "
    "history: **not met** there. Counts kept on write (database triggers, so that a row deleted "
    "behind recon's back still shows) would make it flat; not built (docs/decisions.md, \"The "
    'roll-forward").'
)


@dataclass(frozen=True)
class Measured:
    """One store's roll-forward: its size and the median seconds."""

    store: str
    days: int
    payouts: int
    history: int
    seconds: float
    cpu: float  # recon's own CPU seconds (not the database server's)


def _measure(store: str, url: str, days: int, per_day: int) -> Measured:
    generated = steady.generate(url, days=days, per_day=per_day, as_of=steady.tonight())
    engine = make_engine(url)
    try:
        times, cpu = [], []
        for _ in range(3):
            with engine.connect() as conn:
                last = int(conn.scalar(select(func.max(runs.c.id))) or 0)
                started, used = time.perf_counter(), time.process_time()
                _roll_forward(conn, after=last)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - used)
                conn.rollback()
    finally:
        engine.dispose()
    rows = generated.rows
    return Measured(
        store, days, rows["payouts"], rows["outcome_history"], statistics.median(times),
        statistics.median(cpu),
    )  # fmt: skip


def _roll_forward(conn: Connection, *, after: int) -> None:
    """The roll-forward of a night after run ``after`` whose decision writes nothing, its lines
    written as run ``after``'s (rolled back by the caller)."""
    read = read_rollforward(conn, run_id=None, previous=after, known=[])
    returns = fr.empty(fr.ReturnsOut)
    measured = rf.measure(
        read, _NOTHING, returns, pd.DataFrame({"transaction_id": [], "field": []})
    )
    nothing = CaseDecision(exceptions=pd.DataFrame())
    findings = rf.finding_lines(
        read.tonight.findings, live_cases(conn), nothing, started=read.mark.started
    )
    lines = rf.tonight(read, measured, findings)
    rf.found(read, lines)
    write_lines(conn, after, lines, read.mark)


def bench_rollforward(
    per_day: int, work: Path, server: PostgresServer, say: Callable[[str], None]
) -> list[Measured]:
    """Every history length on SQLite, then on PostgreSQL (a throwaway database each)."""
    out = []
    for days in DAYS:
        db = work / f"rollforward-{days}.db"
        say(f"roll-forward, SQLite: {days} days of {per_day:,} payouts a day")
        out.append(_measure("SQLite", f"sqlite:///{db}", days, per_day))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    if server.url:
        for days in DAYS:
            say(f"roll-forward, PostgreSQL: {days} days of {per_day:,} payouts a day")
            with throwaway_database(server.url, f"rollforward{days}") as database:
                out.append(_measure("PostgreSQL", database.url, days, per_day))
    return out


def markdown(results: list[Measured], per_day: int) -> list[str]:
    """The section of BENCHMARKS.md."""
    lines = [
        "## Roll-forward: its cost over 1, 90, 365 days of history",
        "",
        f"The steady-state store at {per_day:,} payouts a day (`bench/rollforward.py`); the "
        "roll-forward of its latest run, measured in-process inside a transaction rolled back "
        "(every line, the identities, the previous run's lines measured again, the lines "
        "written); the median of three. *CPU s* is recon's process alone (with SQLite that "
        "includes the database; with PostgreSQL the server's work is not in it).",
        "",
        "| store | history days | payouts stored | history rows | roll-forward s | CPU s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r.store} | {r.days} | {r.payouts:,} | {r.history:,} | {r.seconds:.3f} | {r.cpu:.3f} |"
        for r in results
    ]
    return [*lines, "", NOTE]
