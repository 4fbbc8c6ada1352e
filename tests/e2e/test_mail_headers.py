"""A mail address with a line break in it stops `recon run` and `recon report` before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import explain, recon, recon_env

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    "command", [["run", "--out", "out"], ["report", "--out", "out", "--email"]]
)
def test_a_line_break_in_a_mail_address_exits_2_without_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    """RECON_MAIL_TO with CRLF: exit 2 naming the variable; nothing is polled or written."""
    env = recon_env(
        f"sqlite:///{tmp_path / 'recon.db'}",
        "http://127.0.0.1:9",
        smtp_host="127.0.0.1",
        mail_to="ops@example.test\r\nBcc: thief@evil.test",
    )
    done = recon(env, *command, cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE, explain(done)
    assert "Traceback" not in done.stderr, explain(done)
    assert "RECON_MAIL_TO" in done.stderr
    assert "control character" in done.stderr
    assert not (tmp_path / "out").exists()
