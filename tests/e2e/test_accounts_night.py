"""`recon run` over two provider accounts, as processes against one store and one sandbox serving
two merchants: each account's night its own run (lock, row, token), two `--account` processes at
once, one account's refused keys leaving the other's night complete (exit 3)."""

from __future__ import annotations

import email
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from recon.constants import ExitCode
from recon.sandbox.loopback import LoopbackSandbox, SandboxAccount
from recon.store.db import ensure_schema, make_engine
from recon.store.lock import RunLock
from recon.store.payouts import upsert_payouts
from recon.store.tables import runs
from tests.conftest import ServerDatabases
from tests.e2e.run_support import explain, recon, start_recon

ACCOUNTS = ("brand_a", "brand_b")
SHARED_ID = "tx-shared-0001"  # the same transaction id under both accounts: two payouts


@dataclass
class Merchant:
    """A store with two accounts configured, each a merchant of one served sandbox."""

    root: Path
    url: str
    env: dict[str, str]
    keys: dict[str, SandboxAccount]

    def run(self, *args: str) -> tuple[int, str]:
        done = recon(self.env, "run", "--no-email", *args, cwd=self.root)
        return done.returncode, explain(done)

    def runs(self) -> list[tuple[str, str]]:
        engine = make_engine(self.url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(select(runs.c.provider_account, runs.c.status)).all()
        finally:
            engine.dispose()
        return sorted((str(a), str(s)) for a, s in rows)


def _merchant(
    root: Path, url: str, sandbox: LoopbackSandbox, mail_to: dict[str, str] | None = None
) -> Merchant:
    keys = {name: sandbox.add_account(name.replace("_", "-")) for name in ACCOUNTS}
    config = root / "recon.toml"
    config.write_text(
        "".join(
            f'[accounts.{name}]\nlabel = "Brand {name[-1].upper()}"\n'
            f'api_base_url = "{sandbox.url}"\npublic_key = "{key.public_key}"\n'
            + (f'mail_to = "{(mail_to or {})[name]}"\n' if name in (mail_to or {}) else "")
            + "\n"
            for name, key in keys.items()
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env |= {
        "RECON_CONFIG": str(config),
        "RECON_DATABASE_URL": url,
        "RECON_OUT_DIR": str(root / "out"),
        "RECON_METRICS_FILE": str(root / "metrics" / "recon.prom"),
        "RECON_RETRY_ATTEMPTS": "2",
        "RECON_RETRY_INITIAL_WAIT": "0",
    }
    env |= {f"RECON_ACCOUNT_{name.upper()}_SECRET": key.secret for name, key in keys.items()}
    engine = make_engine(url)
    try:
        ensure_schema(engine)
        with engine.begin() as conn:
            for name in ACCOUNTS:
                row = {
                    "transaction_id": SHARED_ID,
                    "merchant_reference": f"{name}-0001",
                    "amount_minor": 1250,
                    "currency": "EUR",
                }
                upsert_payouts(conn, [row], account=name)
    finally:
        engine.dispose()
    return Merchant(root, url, env, keys)


@pytest.fixture(params=["postgres", "mysql"])
def server_merchant(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    server_databases: ServerDatabases,
    payout_sandbox: LoopbackSandbox,
) -> Merchant:
    """Two accounts on a new PostgreSQL or MariaDB database."""
    return _merchant(tmp_path, server_databases.create(request.param), payout_sandbox)


@pytest.fixture
def sqlite_merchant(tmp_path: Path, payout_sandbox: LoopbackSandbox) -> Merchant:
    return _merchant(tmp_path, f"sqlite:///{tmp_path / 'recon.db'}", payout_sandbox)


def test_two_account_processes_at_once_both_complete(server_merchant: Merchant) -> None:
    """Two account processes at once both complete."""
    m = server_merchant
    procs = [
        start_recon(m.env, "run", "--no-email", "--account", name, cwd=m.root) for name in ACCOUNTS
    ]
    outs = [(p.wait(timeout=180), *p.communicate()) for p in procs]
    for code, out, err in outs:
        assert code == ExitCode.OK, f"exit {code}\n{out}\n{err}"
    assert m.runs() == [("brand_a", "complete"), ("brand_b", "complete")]
    assert (m.root / "out" / "brand_a" / "report.html").exists()
    assert (m.root / "out" / "brand_b" / "report.html").exists()


def test_one_account_held_by_another_run_exits_4_while_the_other_completes(
    server_merchant: Merchant,
) -> None:
    """One winner per account: brand A's lock is held (as by another host's run)."""
    m = server_merchant
    engine = make_engine(m.url)
    try:
        with RunLock(engine, account="brand_a"):
            held = start_recon(m.env, "run", "--no-email", "--account", "brand_a", cwd=m.root)
            other = start_recon(m.env, "run", "--no-email", "--account", "brand_b", cwd=m.root)
            held_out = (held.wait(timeout=180), *held.communicate())
            other_out = (other.wait(timeout=180), *other.communicate())
    finally:
        engine.dispose()
    assert held_out[0] == ExitCode.LOCKED, held_out
    assert "brand_a" in held_out[1] + held_out[2]
    assert other_out[0] == ExitCode.OK, other_out
    assert m.runs() == [("brand_b", "complete")]


def test_every_account_in_turn_one_pack_over_both(sqlite_merchant: Merchant) -> None:
    """Every account in turn one pack over both."""
    m = sqlite_merchant
    code, said = m.run()
    assert code == ExitCode.OK, said
    assert m.runs() == [("brand_a", "complete"), ("brand_b", "complete")]
    payouts = (m.root / "out" / "payouts.csv").read_text(encoding="utf-8").splitlines()
    assert sorted(line.split(",")[:2] for line in payouts[1:]) == [
        [SHARED_ID, "brand_a"],
        [SHARED_ID, "brand_b"],
    ]
    metrics = (m.root / "metrics" / "recon.prom").read_text(encoding="utf-8")
    assert 'recon_run_exit_code{account="brand_a"} 0.0' in metrics
    assert 'recon_run_exit_code{account="brand_b"} 0.0' in metrics

    shown = recon(m.env, "show", SHARED_ID, cwd=m.root)
    assert shown.returncode == 0, explain(shown)
    assert "(account brand_a)" in shown.stdout
    assert "(account brand_b)" in shown.stdout
    one = recon(m.env, "show", "brand_b-0001", cwd=m.root)
    assert one.returncode == 0, explain(one)
    assert "(account brand_b)" in one.stdout
    assert "brand_a" not in one.stdout

    again = recon(m.env, "report", "--account", "brand_b", "--out", str(m.root / "b"), cwd=m.root)
    assert again.returncode == 0, explain(again)
    rows = (m.root / "b" / "payouts.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [row.split(",")[1] for row in rows] == ["brand_b"]
    both = recon(m.env, "report", "--out", str(m.root / "both"), cwd=m.root)
    assert both.returncode == 0, explain(both)
    rows = (m.root / "both" / "payouts.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(row.split(",")[1] for row in rows) == ["brand_a", "brand_b"]

    engine = make_engine(m.url)
    try:
        with engine.connect() as conn:
            run_a = conn.execute(
                select(runs.c.id).where(runs.c.provider_account == "brand_a")
            ).scalar_one()
    finally:
        engine.dispose()
    rebuilt = recon(m.env, "report", "--run", str(run_a), "--out", str(m.root / "a"), cwd=m.root)
    assert rebuilt.returncode == 0, explain(rebuilt)
    own = {p.name: p.read_bytes() for p in (m.root / "out" / "brand_a").iterdir() if p.is_file()}
    assert {p.name: p.read_bytes() for p in (m.root / "a").iterdir() if p.is_file()} == own

    listed = recon(m.env, "exceptions", "list", "--format", "csv", "--account", "brand_a",
                   cwd=m.root)  # fmt: skip
    assert listed.returncode == 0, explain(listed)
    assert all(",brand_a," in row for row in listed.stdout.splitlines()[1:])
    exported = recon(m.env, "export", "payouts", "--since", "2000-01-01", "--account", "brand_a",
                     "--out", str(m.root / "a.csv"), cwd=m.root)  # fmt: skip
    assert exported.returncode == 0, explain(exported)
    rows = (m.root / "a.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [row.split(",")[1] for row in rows] == ["brand_a"]


def test_refused_keys_fail_one_account_and_the_other_completes_exit_3(
    sqlite_merchant: Merchant,
) -> None:
    """Refused keys fail one account and the other completes exit 3."""
    m = sqlite_merchant
    m.env["RECON_ACCOUNT_BRAND_B_SECRET"] = "sk-not-brand-b"
    code, said = m.run()
    assert code == ExitCode.INCOMPLETE, said
    assert "account brand_b" in said
    assert "sk-not-brand-b" not in said
    assert m.runs() == [("brand_a", "complete"), ("brand_b", "failed")]
    assert (m.root / "out" / "report.html").exists()
    metrics = (m.root / "metrics" / "recon.prom").read_text(encoding="utf-8")
    assert 'recon_run_exit_code{account="brand_a"} 0.0' in metrics
    assert 'recon_run_exit_code{account="brand_b"} 1.0' in metrics


def test_an_account_not_configured_exits_2_naming_the_option(sqlite_merchant: Merchant) -> None:
    """An account not configured exits 2 naming the option."""
    code, said = sqlite_merchant.run("--account", "brand_c")
    assert code == ExitCode.USAGE, said
    assert "--account" in said
    assert "brand_c" in said


@dataclass
class Inbox:
    """An SMTP server's handler that keeps every message and its recipients."""

    received: list[tuple[list[str], email.message.Message]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((list(envelope.rcpt_tos), email.message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    handler = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


def test_an_account_with_its_own_mail_to_gets_its_own_pack_and_finance_the_pack_of_both(
    tmp_path: Path, payout_sandbox: LoopbackSandbox, inbox: tuple[Inbox, int]
) -> None:
    """An account with its own mail to gets its own pack and finance the pack of both."""
    box, port = inbox
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    m = _merchant(tmp_path, url, payout_sandbox, mail_to={"brand_b": "brand-b@shop.test"})
    m.env |= {
        "RECON_SMTP_HOST": "127.0.0.1",
        "RECON_SMTP_PORT": str(port),
        "RECON_MAIL_TO": "finance@shop.test",
    }
    done = recon(m.env, "run", cwd=m.root)
    assert done.returncode == ExitCode.OK, explain(done)
    by_recipient = {tuple(to): msg for to, msg in box.received}
    assert sorted(by_recipient) == [("brand-b@shop.test",), ("finance@shop.test",)]

    def payouts_of(msg: email.message.Message) -> list[str]:
        (part,) = [p for p in msg.walk() if p.get_filename() == "payouts.csv"]
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        return sorted(row.split(",")[1] for row in payload.decode("utf-8").splitlines()[1:])

    assert payouts_of(by_recipient[("brand-b@shop.test",)]) == ["brand_b"]
    assert payouts_of(by_recipient[("finance@shop.test",)]) == ["brand_a", "brand_b"]
    assert (m.root / "out" / "brand_b" / "payouts.csv").exists()
