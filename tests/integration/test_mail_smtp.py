"""The report email, received by a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import email
import email.policy
import io
import re
import socket
import zipfile
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from recon.errors import ConfigError, MailError
from recon.report import mail
from recon.report.mail import send_report
from recon.report.pack import ReportFiles, write_pack
from recon.settings import Settings
from tests.unit.report_fixtures import report_input

PASSWORD = "s3cret-smtp-pw"


class Inbox:
    """An SMTP handler that keeps what it receives, or answers every message with ``reply``."""

    def __init__(self, reply: str | None = None) -> None:
        self.reply = reply
        self.attempts = 0
        self.received: list[tuple[list[str], EmailMessage]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.attempts += 1
        if self.reply is not None:
            return self.reply
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append((list(envelope.rcpt_tos), parsed))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(inbox: Inbox, **kwargs: Any) -> Iterator[int]:
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


pytestmark = pytest.mark.usefixtures("no_retry_waits")


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def port(inbox: Inbox) -> Iterator[int]:
    yield from serve(inbox)


@pytest.fixture
def files(tmp_path: Path) -> ReportFiles:
    return write_pack(tmp_path, report_input(), row_cap=200)


def settings_for(port: int, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "smtp_host": "127.0.0.1",
        "smtp_port": port,
        "smtp_timeout": 5,
        "mail_from": "recon@example.test",
        "mail_to": ["ops@example.test", "lead@example.test"],
        "mail_cc": ["finance@example.test"],
        **overrides,
    }
    return Settings(**values)


def attachments(msg: EmailMessage) -> dict[str, bytes]:
    """Attached files by name, as bytes (the inline chart is not an attachment)."""
    out: dict[str, bytes] = {}
    for part in msg.iter_attachments():
        assert isinstance(part, EmailMessage)
        name = part.get_filename()
        assert name is not None
        out[name] = part.get_payload(decode=True)
    return out


def test_the_report_arrives_with_subject_bodies_chart_and_csvs(
    inbox: Inbox, port: int, files: ReportFiles
) -> None:
    """One message to to+cc: subject with counts, text and HTML bodies, CID chart, four CSVs."""
    send_report(settings_for(port), files, report_input())
    ((rcpts, msg),) = inbox.received
    assert sorted(rcpts) == ["finance@example.test", "lead@example.test", "ops@example.test"]
    assert msg["Subject"] == (
        "recon 2026-11-20: 7 problems need action (4 new) · 2 failed to re-pay or contact"
        " · 6 settled · 3 failed"
    )
    assert msg["From"] == "recon@example.test"
    assert msg["Cc"] == "finance@example.test"

    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    assert text is not None
    assert html is not None
    assert "NEEDS ACTION (7, 4 new)" in text.get_content()
    html_text = html.get_content()
    assert re.search(r"<h2 style=\"[^\"]+\">Needs action</h2>", html_text)
    assert "data:image" not in html_text

    related = next(p for p in msg.walk() if p.get_content_type() == "multipart/related")
    image = next(p for p in related.iter_parts() if p.get_content_type() == "image/png")
    cid = image["Content-ID"].strip("<>")
    assert f'src="cid:{cid}"' in html_text
    assert files.chart is not None
    assert image.get_content() == files.chart.read_bytes()

    attached = attachments(msg)
    assert sorted(attached) == [
        "exceptions.csv", "payouts.csv", "report.xlsx", "returns.csv", "summary.csv",
    ]  # fmt: skip
    assert attached["summary.csv"] == files.summary.read_bytes()
    assert files.workbook is not None
    assert attached["report.xlsx"] == files.workbook.read_bytes()


def test_csvs_are_zipped_when_larger_than_the_threshold(
    inbox: Inbox, port: int, files: ReportFiles
) -> None:
    """Above mail_zip_above_bytes the CSVs travel as one zip holding all four, byte for byte."""
    send_report(settings_for(port, mail_zip_above_bytes=100), files, report_input())
    ((_, msg),) = inbox.received
    attached = attachments(msg)
    assert list(attached) == ["recon-2026-11-20.zip"]
    with zipfile.ZipFile(io.BytesIO(attached["recon-2026-11-20.zip"])) as archive:
        assert sorted(archive.namelist()) == [p.name for p in sorted(files.attachments)]
        assert archive.read("payouts.csv") == files.payouts.read_bytes()


def test_a_server_that_keeps_refusing_is_retried_then_mail_error(files: ReportFiles) -> None:
    """A 451 on every try: the send is attempted three times, then MailError; files stay."""
    busy = Inbox(reply="451 4.3.0 try again later")
    for port in serve(busy):
        with pytest.raises(MailError, match="451") as caught:
            send_report(settings_for(port), files, report_input())
    assert busy.attempts == mail.ATTEMPTS
    assert "attempt 3 of 3" in str(caught.value)
    assert all(p.is_file() for p in [files.html, *files.csvs])


def test_a_permanent_refusal_is_not_retried(files: ReportFiles) -> None:
    """A 554 is final: one attempt, then MailError."""
    refusing = Inbox(reply="554 5.7.1 rejected")
    for port in serve(refusing):
        with pytest.raises(MailError, match="attempt 1 of 3"):
            send_report(settings_for(port), files, report_input())
    assert refusing.attempts == 1


def test_no_server_at_all_gives_mail_error_without_the_password(files: ReportFiles) -> None:
    """Connection refused on every attempt: MailError, and the password is nowhere in it."""
    settings = settings_for(free_port(), smtp_user="recon", smtp_password=PASSWORD)
    with pytest.raises(MailError) as caught:
        send_report(settings, files, report_input())
    assert PASSWORD not in str(caught.value)
    assert "stay in" in str(caught.value)


def _authenticator(
    server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data.password == PASSWORD.encode()
    return AuthResult(success=ok, handled=False)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_login_with_the_configured_user_and_password(files: ReportFiles) -> None:
    """With smtp_user set the client logs in; a wrong password fails without leaking it."""
    inbox = Inbox()
    for port in serve(inbox, authenticator=_authenticator, auth_require_tls=False):
        send_report(
            settings_for(port, smtp_user="recon", smtp_password=PASSWORD), files, report_input()
        )
        wrong = PASSWORD + "-wrong"
        with pytest.raises(MailError) as caught:
            send_report(
                settings_for(port, smtp_user="recon", smtp_password=wrong), files, report_input()
            )
        assert wrong not in str(caught.value)
    assert len(inbox.received) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"mail_to": ["ops@example.test\r\nBcc: thief@evil.test"]},
        {"mail_cc": ["finance@example.test\nBcc: thief@evil.test"]},
        {"mail_from": "recon@example.test\rX-Injected: yes"},
        {"mail_to": ["ops@example.test\x07"]},
    ],
)
def test_a_control_character_in_an_address_is_a_config_error_and_nothing_is_sent(
    inbox: Inbox, port: int, files: ReportFiles, change: dict[str, Any]
) -> None:
    """Settings that skipped validation (model_copy) still cannot inject a header at send time."""
    settings = settings_for(port).model_copy(update=change)
    with pytest.raises(ConfigError, match="control character"):
        send_report(settings, files, report_input())
    assert inbox.attempts == 0
    assert inbox.received == []
