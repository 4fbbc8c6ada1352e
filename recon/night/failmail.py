"""The short email operations get when a night fails: the failure line as its subject, and a few
lines on what it means and what to do. Plain text, no attachments: there is no report."""

from __future__ import annotations

from datetime import datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from recon.report.mail import deliver
from recon.settings import Settings
from recon.textsafe import control_character
from recon.words import local_time

BODY = """\
{subject}

Run {run} (as of {as_of}) did not finish: {cause}.
No report was written or sent for this night.

The next `recon run` within 12 hours continues it from where it stopped; later, a run starts
afresh. `recon runs` lists the run log with each failed run's cause, and the log of the run
(journalctl -u recon-nightly, or the cron wrapper's log file) has the details.
"""


def failure_message(
    settings: Settings, *, subject: str, cause: str, run_id: int | None, as_of: datetime
) -> EmailMessage:
    """The message to ``mail_to`` and ``mail_cc`` (nothing is sent)."""
    msg = EmailMessage()
    msg["Subject"] = subject if control_character(subject) is None else " ".join(subject.split())
    msg["From"] = settings.mail_from
    msg["To"] = ", ".join(settings.mail_to)
    if settings.mail_cc:
        msg["Cc"] = ", ".join(settings.mail_cc)
    msg["Date"] = formatdate(localtime=False)
    domain = settings.mail_from.rpartition("@")[2].strip("> ") or "recon.localhost"
    msg["Message-ID"] = make_msgid(domain=domain)
    when = local_time(as_of, settings.zone)
    run = str(run_id) if run_id is not None else "(not started)"
    msg.set_content(BODY.format(subject=subject, run=run, as_of=when, cause=cause), charset="utf-8")
    return msg


def send_failure_mail(
    settings: Settings, *, subject: str, cause: str, run_id: int | None, as_of: datetime
) -> None:
    """Tell ``mail_to`` and ``mail_cc`` that the night failed and why; ``MailError`` if it
    cannot be sent."""
    msg = failure_message(settings, subject=subject, cause=cause, run_id=run_id, as_of=as_of)
    deliver(settings, msg, what="the failure notice")
