"""Polling benchmarks: a full ``recon run`` against the sandbox, the two reference clients, and a
run against a rate-limited sandbox.

Each ``recon run`` is the real command in its own process (``python -m recon run --no-email``)
on a fresh copy of a store holding only open payouts, so every run polls all of them, classifies,
writes observations, outcomes and history, and writes every report file.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.seed import Seeded, create_payouts, write_store
from bench.support import PYTHON, RECON, ROOT, Measured, copy_sqlite, measure, set_faults

FLOOR = str(ROOT / "bench" / "floor.py")


@dataclass(frozen=True)
class Store:
    """A template store of ``count`` open payouts the sandbox knows, and a file of their ids."""

    template: Path
    ids_file: Path
    count: int


@dataclass(frozen=True)
class RunFigures:
    """One measured ``recon run``: the process, and what the run recorded about itself."""

    process: Measured
    counts: dict[str, Any]

    @property
    def requests(self) -> int:
        return int(self.counts.get("requests", 0))

    @property
    def polled(self) -> int:
        return int(self.counts.get("polled", 0))

    @property
    def poll_rate(self) -> float:
        """Requests per second while polling (the run's own figure)."""
        return float(self.counts.get("requests_per_second", 0))


def seed(base_url: str, count: int, work: Path) -> list[Seeded]:
    """Create ``count`` payouts in the sandbox (faults off while seeding)."""
    set_faults(base_url, latency_ms=0, rate_limit_rps=None)
    return create_payouts(base_url, count, prefix=work.name)


def make_store(payouts: list[Seeded], work: Path, name: str) -> Store:
    """A template store and an ids file for ``payouts``."""
    template = work / f"{name}.db"
    write_store(template, payouts)
    ids_file = work / f"{name}.ids"
    ids_file.write_text("\n".join(p.transaction_id for p in payouts) + "\n")
    return Store(template, ids_file, len(payouts))


def _env(base_url: str, db: Path, out: Path, **extra: str) -> dict[str, str]:
    return {
        "RECON_DATABASE_URL": f"sqlite:///{db}",
        "RECON_API_BASE_URL": base_url,
        "RECON_CONCURRENCY": "50",
        "RECON_OUT_DIR": str(out),
        "RECON_SMTP_HOST": "",
        **extra,
    }


def recon_run(base_url: str, store: Store, work: Path, **extra_env: str) -> RunFigures:
    """One ``recon run --no-email`` on a fresh copy of ``store``."""
    db = work / "run.db"
    copy_sqlite(store.template, db)
    with tempfile.TemporaryDirectory(dir=work) as out:
        env = _env(base_url, db, Path(out), **extra_env)
        process = measure([*RECON, "run", "--no-email", "--out", out], env=env)
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT counts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    import json

    return RunFigures(process, json.loads(text))


def floor_run(base_url: str, store: Store) -> Measured:
    """The bare aiohttp loop over every id at concurrency 50."""
    return measure([PYTHON, FLOOR, "aiohttp", base_url, str(store.ids_file)])


def sequential_run(base_url: str, store: Store, sample: int) -> Measured:
    """The sequential httpx loop over the first ``sample`` ids."""
    cmd = [PYTHON, FLOOR, "sequential", base_url, str(store.ids_file), "--sample", str(sample)]
    return measure(cmd)
