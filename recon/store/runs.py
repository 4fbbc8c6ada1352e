"""The run log: one row per ``recon run``, opened when it starts and closed with its counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Row, insert, select, update

from recon.provider.jsonparse import dumps, loads
from recon.store.tables import runs


class RunStatus(StrEnum):
    RUNNING = "running"
    APPLIED = "applied"  # outcomes written, reports not yet: a resumed run writes only those
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    FAILED = "failed"
    DRY_RUN = "dry_run"


@dataclass(frozen=True)
class RunRecord:
    """One row of the run log."""

    id: int
    started_at: datetime
    finished_at: datetime | None
    as_of: datetime
    status: str
    counts: dict[str, Any]
    host: str
    pid: int


def start_run(
    conn: Connection, *, as_of: datetime, started_at: datetime, host: str, pid: int
) -> int:
    """Record a run as ``running``; returns its id."""
    result = conn.execute(
        insert(runs).values(
            started_at=started_at,
            as_of=as_of,
            status=RunStatus.RUNNING.value,
            counts="{}",
            host=host,
            pid=pid,
        )
    )
    run_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    if run_id is None:  # pragma: no cover - every supported dialect returns the new key
        raise RuntimeError("the database did not return the new run's id")
    return int(run_id)


def finish_run(
    conn: Connection,
    run_id: int,
    *,
    status: RunStatus | str,
    finished_at: datetime,
    counts: Mapping[str, Any],
) -> None:
    """Close a run with its final status and counts (a JSON object; ``Decimal`` stays exact)."""
    conn.execute(
        update(runs)
        .where(runs.c.id == run_id)
        .values(status=str(RunStatus(status)), finished_at=finished_at, counts=dumps(dict(counts)))
    )


def _record(row: Row[Any]) -> RunRecord:
    return RunRecord(
        id=row.id,
        started_at=row.started_at,
        finished_at=row.finished_at,
        as_of=row.as_of,
        status=row.status,
        counts=loads(row.counts),
        host=row.host,
        pid=row.pid,
    )


def latest_runs(conn: Connection, n: int) -> list[RunRecord]:
    """The ``n`` most recent runs, newest first."""
    rows = conn.execute(select(runs).order_by(runs.c.id.desc()).limit(n))
    return [_record(row) for row in rows]


def run_record(conn: Connection, run_id: int) -> RunRecord | None:
    """One run of the log, or None."""
    row = conn.execute(select(runs).where(runs.c.id == run_id)).first()
    return None if row is None else _record(row)


def mark_applied(conn: Connection, run_id: int, counts: Mapping[str, Any]) -> None:
    """Outcomes are written; only the reports remain (a crash now resumes at the reports)."""
    values = {"status": RunStatus.APPLIED.value, "counts": dumps(dict(counts))}
    conn.execute(update(runs).where(runs.c.id == run_id).values(**values))
