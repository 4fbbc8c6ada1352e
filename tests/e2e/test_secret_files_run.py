"""`recon run` with its API secret from a file (RECON_API_SECRET_FILE) and from systemd's
credentials directory, against the sandbox over HTTP; a bad file stops it with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.constants import ExitCode
from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(180)
WRONG = "not-the-sandbox-secret-5e2a"


def test_the_api_secret_comes_from_the_credentials_directory_or_a_file(tmp_path: Path) -> None:
    """A wrong secret in $CREDENTIALS_DIRECTORY is refused by the provider (so it was used, and
    is never printed); the right one through RECON_API_SECRET_FILE completes the night."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "RECON_API_SECRET").write_text(WRONG + "\n", encoding="utf-8")
    right = tmp_path / "api-secret"
    right.write_text("sandbox-secret\n", encoding="utf-8")
    with served_world(database_url, receiver=False) as world:
        payouts = create_payouts(world, [Spec("10.00")])
        env = recon_env(database_url, world.sandbox_url)
        csv_file = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        assert recon(env, "import", "payouts", str(csv_file), cwd=tmp_path).returncode == 0
        run = ("run", "--no-email", "--out", "out")
        refused = recon({**env, "CREDENTIALS_DIRECTORY": str(credentials)}, *run, cwd=tmp_path)
        assert refused.returncode == ExitCode.FAILURE, explain(refused)
        assert "failed: the provider refused the API keys (merchant.authorize)" in refused.stderr
        assert WRONG not in refused.stdout + refused.stderr
        done = recon({**env, "RECON_API_SECRET_FILE": str(right)}, *run, cwd=tmp_path)
    assert done.returncode == ExitCode.OK, explain(done)


def test_a_missing_secret_file_exits_2_naming_the_file(tmp_path: Path) -> None:
    """RECON_SMTP_PASSWORD_FILE naming nothing: exit 2, the variable and the path, no traceback."""
    env = recon_env(f"sqlite:///{tmp_path / 'recon.db'}", "http://127.0.0.1:9")
    missing = tmp_path / "smtp-password"
    done = recon({**env, "RECON_SMTP_PASSWORD_FILE": str(missing)}, "run", cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE, explain(done)
    assert f"RECON_SMTP_PASSWORD_FILE names {missing}, which does not exist" in done.stderr
    assert "Traceback" not in done.stderr
