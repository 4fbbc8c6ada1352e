"""A failed run in the run log on every database: its cause and stage kept in counts, resumable or
not, reopened by a resumed run; the metrics' reads of the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.store.metrics_reads import payouts_by_currency_and_outcome, standing_findings
from recon.store.runs import fail_run, latest_runs, mark_applied, reopen_run, start_run

NOW = datetime(2026, 11, 23, 0, 30, tzinfo=UTC)


def test_a_failed_run_keeps_its_cause_and_stage_and_is_reopened_when_resumed(
    engine: Engine,
) -> None:
    """applied → failed (resumable, stage applied) → reopened applied, cause gone → failed for
    good (no stage)."""
    with engine.begin() as conn:
        run_id = start_run(conn, as_of=NOW, started_at=NOW, host="batch-1", pid=4242)
        mark_applied(conn, run_id, RunCounts(payouts=3, requests=5, retries=2))
        (record,) = latest_runs(conn, 1)
        fail_run(conn, record, cause="stopped by SIGTERM before it finished",
                 finished_at=NOW + timedelta(minutes=5), resumable=True)  # fmt: skip
        (failed,) = latest_runs(conn, 1)
    assert failed.status is RunStatus.FAILED
    assert (failed.cause, failed.stage, failed.resumable) == (
        "stopped by SIGTERM before it finished",
        RunStatus.APPLIED,
        True,
    )
    assert (failed.counts.payouts, failed.counts.retries) == (3, 2)
    with engine.begin() as conn:
        reopen_run(conn, failed)
        (reopened,) = latest_runs(conn, 1)
        assert (reopened.status, reopened.cause, reopened.finished_at) == (
            RunStatus.APPLIED, "", None,
        )  # fmt: skip
        fail_run(conn, reopened, cause="not resumed", finished_at=NOW, resumable=False)
        (closed,) = latest_runs(conn, 1)
    assert (closed.status, closed.cause, closed.stage, closed.resumable) == (
        RunStatus.FAILED, "not resumed", None, False,
    )  # fmt: skip


def test_the_metrics_reads_of_an_empty_store_are_empty(engine: Engine) -> None:
    """No payouts, no findings: empty maps, not errors, on every database."""
    with engine.connect() as conn:
        assert payouts_by_currency_and_outcome(conn) == {}
        assert standing_findings(conn) == ({}, {})
