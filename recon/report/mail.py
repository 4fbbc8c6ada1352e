"""The morning email: one message with the report as HTML, a text alternative, the chart, the CSVs.

Structure (RFC 2046/2387): multipart/mixed [ multipart/alternative [ text/plain,
multipart/related [ text/html, image/png (Content-ID) ] ], attachments ]. The chart is referenced as
``cid:`` because many clients block ``data:`` images. The CSVs are attached as they are, or as one
zip when together they are larger than ``mail_zip_above_bytes``.

Sending is retried (:mod:`recon.retry`: backoff with full jitter, its testing mode) on transient
failures (network errors, 4xx replies). After the last attempt ``MailError`` is raised, with a
message scrubbed of every secret (:mod:`recon.redact`). An address or header holding a control
character is a ``ConfigError`` before anything is sent. The files on disk are never touched.
"""

from __future__ import annotations

import io
import logging
import smtplib
import ssl
import zipfile
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from recon import retry
from recon.errors import ConfigError, MailError
from recon.redact import scrubber_for
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.pack import ReportFiles
from recon.report.text import render_text, subject
from recon.settings import Settings, env_name
from recon.textsafe import control_character

log = logging.getLogger(__name__)

ATTEMPTS = 3
BACKOFF = retry.Backoff(attempts=ATTEMPTS, initial=2.0, maximum=30.0)


def build_message(settings: Settings, files: ReportFiles, data: ReportInput) -> EmailMessage:
    """The complete message, ready to send (nothing is sent)."""
    if not settings.mail_to:
        raise ConfigError("mail_to (RECON_MAIL_TO) is empty: no one to send the report to")
    _one_line("mail_from", [settings.mail_from])
    _one_line("mail_to", settings.mail_to)
    _one_line("mail_cc", settings.mail_cc)
    msg = EmailMessage()
    msg["Subject"] = _one_line("the subject", [subject(data)])[0]
    msg["From"] = settings.mail_from
    msg["To"] = ", ".join(settings.mail_to)
    if settings.mail_cc:
        msg["Cc"] = ", ".join(settings.mail_cc)
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=_domain(settings.mail_from))
    # The body is what people read first, and some webmails cut a long one (Gmail at ~102 KB,
    # inlined styles included): its tables stop earlier than report.html's; the files hold all.
    row_cap = min(settings.mail_row_cap, settings.report_row_cap)
    text = render_text(data, row_cap=row_cap, max_gap=settings.max_run_age)
    msg.set_content(text, charset="utf-8")
    chart = files.chart.read_bytes() if files.chart is not None and files.chart.is_file() else None
    cid = make_msgid(domain=_domain(settings.mail_from)) if chart is not None else None
    html = render_report(
        data,
        row_cap=row_cap,
        chart_png=chart,
        chart_cid=cid and cid[1:-1],
        max_gap=settings.max_run_age,
    )
    msg.add_alternative(mail_html(html), subtype="html", charset="utf-8")
    if chart is not None and cid is not None:
        for part in msg.iter_parts():
            if part.get_content_type() == "text/html":
                # inline: with a file name alone it would be marked an attachment too
                part.add_related(
                    chart,
                    maintype="image",
                    subtype="png",
                    cid=cid,
                    filename="chart.png",
                    disposition="inline",
                )
    _attach_csvs(msg, files, data, settings.mail_zip_above_bytes)
    return msg


def mail_html(page: str) -> str:
    """The report page with its stylesheet inlined on every element (css-inline), for the mail.

    Outlook's Word renderer and several webmails drop or limit ``<style>`` blocks, so the mailed
    body carries each rule in ``style`` attributes; only what cannot be inlined (``@media``: the
    phone cards, print) stays in a ``<style>`` block, an enhancement where a client reads it. The
    measurement behind css-inline over premailer is in docs/decisions.md.
    """
    import css_inline

    inliner = css_inline.CSSInliner(keep_at_rules=True, load_remote_stylesheets=False)
    return str(inliner.inline(page))


