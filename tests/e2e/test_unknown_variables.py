"""A misspelled RECON_ variable is named by every command, on standard error, with the name it
misspells; the command goes on as before (`recon config check` alone fails on it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.run_support import explain, recon, recon_env

pytestmark = pytest.mark.timeout(120)

WARNING = "recon: warning: RECON_MAX_RUN_AGEE: unknown setting; did you mean RECON_MAX_RUN_AGE?"


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["status"], 3),  # no store yet: UNKNOWN, as without the typo
        (["runs"], 0),
        (["exceptions", "list"], 0),
        (["db", "upgrade"], 0),
        (["sandbox", "pay", "--help"], 0),
    ],
)
def test_every_command_names_the_typo_on_stderr_and_goes_on(
    tmp_path: Path, command: list[str], code: int
) -> None:
    """One warning line on stderr, the command's own output and exit code unchanged."""
    env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", "http://127.0.0.1:9")
    plain = recon(env, *command, cwd=tmp_path)
    typo = recon({**env, "RECON_MAX_RUN_AGEE": "1h"}, *command, cwd=tmp_path)
    assert typo.returncode == plain.returncode == code, explain(typo)
    assert typo.stderr.splitlines() == [WARNING, *plain.stderr.splitlines()], explain(typo)
    assert typo.stdout == plain.stdout


def test_config_check_names_it_once_and_exits_1(tmp_path: Path) -> None:
    """In its own report, with the suggestion, not again on stderr; exit 1."""
    env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", "http://127.0.0.1:9")
    done = recon({**env, "RECON_MAX_RUN_AGEE": "1h"}, "config", "check", cwd=tmp_path)
    assert done.returncode == 1, explain(done)
    assert "RECON_MAX_RUN_AGEE" not in done.stderr
    (line,) = [ln for ln in done.stdout.splitlines() if "RECON_MAX_RUN_AGEE" in ln]
    assert line.strip() == (
        "✗ env       RECON_MAX_RUN_AGEE: unknown setting; did you mean RECON_MAX_RUN_AGE?"
    )
