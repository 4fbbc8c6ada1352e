"""Retention's cost at scale (a measurement, not a test).

Seeds a store with ``--rows`` answers of ~1 KB raw body each, ``--per-day`` a day back from now
(200,000 at 1,000 a day: 200 days), 1% of them type-13 returns and ``--open`` live findings, then
times, with ``RECON_KEEP_RAW_DAYS`` = 90:

1. the first prune (every body older than 90 days that is no evidence), by batch size;
2. a second prune right after (nothing left to drop: it walks the kept evidence only);
3. one more night: a day of new answers, the cutoff a day later (what each run pays);
4. the store's size before and after (PostgreSQL: also after VACUUM).

Usage: ``.venv/bin/python bench/retention.py --url sqlite:////tmp/ret.db [--rows 200000]
[--batches 2000,10000,0]`` (0: the whole prune in one transaction). The figures and the choice
they led to are in docs/scaling.md ("Retention").
"""

from __future__ import annotations

import argparse
import os
import random
import string
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, delete, func, insert, select, text

from recon.night.prune import prune_raw
from recon.store.db import ensure_schema, make_engine
from recon.store.lock import RunLock
from recon.store.tables import exception_cases, metadata, observations, runs

KEEP_DAYS = 90.0


def seed(engine: Engine, rows: int, per_day: int, open_cases: int, now: datetime) -> None:
    rng = random.Random(7)
    body = "".join(rng.choices(string.ascii_letters + string.digits, k=1000))
    with engine.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(delete(table))
        run_id = conn.execute(
            insert(runs).values(started_at=now, finished_at=now, as_of=now, status="complete",
                                counts="{}", host="bench", pid=os.getpid())
        ).inserted_primary_key[0]  # fmt: skip
    for start in range(0, rows, 10_000):
        batch = []
        for i in range(start, min(rows, start + 10_000)):
            at = now - timedelta(days=(rows - i) / per_day)
            ret = i % 100 == 0
            batch.append({"run_id": run_id, "transaction_id": f"{'R' if ret else 'P'}{i}",
                          "fetched_at": at, "status": "ok", "state": 6, "type": 13 if ret else 1,
                          "amount": "10.00", "amount_minor": 1000, "currency": "EUR",
                          "raw": body})  # fmt: skip
        with engine.begin() as conn:
            conn.execute(insert(observations), batch)
    with engine.begin() as conn:
        conn.execute(
            insert(exception_cases),
            [{"exception_id": f"E1-{n}", "item_kind": "payout", "item_id": f"P{n * 37 + 1}",
              "flag": "stale", "state": "open", "opened_run_id": run_id, "opened_at": now,
              "last_seen_run_id": run_id} for n in range(open_cases)],
        )  # fmt: skip


def _more(engine: Engine, rows: int, now: datetime) -> None:
    body = "x" * 1000
    with engine.begin() as conn:
        run_id = conn.execute(select(func.min(runs.c.id))).scalar()
        conn.execute(
            insert(observations),
            [{"run_id": run_id, "transaction_id": f"N{i}", "fetched_at": now, "status": "ok",
              "raw": body} for i in range(rows)],
        )  # fmt: skip


def size(engine: Engine) -> str:
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            rel = conn.execute(text("SELECT pg_total_relation_size('observations')")).scalar()
            return f"observations {int(rel or 0) / 1e6:.0f} MB"
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        free = conn.exec_driver_sql("PRAGMA freelist_count").scalar()
        psize = conn.exec_driver_sql("PRAGMA page_size").scalar()
        mb = int(psize) / 1e6
        return f"file {int(pages) * mb:.0f} MB, free {int(free) * mb:.0f} MB"


def timed_prune(engine: Engine, before: datetime, batch: int) -> tuple[float, str]:
    with RunLock(engine) as lock:
        started = time.perf_counter()
        counts = prune_raw(lock.fenced_transaction, before=before, batch=batch or 10**9)
        return time.perf_counter() - started, str(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--per-day", type=int, default=1000)
    parser.add_argument("--open", type=int, default=2000)
    parser.add_argument("--batches", default="10000")
    args = parser.parse_args()
    engine = make_engine(args.url)
    ensure_schema(engine)
    now = datetime.now(UTC)
    before = now - timedelta(days=KEEP_DAYS)
    for batch in [int(b) for b in args.batches.split(",")]:
        started = time.perf_counter()
        seed(engine, args.rows, args.per_day, args.open, now)
        print(f"[{engine.dialect.name} batch {batch or 'all'}] seeded {args.rows} rows in "
              f"{time.perf_counter() - started:.1f} s; {size(engine)}")  # fmt: skip
        seconds, counts = timed_prune(engine, before, batch)
        print(f"  first prune: {seconds:.2f} s ({counts}); {size(engine)}")
        seconds, counts = timed_prune(engine, before, batch)
        print(f"  second prune: {seconds:.3f} s ({counts})")
        with engine.begin() as conn:
            oldest = conn.execute(select(func.min(observations.c.fetched_at))).scalar()
            moved = conn.execute(
                select(func.count()).where(
                    observations.c.fetched_at >= before,
                    observations.c.fetched_at < before + timedelta(days=1),
                )
            ).scalar()
        seconds, counts = timed_prune(engine, before + timedelta(days=1), batch)
        print(f"  next night ({moved} more rows past the cutoff; oldest {oldest:%Y-%m-%d}): "
              f"{seconds:.3f} s ({counts})")  # fmt: skip
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM observations"))
            print(f"  after VACUUM: {size(engine)}")
        # Is the space reused? Another 20 days of answers after the prune.
        _more(engine, 20 * args.per_day, now)
        print(f"  {20 * args.per_day} new answers after it: {size(engine)}")
        if engine.dialect.name == "sqlite":
            started = time.perf_counter()
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM")
            print(f"  VACUUM: {time.perf_counter() - started:.1f} s; {size(engine)}")
    engine.dispose()


if __name__ == "__main__":
    main()
