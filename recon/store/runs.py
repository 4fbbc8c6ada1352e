"""The run log: one row per ``recon run``, opened when it starts and closed with its counts.

A run that ended without finishing is ``failed``, with its cause kept in ``counts`` under
``failure`` (``{"cause": ..., "stage": ...}``: no column needed, older rows read back unchanged).
``stage`` is where a failed run stopped (``running`` or ``applied``) while the next run may still
resume it; a run that will not be resumed has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, func, insert, select, update

from recon.constants import DEFAULT_ACCOUNT, FINISHED_RUNS, UNFINISHED_RUNS, RunStatus
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
    cause: str = ""  # why a failed run did not finish (one line)
    stage: RunStatus | None = None  # where a failed run stopped, while it may be resumed
    account: str = DEFAULT_ACCOUNT  # the provider account whose night it is

    @property
    def resumable(self) -> bool:
        """Stopped before its end, and a later run may continue it."""
        return self.status in UNFINISHED_RUNS or (
            self.status is RunStatus.FAILED and self.stage is not None
        )


FAILURE_KEY = "failure"


def start_run(
    conn: Connection,
    *,
    as_of: datetime,
    started_at: datetime,
    host: str,
    pid: int,
    account: str = DEFAULT_ACCOUNT,
) -> int:
    """Record a run of ``account`` as ``running``; returns its id."""
    result = conn.execute(
        insert(runs).values(
            started_at=started_at,
            as_of=as_of,
            status=RunStatus.RUNNING.value,
            counts="{}",
            host=host,
            pid=pid,
            provider_account=account,
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


def fail_run(
    conn: Connection,
    run: RunRecord,
    *,
    cause: str,
    finished_at: datetime,
    resumable: bool,
) -> None:
    """Close ``run`` as ``failed`` with ``cause``; with ``resumable`` it keeps the stage it
    stopped at (``running`` or ``applied``), so that the next run may continue it."""
    stage = run.stage if run.status is RunStatus.FAILED else run.status
    failure: dict[str, Any] = {"cause": cause}
    if resumable and stage in UNFINISHED_RUNS:
        failure["stage"] = stage.value
    counts = {**run.counts.to_json(), FAILURE_KEY: failure}
    conn.execute(
        update(runs)
        .where(runs.c.id == run.id)
        .values(status=RunStatus.FAILED.value, finished_at=finished_at, counts=dumps(counts))
    )


def reopen_run(conn: Connection, run: RunRecord) -> None:
    """A failed run resumed: back to the stage it stopped at, its cause gone with the failure."""
    if run.stage is None:
        raise RuntimeError(f"run {run.id} cannot be resumed")
    values = {"status": run.stage.value, "finished_at": None, "counts": dumps(run.counts.to_json())}
    conn.execute(update(runs).where(runs.c.id == run.id).values(**values))


def _record(row: Row[Any]) -> RunRecord:
    data = loads(row.counts)
    failure = data.get(FAILURE_KEY) if isinstance(data, dict) else None
    failure = failure if isinstance(failure, dict) else {}
    stage = failure.get("stage")
    return RunRecord(
        id=row.id,
        started_at=row.started_at,
        finished_at=row.finished_at,
        as_of=row.as_of,
        status=RunStatus(row.status),
        counts=RunCounts.from_json(data),
        host=row.host,
        pid=row.pid,
        cause=str(failure.get("cause") or ""),
        stage=RunStatus(stage) if stage in {s.value for s in UNFINISHED_RUNS} else None,
        account=row.provider_account,
    )


def latest_runs(
    conn: Connection, n: int, *, account: str | None = DEFAULT_ACCOUNT
) -> list[RunRecord]:
    """The ``n`` most recent runs of ``account`` (None: of every account), newest first."""
    query = select(runs).order_by(runs.c.id.desc()).limit(n)
    if account is not None:
        query = query.where(runs.c.provider_account == account)
    rows = conn.execute(query)
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
    conn: Connection,
    before_run_id: int | None,
    *,
    include_applied: bool = False,
    account: str = DEFAULT_ACCOUNT,
) -> int | None:
    """The latest run of ``account`` before ``before_run_id`` (None: any) that finished, or with
    ``include_applied`` also one whose outcomes are written but reports not yet."""
    done = {*FINISHED_RUNS, *([RunStatus.APPLIED] if include_applied else [])}
    r = runs.c
    query = select(func.max(r.id)).where(
        r.status.in_(sorted(s.value for s in done)), r.provider_account == account
    )
    if before_run_id is not None:
        query = query.where(r.id < before_run_id)
    value = conn.scalar(query)
    return int(value) if value is not None else None


def last_run_with_status(
    conn: Connection, status: RunStatus, *, account: str = DEFAULT_ACCOUNT
) -> RunRecord | None:
    """The most recent run of ``account`` that ended with ``status``, or None."""
    row = conn.execute(
        select(runs)
        .where(runs.c.status == status.value, runs.c.provider_account == account)
        .order_by(runs.c.id.desc())
        .limit(1)
    ).first()
    return None if row is None else _record(row)
