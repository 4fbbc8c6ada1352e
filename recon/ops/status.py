"""What the operator's commands read from the run log: ``recon runs``, ``recon status`` and the
``--as-of`` check of ``recon report``. The judging is :mod:`recon.ops.runlog`'s (pure)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine

from recon.constants import RunStatus
from recon.ops.runlog import Freshness, check_report_as_of, freshness
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


def run_freshness(database_url: str, *, now: datetime, max_age: timedelta) -> Freshness:
    """``recon status``' verdict. Only reads: the schema is not created or upgraded here."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            complete = last_run_with_status(conn, RunStatus.COMPLETE)
            latest = next(iter(latest_runs(conn, 1)), None)
    finally:
        engine.dispose()
    return freshness(complete, latest, now=now, max_age=max_age)


def refuse_as_of_before_latest_run(engine: Engine, as_of: datetime) -> None:
    """``recon report --as-of`` without ``--run``: refused when before the latest run's as-of
    (:func:`recon.ops.runlog.check_report_as_of`); nothing to check without a run."""
    with engine.connect() as conn:
        latest = previous_finished_run(conn, None, include_applied=True)
        record = run_record(conn, latest) if latest is not None else None
    if record is not None:
        check_report_as_of(record, as_of)
