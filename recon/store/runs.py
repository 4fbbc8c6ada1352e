"""The run log: one row per ``recon run``, opened when it starts and closed with its counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, func, insert, select, update

from recon.constants import FINISHED_RUNS, RunStatus
from recon.counts import RunCounts
from recon.jsonparse import dumps, loads
from recon.store.tables import runs


@dataclass(frozen=True)
class RunRecord:
    """One row of the run log."""

    id: int
    started_at: datetime
    finished_at: datetime | None
    as_of: datetime
    status: RunStatus
    counts: RunCounts
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
    status: RunStatus,
    finished_at: datetime,
    counts: RunCounts,
) -> None:
    """Close a run with its final status and counts (a JSON object; ``Decimal`` stays exact)."""
    conn.execute(
        update(runs)
        .where(runs.c.id == run_id)
        .values(status=status.value, finished_at=finished_at, counts=dumps(counts.to_json()))
    )


def _record(row: Row[Any]) -> RunRecord:
    return RunRecord(
        id=row.id,
        started_at=row.started_at,
        finished_at=row.finished_at,
        as_of=row.as_of,
        status=RunStatus(row.status),
        counts=RunCounts.from_json(loads(row.counts)),
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


def mark_applied(conn: Connection, run_id: int, counts: RunCounts) -> None:
    """Outcomes are written; only the reports remain (a crash now resumes at the reports)."""
    values = {"status": RunStatus.APPLIED.value, "counts": dumps(counts.to_json())}
    conn.execute(update(runs).where(runs.c.id == run_id).values(**values))


def previous_finished_run(
    conn: Connection, before_run_id: int | None, *, include_applied: bool = False
) -> int | None:
    """The latest run before ``before_run_id`` (None: any) that finished, or with
    ``include_applied`` also one whose outcomes are written but reports not yet."""
    done = {*FINISHED_RUNS, *([RunStatus.APPLIED] if include_applied else [])}
    r = runs.c
    query = select(func.max(r.id)).where(r.status.in_(sorted(s.value for s in done)))
    if before_run_id is not None:
        query = query.where(r.id < before_run_id)
    value = conn.scalar(query)
    return int(value) if value is not None else None


def last_run_with_status(conn: Connection, status: RunStatus) -> RunRecord | None:
    """The most recent run that ended with ``status``, or None."""
    row = conn.execute(
        select(runs).where(runs.c.status == status.value).order_by(runs.c.id.desc()).limit(1)
    ).first()
    return None if row is None else _record(row)
