"""``recon run``: gather (store, provider), decide (pure classification), apply (store, files).

One run at a time: the run holds a lock row in the database. A run killed half-way leaves a
``running`` (or ``applied``) row behind; the next run within ``RESUME_WINDOW`` resumes it with the
same ``as_of``, fetching only what is missing, so its reports equal an uninterrupted run's.

This module polls; :mod:`recon.reconcile.conclude` decides, applies and reports. That half needs
pandas and the report stack (about half a second of imports), so it is imported only after the
answers are in, and a warm-up thread loads it while the run waits on the provider: the first
request goes out that much sooner.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.constants import ExitCode
from recon.errors import MailError, StoreError
from recon.provider.client import ProviderClient
from recon.reconcile.observe import observation_row
from recon.reconcile.poll import Fetched, PollStats, poll
from recon.reconcile.progress import Progress
from recon.report.warm import warm_up_in_background
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine, safe_url, write_transaction
from recon.store.lock import RunLock
from recon.store.observations import insert_observations
from recon.store.runs import RunStatus, finish_run, latest_runs, run_record, start_run
from recon.store.selection import fetched_in_run, select_poll_ids

if TYPE_CHECKING:
    from recon.report.model import ReportInput
    from recon.report.pack import ReportFiles

log = logging.getLogger(__name__)

RESUME_WINDOW = timedelta(hours=12)
# Outcomes written, reports not yet: a resumed run only writes the reports.
APPLIED = RunStatus.APPLIED.value
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
        from recon.reconcile import conclude  # loaded by the warm-up (module docstring)

        with engine.connect() as conn:
            decision = conclude.decide(
                conn,
                settings,
                run_id=run.run_id,
                as_of=run.as_of,
                memory=memory,
                stats=stats,
                requests=requests,
                seconds=time.perf_counter() - clock_start,
            )
        counts = decision.counts
        if run.run_id is None:
            data = conclude.dry_run_report(
                decision, settings, started_at=run.started_at, as_of=run.as_of
            )
        else:
            conclude.apply(engine, decision, run_id=run.run_id, as_of=run.as_of)
    else:
        from recon.reconcile import conclude

        counts = stored_counts(engine, run.run_id)
    status = "dry_run" if options.dry_run else _status(counts)
    finished_at = datetime.now(UTC)
    if data is None:
        data = conclude.stored_report(
            engine, settings, run_id=run.run_id, status=status, finished_at=finished_at
        )
    files = conclude.write_reports(options.out_dir, data, settings, run_id=run.run_id)
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


def _status(counts: dict[str, Any]) -> str:
    return "incomplete" if counts.get("flags", {}).get("fetch_failed") else "complete"


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
        ids = select_poll_ids(conn, as_of=run.as_of, recheck_days=settings.recheck_days)
        if run.run_id is not None and run.resumed:
            done = fetched_in_run(conn, run.run_id)
            ids = [i for i in ids if i not in done]

    def sink(batch: Sequence[Fetched]) -> None:
        rows = [observation_row(f, run.run_id) for f in batch]
        if run.run_id is None:
            memory.extend(rows)
            return
        with write_transaction(engine) as conn:
            insert_observations(conn, rows)

    total = PollStats()
    warming = warm_up_in_background()  # pandas, the report stack and matplotlib, meanwhile
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
        warming.join()  # wait for its imports instead of running the same ones beside it
        from recon.reconcile import conclude

        with engine.connect() as conn:
            return_ids = conclude.return_ids(conn, run.run_id, memory)
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
