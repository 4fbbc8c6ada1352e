"""The run's second half, once every answer is in: decide (classify, compare), apply, report.

Kept apart from :mod:`recon.reconcile.run` because it needs pandas and the report stack, which cost
about half a second to import: the run imports this module only after polling, while a warm-up
thread (:mod:`recon.report.warm`) has loaded it during the wait for the provider's answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Connection, Engine

from recon.errors import ReconError
from recon.reconcile.classify import Classified, ClassifyParams, classify
from recon.reconcile.compare import compare_exceptions
from recon.reconcile.poll import PollStats
from recon.report.build import from_decision, from_store
from recon.report.model import ReportInput, RunInfo
from recon.report.pack import ReportFiles, write_pack
from recon.settings import Settings
from recon.store import reconcile as q
from recon.store.db import write_transaction
from recon.store.runs import mark_applied
from recon.store.selection import select_poll_ids


@dataclass(frozen=True)
class Decision:
    """What a run concluded: every payout classified, exceptions compared with the last run's."""

    classified: Classified
    compared: pd.DataFrame
    previous_run_id: int | None
    counts: dict[str, Any]


def this_run_rows(
    conn: Connection, run_id: int | None, memory: list[dict[str, Any]]
) -> pd.DataFrame:
    """The run's observations: stored, or from ``memory`` in a dry run (``run_id`` None)."""
    return q.run_rows_from(memory) if run_id is None else q.load_run_rows(conn, run_id)


def return_ids(conn: Connection, run_id: int | None, memory: list[dict[str, Any]]) -> list[str]:
    """Returned-funds ids still to ask about after the payouts' answers (see the store query)."""
    return q.return_ids_to_poll(conn, this_run_rows(conn, run_id, memory))


def decide(
    conn: Connection,
    settings: Settings,
    *,
    run_id: int | None,
    as_of: datetime,
    memory: list[dict[str, Any]],
    stats: PollStats,
    requests: int,
    seconds: float,
) -> Decision:
    """Classify every payout the run polled and compare its exceptions with the last run's."""
    this_run = this_run_rows(conn, run_id, memory)
    polled = set(select_poll_ids(conn, as_of=as_of, recheck_days=settings.recheck_days))
    payouts = q.load_payouts(conn, polled)
    observations = q.observations_frame(this_run)
    returns = q.load_returns(conn, this_run, run_id)
    params = ClassifyParams(
        delay_grace=pd.Timedelta(settings.delay_grace), stale_days=settings.stale_days
    )
    classified = classify(payouts, observations, returns, as_of=pd.Timestamp(as_of), params=params)
    previous_run_id = q.previous_complete_run(conn, run_id)
    previous = q.load_exceptions(conn, previous_run_id, open_only=True)
    compared = compare_exceptions(classified.exceptions, previous.drop(columns="status"))
    counts = _counts(classified, stats, requests, seconds)
    return Decision(classified, compared, previous_run_id, counts)


def _counts(
    classified: Classified, stats: PollStats, requests: int, seconds: float
) -> dict[str, Any]:
    outcomes = classified.payouts["outcome"].astype(str).value_counts()
    flags = classified.exceptions["flag"].astype(str).value_counts()
    return {
        "payouts": len(classified.payouts),
        "polled": stats.requested,
        "fetched": stats.ok + stats.not_found,
        "exceptions": len(classified.exceptions),
        "outcomes": {k: int(v) for k, v in outcomes.items()},
        "flags": {k: int(v) for k, v in flags.items()},
        "requests": requests,
        # Not money: durations are stored as exact decimal text, because the store's JSON
        # writer refuses floats everywhere.
        "seconds": Decimal(f"{seconds:.3f}"),
        "requests_per_second": Decimal(f"{stats.per_second:.1f}"),
    }


def apply(engine: Engine, decision: Decision, *, run_id: int, as_of: datetime) -> None:
    """Store the decision and mark the run applied, in one transaction."""
    with write_transaction(engine) as conn:
        q.apply_outcomes(
            conn,
            run_id=run_id,
            as_of=as_of,
            checked_at=datetime.now(UTC),
            classified=decision.classified,
            compared_exceptions=decision.compared,
        )
        mark_applied(conn, run_id, decision.counts)


def dry_run_report(
    decision: Decision, settings: Settings, *, started_at: datetime, as_of: datetime
) -> ReportInput:
    """The report of a dry run, straight from the decision (nothing was stored)."""
    counts = decision.counts
    info = RunInfo(
        run_id=None,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        as_of=as_of,
        status="dry_run",
        duration_seconds=float(counts["seconds"]),
        requests=int(counts["requests"]),
        requests_per_second=float(counts["requests_per_second"]),
        previous_run_id=decision.previous_run_id,
    )
    return from_decision(info, decision.classified, decision.compared, timezone=settings.timezone)


def stored_report(
    engine: Engine, settings: Settings, *, run_id: int | None, status: str, finished_at: datetime
) -> ReportInput:
    """The report of a stored run, with the status and end time about to be stored.

    The store still says "applied" until the reports are written (so a crash while writing them
    resumes here), so that the report and its email do not call every run unfinished, and
    ``recon report --run`` rebuilds the same report later.
    """
    stored = from_store(engine, timezone=settings.timezone, run_id=run_id)
    return replace(stored, run=replace(stored.run, status=status, finished_at=finished_at))


def write_reports(
    out_dir: Path, data: ReportInput, settings: Settings, *, run_id: int | None
) -> ReportFiles:
    """Every report file, or a :class:`ReconError` that says how to get them written later."""
    try:
        return write_pack(out_dir, data, row_cap=settings.report_row_cap)
    except OSError as exc:
        # A clear message instead of a traceback; the decision is already stored, and the run
        # stays "applied", so the next `recon run` only writes the reports.
        stored = (
            ""
            if run_id is None
            else f"; run {run_id}'s outcomes are stored: `recon run` again (without "
            "--as-of, or with the same) writes its reports without polling"
        )
        raise ReconError(
            f"cannot write the reports to {out_dir}: {exc.strerror or exc}{stored}"
        ) from None