def _one_line(name: str, values: list[str]) -> list[str]:
    """``values`` for a header, or ``ConfigError``: a CR or LF would start a header of its own.

    Settings are validated when loaded; this guards settings built without validation.
    """
    for value in values:
        bad = control_character(value)
        if bad is not None:
            where = f"{name} ({env_name(name)})" if name.startswith("mail_") else name
            raise ConfigError(f"{where} holds a control character ({bad!r}): {value!r}")
    return values


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip("> ") or "recon.localhost"


# The CSVs and report.xlsx go out together: as they are, or in the one zip.
_MIME = {
    ".csv": ("text", "csv"),
    ".xlsx": ("application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
}


def _attach_csvs(msg: EmailMessage, files: ReportFiles, data: ReportInput, zip_above: int) -> None:
    present = [p for p in files.attachments if p.is_file()]
    total = sum(p.stat().st_size for p in present)
    if total <= zip_above:
        for path in present:
            maintype, subtype = _MIME.get(path.suffix, ("application", "octet-stream"))
            msg.add_attachment(
                path.read_bytes(), maintype=maintype, subtype=subtype, filename=path.name
            )
        return
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in present:
            archive.write(path, arcname=path.name)
    day = data.run.as_of.strftime("%Y-%m-%d")
    msg.add_attachment(
        buf.getvalue(), maintype="application", subtype="zip", filename=f"recon-{day}.zip"
    )


def _transient(exc: Exception) -> bool:
    """Worth another attempt: the network, a timeout, a dropped connection or a 4xx reply."""
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    return isinstance(exc, OSError | smtplib.SMTPServerDisconnected)


def _send_once(settings: Settings, msg: EmailMessage) -> None:
    host = settings.smtp_host
    assert host is not None
    timeout = settings.smtp_timeout
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_security == "tls":
        smtp = smtplib.SMTP_SSL(host, settings.smtp_port, timeout=timeout, context=context)
    else:
        smtp = smtplib.SMTP(host, settings.smtp_port, timeout=timeout)
    with smtp:
        if settings.smtp_security == "starttls":
            smtp.starttls(context=context)
        if settings.smtp_user:
            password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
            smtp.login(settings.smtp_user, password)
        smtp.send_message(msg, to_addrs=[*settings.mail_to, *settings.mail_cc])


def send_report(settings: Settings, files: ReportFiles, data: ReportInput) -> None:
    """Send the report to ``mail_to`` and ``mail_cc``; ``MailError`` after the last attempt."""
    if not settings.smtp_host:
        raise ConfigError("smtp_host (RECON_SMTP_HOST) is not set: cannot send the report")
    msg = build_message(settings, files, data)
    deliver(settings, msg, what="the report", after=f"; the report files stay in {files.out_dir}")


def deliver(settings: Settings, msg: EmailMessage, *, what: str, after: str = "") -> None:
    """Send ``msg`` to ``mail_to`` and ``mail_cc`` with retries; ``MailError`` (naming ``what``,
    then ``after``) after the last attempt."""
    where = f"{settings.smtp_host}:{settings.smtp_port}"
    scrub = scrubber_for(settings)

    def log_retry(exc: Exception, attempt: int, seconds: float) -> None:
        reason = scrub(f"{type(exc).__name__}: {exc}")
        log.warning(
            "sending %s via %s failed (%s); retrying in %.0f s", what, where, reason, seconds
        )

    attempts = retry.Attempts(BACKOFF, _transient, on_retry=log_retry)
    try:
        retry.call(lambda: _send_once(settings, msg), attempts)
    except (smtplib.SMTPException, OSError) as exc:
        raise MailError(
            f"could not send {what} via {where} (attempt {attempts.number} of {ATTEMPTS}):"
            f" {scrub(f'{type(exc).__name__}: {exc}')}{after}"
        ) from None
    log.info(
        "%s sent via %s to %d recipients",
        what[:1].upper() + what[1:],
        where,
        len(settings.mail_to) + len(settings.mail_cc),
    )
