"""The end of a night: its report files, its row in the run log closed, the email, the summary line.

A night reports from its decision kept in memory (:func:`recon.report.build.from_night`: stored or
dry, one path; a stored night takes the window's other payouts and its totals from the store, read
after its write). ``recon report``, and a run resumed once its decision was stored, rebuild the
same report from the store (:func:`recon.report.build.from_store`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.counts import RunCounts
from recon.errors import MailError, ReportWriteError
from recon.night.end import NightEnd, Outcome, exit_code
from recon.night.lifecycle import Run, RunOptions
from recon.night.poll import PollStats
from recon.night.prune import prune_night
from recon.reconcile.rollforward import ROLLFORWARD_BREAK
from recon.report.build import Tonight, from_night, from_store, run_info
from recon.report.mail import send_report
from recon.report.model import ReportInput
from recon.report.pack import write_configured
from recon.settings import Settings
from recon.store.runs import finish_run
from recon.words import counted, local_time

log = logging.getLogger(__name__)


def finish_night(
    settings: Settings,
    options: RunOptions,
    run: Run,
    data: ReportInput,
    counts: RunCounts,
    stats: PollStats,
) -> NightEnd:
    """Write the reports (``data``: :func:`report_of`), close the run, mail the reports; how the
    night ended, its duration from its row's start to its end."""
    status, finished_at = data.run.status, data.run.finished_at or datetime.now(UTC)
    try:
        files = write_configured(settings, options.out_dir, data)
    except ReportWriteError as exc:
        if run.dry:
            raise
        # The decision is stored and the run stays "applied": the next run only writes reports.
        raise type(exc)(
            f"{exc}; run {run.id}'s outcomes are stored: `recon run` again (without --as-of, or "
            "with the same) writes its reports without polling"
        ) from None
    if not run.dry:
        prune_night(run.transaction, as_of=run.as_of, keep_days=settings.keep_raw_days)
        with run.transaction() as conn:
            finish_run(conn, run.stored_id, status=status, finished_at=finished_at, counts=counts)
    mailed, mail_failed = "", False
    if options.email and not run.dry and settings.smtp_host and settings.mail_to:
        try:
            send_report(settings, files, data)
            recipients = len(settings.mail_to) + len(settings.mail_cc)
            mailed = f"; mailed to {counted(recipients, 'recipient')}"
        except MailError as exc:
            log.error("%s", exc)
            mailed, mail_failed = "; email FAILED", True
    # One duration per run, wherever it is told: from its row's start to its end (recon runs).
    took = (finished_at - run.started_at).total_seconds()
    summary = summary_line(run, counts, stats, took, settings.zone) + mailed
    return NightEnd(
        outcome=Outcome.FINISHED,
        exit_code=exit_code(status=status, counts=counts, mail_failed=mail_failed),
        run_id=run.id,
        as_of=run.as_of,
        seconds=took,
        counts=counts,
        dry=run.dry,
        status=status,
        files=files,
        summary=summary,
        account=run.account,
        report=data,
    )


def _status(run: Run, counts: RunCounts) -> RunStatus:
    if run.dry:
        return RunStatus.DRY_RUN
    return RunStatus.INCOMPLETE if counts.fetch_failed else RunStatus.COMPLETE


def report_of(
    settings: Settings, engine: Engine, run: Run, night: Tonight | None, counts: RunCounts
) -> ReportInput:
    """The night's report, with the status and end time about to be stored: from ``night`` (the
    decision's part kept in memory), or from the store (a run resumed once its decision was
    stored)."""
    status = _status(run, counts)
    finished_at = datetime.now(UTC)
    if night is None:
        # The store still says "applied" until the reports are written (a crash while writing
        # them resumes here): the report shows the status and end time about to be stored.
        stored = from_store(
            engine,
            timezone=settings.timezone,
            run_id=run.stored_id,
            window_days=settings.report_days,
            journal=settings.journal is not None,
        )  # the run's own account, read from its row
        took = (finished_at - run.started_at).total_seconds()
        ended = replace(stored.run, status=status, finished_at=finished_at, duration_seconds=took)
        return replace(stored, run=ended, labels=settings.labels)
    with engine.connect() as conn:
        info = run_info(
            conn,
            run_id=run.id,
            started_at=run.started_at,
            finished_at=finished_at,
            as_of=run.as_of,
            status=status,
            counts=counts,
            account=run.account,
        )
    data = from_night(
        info,
        night,
        timezone=settings.timezone,
        store=None if run.dry else engine,
        window_days=settings.report_days,
        account=run.account,
        journal=settings.journal is not None,
    )
    return replace(data, labels=settings.labels)  # as `recon report --run N` names the account


def summary_line(
    run: Run, counts: RunCounts, stats: PollStats, seconds: float, zone: ZoneInfo
) -> str:
    """The one line a run prints at its end (and cron logs); its as-of in ``zone``."""
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.outcomes.items()))
    rate = f"{stats.per_second:,.0f} req/s" if stats.requested else "no requests"
    reasons = ", ".join(f"{k} {v}" for k, v in counts.polls.items() if v)
    if counts.claims_over_cap:
        reasons += f"; {counts.claims_over_cap} unverified return claims left for the next run"
    if counts.polls_saved:
        reasons += f"; {counts.polls_saved} decided from the provider's export without asking"
    failed = counts.fetch_failed
    broke = counts.flags.get(ROLLFORWARD_BREAK.name, 0)
    whose = "" if run.account == DEFAULT_ACCOUNT else f" of account {run.account}"
    return (
        f"recon: {run.label}{whose} as of {local_time(run.as_of, zone, seconds=True)}: "
        f"{counted(counts.payouts, 'payout')} ({parts or 'none'}); "
        f"{counted(counts.exceptions, 'exception')}"
        f"{f' ({failed} could not be fetched)' if failed else ''}"
        f"{f'; the roll-forward broke on {broke} line(s): rollforward_break' if broke else ''}"
        f"; polled {stats.requested} in "
        f"{stats.seconds:.1f}s ({rate}{f'; {reasons}' if reasons else ''}); total {seconds:.1f}s"
    )
