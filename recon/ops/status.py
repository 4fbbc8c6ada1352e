"""What the operator's commands read from the run log: ``recon runs``, ``recon status`` and the
``--as-of`` check of ``recon report``. The judging is :mod:`recon.ops.runlog`'s (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from recon.constants import RunStatus
from recon.ops.runlog import (
    UTC_ZONE,
    Freshness,
    check_report_as_of,
    freshness,
    metrics_problem,
    with_problem,
)
from recon.store.db import make_engine, schema_engine
from recon.store.runs import (
    RunRecord,
    last_run_with_status,
    latest_runs,
    previous_finished_run,
    run_record,
)


def recent_runs(database_url: str, limit: int) -> list[RunRecord]:
    """The ``limit`` most recent runs, newest first."""
    with schema_engine(database_url) as engine, engine.connect() as conn:
        return latest_runs(conn, limit)


def run_freshness(
    database_url: str,
    *,
    now: datetime,
    max_age: timedelta,
    metrics_file: Path | None = None,
    zone: ZoneInfo = UTC_ZONE,
) -> Freshness:
    """``recon status``' verdict, and whether the last run that ended wrote ``metrics_file``
    (when one is configured). Only reads: the schema is not created or upgraded here."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            complete = last_run_with_status(conn, RunStatus.COMPLETE)
            recent = latest_runs(conn, 2)  # the latest that ended: the one before a running run
    finally:
        engine.dispose()
    latest = next(iter(recent), None)
    verdict = freshness(complete, latest, now=now, max_age=max_age, zone=zone)
    if metrics_file is None:
        return verdict
    ended = next((r for r in recent if r.finished_at is not None), None)
    try:
        written_at = datetime.fromtimestamp(metrics_file.stat().st_mtime, UTC)
    except (FileNotFoundError, NotADirectoryError):
        written_at = None
    except OSError as exc:
        return with_problem(verdict, f"cannot see the metrics file {metrics_file}: {exc.strerror}")
    return with_problem(
        verdict, metrics_problem(metrics_file, written_at=written_at, last=ended, zone=zone)
    )


def refuse_as_of_before_latest_run(
    engine: Engine, as_of: datetime, zone: ZoneInfo = UTC_ZONE
) -> None:
    """``recon report --as-of`` without ``--run``: refused when before the latest run's as-of
    (:func:`recon.ops.runlog.check_report_as_of`); nothing to check without a run."""
    with engine.connect() as conn:
        latest = previous_finished_run(conn, None, include_applied=True)
        record = run_record(conn, latest) if latest is not None else None
    if record is not None:
        check_report_as_of(record, as_of, zone)
