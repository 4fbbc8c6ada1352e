"""`recon run` when merchant.authorize does not give a token: one line, exit 1, nothing stored.

A 404 from merchant.authorize (a wrong base URL or path prefix) used to be read as "transaction not
found": every payout became ``unknown`` and the run exited 0. A night with nothing due used to ask
the provider nothing, so a dead provider or a revoked key went unnoticed (exit 0, status OK): every
night now asks for its token first, and only once.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import recon, recon_env
from tests.integration.provider_standin import Reply, serve_standin, token_answer
from tests.integration.test_faults_hostile_answers import settled_answer

pytestmark = pytest.mark.timeout(120)


def wrong_prefix(operation: str, body: dict[str, Any]) -> Reply:
    """A web server at the wrong path: 404 for everything."""
    return Reply.json(404, '{"error_name": "not_found", "error_message": "no such\\npath"}')


@pytest.mark.parametrize(
    ("script", "says"),
    [
        pytest.param(wrong_prefix, "HTTP 404", id="404"),
        pytest.param(lambda op, body: Reply(200, b"[" * 50_000), "deeper than", id="deep"),
    ],
)
def test_an_authorize_failure_exits_1_with_one_line_and_stores_nothing(
    tmp_path: Path, script: Any, says: str
) -> None:
    """The run stops at merchant.authorize with a one-line error (no traceback), exit 1, and no
    payout is recorded as checked."""
    db = f"sqlite:///{tmp_path / 'recon.db'}"
    csv_path = tmp_path / "payouts.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"tx-{i},ref-{i},1.00,EUR\n" for i in range(3))
    )
    with serve_standin(script) as standin:
        env = recon_env(db, standin.url, retry_attempts="1")
        imported = recon(env, "import", "payouts", str(csv_path), cwd=tmp_path)
        assert imported.returncode == 0, imported.stderr
        ran = recon(env, "run", "--no-email", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert ran.returncode == ExitCode.FAILURE, ran.stdout + ran.stderr
    lines = [line for line in ran.stderr.splitlines() if line.startswith("recon: error:")]
    assert len(lines) == 1, ran.stderr
    assert "merchant.authorize" in lines[0]
    assert says in lines[0]
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "out" / "payouts.csv").exists()


def counting_provider(operations: list[str]) -> Any:
    """Tokens and settled answers, each request's operation appended to ``operations``."""

    def script(operation: str, body: dict[str, Any]) -> Reply:
        operations.append(operation)
        if operation == "merchant.authorize":
            return token_answer()
        return Reply.json(200, settled_answer(str(body["id"])))

    return script


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_night_with_nothing_due_still_asks_for_a_token_and_fails_when_none_comes(
    tmp_path: Path,
) -> None:
    """An empty store and a dead provider: the night fails (exit 1, its line naming
    merchant.authorize), and `recon status` says CRITICAL with the cause."""
    env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", closed_port_url(), retry_attempts="1")
    ran = recon(env, "run", "--no-email", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert ran.returncode == ExitCode.FAILURE, ran.stdout + ran.stderr
    assert re.search(r"recon: night of [0-9-]+ failed: .*merchant\.authorize", ran.stderr)
    status = recon(env, "status", cwd=tmp_path)
    assert status.returncode == 2, status.stdout
    assert "failed" in status.stdout
    assert "merchant.authorize" in status.stdout


def test_a_night_with_nothing_due_asks_for_a_token_and_nothing_else(tmp_path: Path) -> None:
    """A working provider and nothing to poll: one merchant.authorize, exit 0."""
    operations: list[str] = []
    with serve_standin(counting_provider(operations)) as standin:
        env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", standin.url)
        ran = recon(env, "run", "--no-email", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert operations == ["merchant.authorize"]


def test_an_ordinary_night_authorizes_once_before_its_reads(tmp_path: Path) -> None:
    """Three payouts due: one token, then one transaction.get each; no second authorize."""
    db = f"sqlite:///{tmp_path / 'recon.db'}"
    csv_path = tmp_path / "payouts.csv"
    csv_path.write_text(
        "transaction_id,merchant_reference,amount,currency\n"
        + "".join(f"tx-{i},ref-{i},1.00,EUR\n" for i in range(3))
    )
    operations: list[str] = []
    with serve_standin(counting_provider(operations)) as standin:
        env = recon_env(db, standin.url)
        assert recon(env, "import", "payouts", str(csv_path), cwd=tmp_path).returncode == 0
        ran = recon(env, "run", "--no-email", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert operations == ["merchant.authorize"] + ["transaction.get"] * 3
