"""Secrets never leave recon: a whole night is run with distinctive secrets, then every artefact is
searched for them (output and -vv logs, reports, the email, the database, `recon config check`).

The API secret, the SMTP password, the receiver's path token and every access token the sandbox
issued are long random strings, so finding any of them anywhere is a leak and nothing else.
"""

from __future__ import annotations

import email
import email.policy
import logging
import secrets
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from pydantic import SecretStr

from recon.ingest.receiver import create_receiver_app
from recon.sandbox.app import create_app
from recon.sandbox.config import SandboxConfig, default_merchant
from recon.serving import serve_in_thread
from recon.settings import Settings
from tests.e2e.run_support import (
    Spec,
    World,
    create_payouts,
    explain,
    recon,
    recon_env,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(120)

API_SECRET = f"apisecret-{secrets.token_hex(12)}"
SMTP_PASSWORD = f"smtppw-{secrets.token_hex(12)}"
PATH_TOKEN = f"pathtoken-{secrets.token_hex(12)}"


class SecretWorld(World):
    """The served sandbox, whose merchant has the distinctive secret."""

    def settings(self) -> Settings:
        return Settings(api_base_url=self.sandbox_url, api_secret=API_SECRET, retry_initial_wait=0)


class Inbox:
    """Keeps every message's raw bytes; accepts only the distinctive SMTP password."""

    def __init__(self) -> None:
        self.raw: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.raw.append(bytes(envelope.content))
        return "250 OK"


def authenticator(
    server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok, handled=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def dump_database(path: Path) -> str:
    """Every table of the SQLite store as SQL text."""
    with sqlite3.connect(path) as conn:
        return "\n".join(conn.iterdump())


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=authenticator,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def test_no_secret_appears_in_any_artefact_of_a_night(
    tmp_path: Path, smtp: tuple[Inbox, int], caplog: pytest.LogCaptureFixture
) -> None:
    """Output, -vv logs, reports, the email, the database and config check hold no secret."""
    caplog.set_level(logging.DEBUG)
    inbox, smtp_port = smtp
    db_file = tmp_path / "recon.db"
    db_url = f"sqlite:///{db_file}"
    receiver_settings = Settings(database_url=db_url, receiver_path_token=PATH_TOKEN)
    artefacts: dict[str, str | bytes] = {}
    with ExitStack() as stack:
        receiver_url = stack.enter_context(serve_in_thread(create_receiver_app(receiver_settings)))
        merchant = default_merchant().model_copy(
            update={
                "secret": SecretStr(API_SECRET),
                "returned_funds_url": f"{receiver_url}/callbacks/{PATH_TOKEN}",
            }
        )
        app = create_app(SandboxConfig(merchants=[merchant], settle_after_seconds=60))
        sandbox_url = stack.enter_context(serve_in_thread(app))
        admin = stack.enter_context(httpx.Client(base_url=sandbox_url, timeout=30))
        world = SecretWorld(sandbox_url, receiver_url, admin)

        specs = [Spec("14.01"), Spec("12.01"), Spec("13.01"), Spec("25.00"), Spec("30.50")]
        payouts = create_payouts(world, specs, prefix="secret")
        csv_path = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        world.advance(200)  # settles, and 14.01 comes back: a notification to the path token

        env = recon_env(
            db_url,
            sandbox_url,
            api_secret=API_SECRET,
            retry_attempts="2",
            retry_initial_wait="0",
            smtp_host="127.0.0.1",
            smtp_port=str(smtp_port),
            smtp_user="recon",
            smtp_password=SMTP_PASSWORD,
            mail_to='["ops@example.com"]',
            receiver_path_token=PATH_TOKEN,
        )
        commands: list[tuple[str, dict[str, str], list[str]]] = [
            ("import", env, ["-vv", "import", "payouts", str(csv_path)]),
            ("run", env, ["-vv", "run", "--out", str(tmp_path / "out")]),
            ("report", env, ["-vv", "report", "--out", str(tmp_path / "again"), "--email"]),
            ("config-check", env, ["-vv", "config", "check"]),
            # Wrong keys and a refusing SMTP server: the error paths must not echo them either.
            (
                "wrong-keys",
                {
                    **env,
                    "RECON_API_SECRET": API_SECRET + "-wrong",
                    "RECON_SMTP_PASSWORD": SMTP_PASSWORD + "-wrong",
                },
                ["-vv", "run", "--out", str(tmp_path / "wrong")],
            ),
            (
                "wrong-check",
                {**env, "RECON_SMTP_PASSWORD": SMTP_PASSWORD + "-wrong"},
                ["-vv", "config", "check"],
            ),
        ]
        # 5xx on the payouts' calls (a failed merchant.authorize would stop the run, exit 1).
        admin.post("/sandbox/faults", json={"error_rate": 0.3, "seed": 1, "spare_authorize": True})
        for name, cmd_env, args in commands:
            done = recon(cmd_env, *args, cwd=tmp_path)
            assert "Traceback" not in done.stderr, explain(done)
            artefacts[f"{name} stdout"] = done.stdout
            artefacts[f"{name} stderr"] = done.stderr
            if name in ("import", "run", "report"):
                assert done.returncode in (0, 3), explain(done)
        tokens = list(app.state.sandbox._tokens)
        deliveries = admin.get("/sandbox/deliveries").json()["deliveries"]

    assert tokens, "the sandbox issued no access token"
    assert any(d["status"] == 200 for d in deliveries), "the notification never reached recon"
    assert inbox.raw, "no email was received"
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file() and path.suffix not in (".db", ".db-wal", ".db-shm"):
            artefacts[f"file {path.relative_to(tmp_path)}"] = path.read_bytes()
    for i, raw in enumerate(inbox.raw):
        message = email.message_from_bytes(raw, policy=email.policy.default)
        artefacts[f"email {i}"] = raw
        for part in message.walk():
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                artefacts[f"email {i} part {part.get_content_type()}"] = payload
    artefacts["database"] = dump_database(db_file)
    # The test process also hosts the sandbox (the provider, which knows the url it posts to) and
    # the SMTP server: only recon's own records (the receiver's) are recon's artefacts.
    own = [
        f"{r.name} {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if r.name.startswith("recon.") and not r.name.startswith("recon.sandbox")
    ]
    assert own, "the receiver logged nothing"
    artefacts["receiver log"] = "\n".join(own)

    needles = {
        "API secret": API_SECRET,
        "SMTP password": SMTP_PASSWORD,
        "path token": PATH_TOKEN,
        **{f"access token {i}": t for i, t in enumerate(tokens)},
    }
    leaks = [
        f"{what} in {where}"
        for where, content in artefacts.items()
        for what, needle in needles.items()
        if (needle.encode() if isinstance(content, bytes) else needle) in content
    ]
    assert leaks == []
    assert "payouts.csv" in " ".join(artefacts)  # the reports were searched
