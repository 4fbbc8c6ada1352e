"""`recon run` when merchant.authorize does not give a token: one line, exit 1, nothing stored.

A 404 from merchant.authorize (a wrong base URL or path prefix) used to be read as "transaction not
found": every payout became ``unknown`` and the run exited 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import recon, recon_env
from tests.integration.provider_standin import Reply, serve_standin

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
