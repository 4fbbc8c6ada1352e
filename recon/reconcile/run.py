"""``recon run``: gather (store, provider), decide (pure classification), apply (store, files).

One run at a time: the run holds a lock row in the database. A run killed half-way leaves a
``running`` (or ``applied``) row behind; the next run within ``RESUME_WINDOW`` resumes it with the
same ``as_of``, fetching only what is missing, so its reports equal an uninterrupted run's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.constants import ExitCode
from recon.errors import MailError, ReconError, StoreError
from recon.provider.client import ProviderClient
from recon.reconcile.classify import Classified, ClassifyParams, classify
from recon.reconcile.compare import compare_exceptions
from recon.reconcile.observe import observation_row
from recon.reconcile.poll import Fetched, PollStats, poll
from recon.reconcile.progress import Progress
from recon.report.build import from_decision, from_store
from recon.report.model import ReportInput, RunInfo
from recon.report.pack import ReportFiles, write_pack
from recon.report.warm import warm_up_in_background
from recon.settings import Settings
from recon.store import reconcile as q
from recon.store.db import ensure_schema, make_engine, safe_url, write_transaction
from recon.store.lock import RunLock
from recon.store.observations import insert_observations
from recon.store.runs import finish_run, latest_runs, mark_applied, run_record, start_run

log = logging.getLogger(__name__)

RESUME_WINDOW = timedelta(hours=12)
APPLIED = q.APPLIED  # outcomes written, reports not yet: a resumed run only writes the reports
HEARTBEAT_SECONDS = 30.0


@dataclass(frozen=True)
class RunOptions:
    """What the caller asked for (``recon run`` options)."""

    out_dir: Path
    as_of: datetime | None = None
    email: bool = True
    dry_run: bool = False


@dataclass
class RunResult:
    """How a run ended: its exit code, files, and the closing summary line."""

    run_id: int | None
    status: str
    exit_code: ExitCode
    files: ReportFiles | None
    summary: str
    counts: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Run:
    run_id: int | None
    as_of: datetime
    started_at: datetime
    resumed: bool = False
    only_report: bool = False


def run_reconciliation(
    settings: Settings,
    options: RunOptions,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    engine: Engine | None = None,
) -> RunResult:
    """Run the nightly reconciliation once and write its reports; see the module docstring."""
    engine = engine or make_engine(settings.database_url)
    try:
        ensure_schema(engine)
        if options.dry_run:
            return _execute(settings, options, engine, transport, progress)
        lock = RunLock(engine)
        with lock, _Heartbeat(lock):
            return _execute(settings, options, engine, transport, progress)
    except SQLAlchemyError as exc:
        # What was stored stays consistent (each write is one transaction); the next run resumes.
        reason = getattr(exc, "orig", None) or exc
        raise StoreError(
            f"the database {safe_url(engine.url)} failed during the run: {reason}"
        ) from None


def _execute(
    settings: Settings,
    options: RunOptions,
    engine: Engine,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> RunResult:
    clock_start = time.perf_counter()
    run = _open_run(engine, options)
    stats = PollStats()
    data: ReportInput | None = None
    if not run.only_report:
        memory: list[dict[str, Any]] = []
        stats, requests = asyncio.run(_gather(settings, engine, run, transport, progress, memory))
        with engine.connect() as conn:
            this_run = (
                q.run_rows_from(memory) if run.run_id is None else q.load_run_rows(conn, run.run_id)
            )
            decision = _decide(conn, settings, run, this_run)
        counts = _counts(decision.classified, stats, requests, time.perf_counter() - clock_start)
        if run.run_id is None:
            info = _dry_run_info(run, decision, counts)
            data = from_decision(
                info, decision.classified, decision.compared, timezone=settings.timezone
            )
        else:
            with write_transaction(engine) as conn:
                q.apply_outcomes(
                    conn,
                    run_id=run.run_id,
                    as_of=run.as_of,
                    checked_at=datetime.now(UTC),
                    classified=decision.classified,
                    compared_exceptions=decision.compared,
                )
                mark_applied(conn, run.run_id, counts)
    else:
        counts = stored_counts(engine, run.run_id)
    status = "dry_run" if options.dry_run else _status(counts)
    finished_at = datetime.now(UTC)
    if data is None:
        # The store still says "applied" until the reports are written (so a crash while writing
        # them resumes here): report with the status and end time about to be stored, so that
        # the report and its email do not call every run unfinished, and `recon report --run`
        # rebuilds the same report later.
        stored = from_store(engine, timezone=settings.timezone, run_id=run.run_id)
        info = replace(stored.run, status=status, finished_at=finished_at)
        data = replace(stored, run=info)
    files = _write_reports(options.out_dir, data, settings, run)
    if run.run_id is not None:
        with write_transaction(engine) as conn:
            finish_run(conn, run.run_id, status=status, finished_at=finished_at, counts=counts)
    code = ExitCode.INCOMPLETE if status == "incomplete" else ExitCode.OK
    mailed = ""
    if options.email and not options.dry_run and settings.smtp_host and settings.mail_to:
        from recon.report.mail import send_report

        try:
            send_report(settings, files, data)
            mailed = f"; mailed to {len(settings.mail_to) + len(settings.mail_cc)}"
        except MailError as exc:
            log.error("%s", exc)
            mailed = "; email FAILED"
            code = ExitCode.MAIL_FAILED if code == ExitCode.OK else code
    summary = _summary_line(run, counts, stats, time.perf_counter() - clock_start) + mailed
    return RunResult(run.run_id, status, code, files, summary, counts)


def _write_reports(out_dir: Path, data: ReportInput, settings: Settings, run: _Run) -> ReportFiles:
    try:
        return write_pack(out_dir, data, row_cap=settings.report_row_cap)
    except OSError as exc:
        # A clear message instead of a traceback; the decision is already stored, and the run
        # stays "applied", so the next `recon run` only writes the reports.
        stored = (
            ""
            if run.run_id is None
            else f"; run {run.run_id}'s outcomes are stored: `recon run` again (without "
            "--as-of, or with the same) writes its reports without polling"
        )
        raise ReconError(
            f"cannot write the reports to {out_dir}: {exc.strerror or exc}{stored}"
        ) from None


def _status(counts: dict[str, Any]) -> str:
    return "incomplete" if counts.get("flags", {}).get("fetch_failed") else "complete"


def _dry_run_info(run: _Run, decision: _Decision, counts: dict[str, Any]) -> RunInfo:
    return RunInfo(
        run_id=None,
        started_at=run.started_at,
        finished_at=datetime.now(UTC),
        as_of=run.as_of,
        status="dry_run",
        duration_seconds=float(counts["seconds"]),
        requests=int(counts["requests"]),
        requests_per_second=float(counts["requests_per_second"]),
        previous_run_id=decision.previous_run_id,
    )


def stored_counts(engine: Engine, run_id: int | None) -> dict[str, Any]:
    """The counts a run stored (a resumed run that only writes its reports reuses them)."""
    if run_id is None:
        return {}
    with engine.connect() as conn:
        record = run_record(conn, run_id)
    return dict(record.counts) if record is not None else {}


# --- gather ----------------------------------------------------------------------------------


def _open_run(engine: Engine, options: RunOptions) -> _Run:
    now = datetime.now(UTC)
    as_of = options.as_of or now
    if options.dry_run:
        return _Run(None, as_of, now)
    with write_transaction(engine) as conn:
        previous = latest_runs(conn, 1)
        if previous and previous[0].status in ("running", APPLIED):
            last = previous[0]
            fresh = now - last.started_at <= RESUME_WINDOW
            same = options.as_of is None or options.as_of == last.as_of
            if fresh and same:
                log.warning(
                    "resuming run %s (started %s, as of %s) that did not finish",
                    last.id,
                    last.started_at.isoformat(),
                    last.as_of.isoformat(),
                )
                return _Run(last.id, last.as_of, last.started_at, True, last.status == APPLIED)
            finish_run(conn, last.id, status="failed", finished_at=now, counts=last.counts)
        run_id = start_run(
            conn, as_of=as_of, started_at=now, host=socket.gethostname(), pid=os.getpid()
        )
    return _Run(run_id, as_of, now)


async def _gather(
    settings: Settings,
    engine: Engine,
    run: _Run,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
    memory: list[dict[str, Any]],
) -> tuple[PollStats, int]:
    with engine.connect() as conn:
        ids = q.select_poll_ids(conn, as_of=run.as_of, recheck_days=settings.recheck_days)
        if run.run_id is not None and run.resumed:
            done = q.fetched_in_run(conn, run.run_id)
            ids = [i for i in ids if i not in done]

    def sink(batch: Sequence[Fetched]) -> None:
        rows = [observation_row(f, run.run_id) for f in batch]
        if run.run_id is None:
            memory.extend(rows)
            return
        with write_transaction(engine) as conn:
            insert_observations(conn, rows)

    total = PollStats()
    if ids:
        warm_up_in_background()  # the chart's libraries load while the answers come in
    async with ProviderClient.from_settings(settings, transport=transport) as client:
        if progress is not None:
            progress.start("polling payouts", len(ids))
        stats = await poll(
            client,
            ids,
            workers=settings.concurrency,
            sink=sink,
            progress=progress.advance if progress is not None else None,
        )
        _add(total, stats)
        with engine.connect() as conn:
            this_run = (
                q.run_rows_from(memory) if run.run_id is None else q.load_run_rows(conn, run.run_id)
            )
            return_ids = q.return_ids_to_poll(conn, this_run)
        if return_ids:
            if progress is not None:
                progress.start("checking returns", len(return_ids))
            _add(
                total,
                await poll(
                    client,
                    return_ids,
                    workers=settings.concurrency,
                    sink=sink,
                    progress=progress.advance if progress is not None else None,
                ),
            )
        requests = client.stats.requests
    if progress is not None:
        progress.stop()
    return total, requests


def _add(total: PollStats, part: PollStats) -> None:
    total.requested += part.requested
    total.ok += part.ok
    total.not_found += part.not_found
    total.errors += part.errors
    total.seconds += part.seconds
    for key, value in part.by_error.items():
        total.by_error[key] = total.by_error.get(key, 0) + value


# --- decide ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Decision:
    classified: Classified
    compared: pd.DataFrame
    previous_run_id: int | None


def _decide(conn: Any, settings: Settings, run: _Run, this_run: pd.DataFrame) -> _Decision:
    polled = set(q.select_poll_ids(conn, as_of=run.as_of, recheck_days=settings.recheck_days))
    payouts = q.load_payouts(conn, polled)
    observations = q.observations_frame(this_run)
    returns = q.load_returns(conn, this_run, run.run_id)
    params = ClassifyParams(
        delay_grace=pd.Timedelta(settings.delay_grace), stale_days=settings.stale_days
    )
    classified = classify(
        payouts, observations, returns, as_of=pd.Timestamp(run.as_of), params=params
    )
    previous_run_id = q.previous_complete_run(conn, run.run_id)
    previous = q.load_exceptions(conn, previous_run_id, open_only=True)
    compared = compare_exceptions(classified.exceptions, previous.drop(columns="status"))
    return _Decision(classified, compared, previous_run_id)


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


def _summary_line(run: _Run, counts: dict[str, Any], stats: PollStats, seconds: float) -> str:
    outcomes = counts.get("outcomes", {})
    parts = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    rate = f"{stats.per_second:,.0f} req/s" if stats.requested else "no requests"
    flags = counts.get("flags", {})
    failed = int(flags.get("fetch_failed", 0))
    label = "dry run" if run.run_id is None else f"run {run.run_id}"
    return (
        f"recon: {label} as of {run.as_of.isoformat(timespec='seconds')}: "
        f"{counts.get('payouts', 0)} payouts ({parts or 'none'}); "
        f"{counts.get('exceptions', 0)} exceptions"
        f"{f' ({failed} could not be fetched)' if failed else ''}; polled {stats.requested} in "
        f"{stats.seconds:.1f}s ({rate}); total {seconds:.1f}s"
    )


class _Heartbeat:
    """Keeps the run lock's heartbeat fresh from a daemon thread while the run works."""

    def __init__(self, lock: RunLock, every: float = HEARTBEAT_SECONDS) -> None:
        self.lock = lock
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="recon-heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.lock.heartbeat()
            except Exception:  # a missed beat is logged; the next one may succeed
                log.warning("could not refresh the run lock's heartbeat", exc_info=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
