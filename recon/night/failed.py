"""A night that did not finish: its end as a record, and the hooks that tell of it: its run row
closed as ``failed`` with the cause, the failure line logged and attached to the exception, and
operations told by a short email when mail is configured.

The row keeps where the run stopped, so the next run within the resume window still continues it
(:func:`recon.night.lifecycle.open_run`); a run killed outright (SIGKILL, power) cannot write
this, and the next run closes its row as failed when it does not resume it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from recon.constants import DEFAULT_ACCOUNT
from recon.counts import RunCounts
from recon.errors import ConfigError, InputError, LockHeld, MailError
from recon.night.end import Hook, NightEnd, Outcome, exit_code
from recon.night.failmail import send_failure_mail
from recon.night.lifecycle import Run, RunOptions
from recon.reconcile.failure import cause_of, failure_line, night_of
from recon.redact import scrubber_for
from recon.settings import Settings
from recon.signals import Terminated
from recon.store.runs import fail_run, run_record

log = logging.getLogger(__name__)


@dataclass
class Night:
    """What the run knows of its night so far: when it began, its row once opened, and the error
    as it happened inside the run lock (before a database error is worded for the command)."""

    begun: float = field(default_factory=time.monotonic)
    run: Run | None = None
    raised: BaseException | None = None


def failure(settings: Settings, options: RunOptions, night: Night, exc: BaseException) -> NightEnd:
    """The end of a night an error or a signal stopped (``exc``, as it leaves the night)."""
    run = night.run
    if isinstance(exc, LockHeld) or (run is None and isinstance(exc, InputError | ConfigError)):
        outcome = Outcome.REFUSED  # another run's night, or nothing ran
    elif isinstance(exc, Terminated | KeyboardInterrupt):
        outcome = Outcome.STOPPED
    else:
        outcome = Outcome.FAILED
    cause = scrubber_for(settings)(cause_of(night.raised or exc))
    as_of = run.as_of if run is not None else options.as_of or datetime.now(UTC)
    return NightEnd(
        outcome=outcome,
        exit_code=exit_code(error=exc),
        run_id=run.id if run is not None else None,
        as_of=as_of,
        seconds=(
            (datetime.now(UTC) - run.started_at).total_seconds()
            if run is not None
            else time.monotonic() - night.begun
        ),
        counts=run.counts if run is not None else RunCounts(),
        dry=options.dry_run,
        cause=cause,
        line=failure_line(night_of(as_of, settings.zone), cause, _named(options.account)),
        error=exc,
        account=options.account,
    )


def _named(account: str) -> str | None:
    """The account a failure line names: any but the one account of a setup without accounts."""
    return None if account == DEFAULT_ACCOUNT else account


def run_row(night: Night) -> Hook:
    """The hook that closes the opened run's row as ``failed`` with the cause (still resumable),
    fenced by the run lock it still holds. A database that is down cannot take it (the next run
    closes it)."""

    def close(end: NightEnd) -> None:
        run = night.run
        if not end.announced or run is None:
            return
        try:
            with run.transaction() as conn:
                record = run_record(conn, run.stored_id)
                if record is not None:
                    finished = datetime.now(UTC)
                    fail_run(conn, record, cause=end.cause, finished_at=finished, resumable=True)
        except Exception as problem:  # the database is the likely cause: the row stays as it was
            log.warning(
                "could not record run %s as failed (%s: %s); the next run closes it or resumes it",
                run.id,
                type(problem).__name__,
                problem,
            )

    return close


def log_failure(end: NightEnd) -> None:
    """Log the failure line and attach it to the error (``__notes__``: the heartbeat's ping and
    the cron wrapper carry it). A run that never opened its row (the database unreachable, say)
    logs nothing more: the command's one error line already says it."""
    if not end.announced:
        return
    if end.run_id is not None:
        log.error("%s", end.line)
    if end.error is not None:
        end.error.add_note(end.line)


def failure_mail(settings: Settings, options: RunOptions) -> Hook:
    """The hook that mails operations the failure line, when mail is configured."""

    def mail(end: NightEnd) -> None:
        if not (end.announced and options.email and settings.smtp_host and settings.mail_to):
            return
        try:
            send_failure_mail(
                settings, subject=end.line, cause=end.cause, run_id=end.run_id, as_of=end.as_of
            )
        except MailError as problem:
            log.error("%s", problem)

    return mail
