"""A night that did not finish: its run row closed as ``failed`` with the cause, the failure line
logged and attached to the exception (the CLI's heartbeat ping carries it), and operations told by
a short email when mail is configured.

The row keeps where the run stopped, so the next run within the resume window still continues it
(:func:`recon.night.lifecycle.open_run`); a run killed outright (SIGKILL, power) cannot write
this, and the next run closes its row as failed when it does not resume it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from recon.errors import LockHeld, MailError
from recon.night.failmail import send_failure_mail
from recon.night.lifecycle import Run, RunOptions
from recon.reconcile.failure import cause_of, failure_line, night_of
from recon.redact import scrubber_for
from recon.settings import Settings
from recon.store.runs import fail_run, run_record

log = logging.getLogger(__name__)


@dataclass
class Night:
    """What the run knows of its night so far: its row, once opened, and why it failed."""

    run: Run | None = None
    cause: str = ""


def store_failure(settings: Settings, night: Night, exc: BaseException) -> None:
    """Close the opened run's row as ``failed`` with the cause (still resumable). A lost lock is
    another run's night now; a database that is down cannot take it (the next run closes it)."""
    night.cause = scrubber_for(settings)(cause_of(exc))
    run = night.run
    if run is None or run.dry or isinstance(exc, LockHeld):
        return
    try:
        with run.transaction() as conn:
            record = run_record(conn, run.stored_id)
            if record is not None:
                finished = datetime.now(UTC)
                fail_run(conn, record, cause=night.cause, finished_at=finished, resumable=True)
    except Exception as problem:  # the database is the likely cause: the row stays as it was
        log.warning(
            "could not record run %s as failed (%s: %s); the next run closes it or resumes it",
            run.id,
            type(problem).__name__,
            problem,
        )


def announce_failure(
    settings: Settings, options: RunOptions, night: Night, exc: BaseException
) -> None:
    """Log the failure line, attach it to ``exc`` (``__notes__``), and mail operations.

    A run that never opened its row (the database unreachable, say) logs nothing more: the
    command's one error line already says it; the heartbeat and the mail still carry the line."""
    cause = night.cause or scrubber_for(settings)(cause_of(exc))
    as_of = night.run.as_of if night.run is not None else options.as_of or datetime.now(UTC)
    line = failure_line(night_of(as_of, settings.zone), cause)
    if night.run is not None:
        log.error("%s", line)
    exc.add_note(line)
    if not (options.email and settings.smtp_host and settings.mail_to):
        return
    run_id = night.run.id if night.run is not None else None
    try:
        send_failure_mail(settings, subject=line, cause=cause, run_id=run_id, as_of=as_of)
    except MailError as problem:
        log.error("%s", problem)
