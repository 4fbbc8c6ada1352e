"""`--account` on `recon report`, `recon exceptions list` and `recon export payouts`: an account
that is not configured is refused with exit 2 naming the option and the accounts; the configured
one (here the default account of RECON_API_*) is accepted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.run_support import RECON


def recon(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    return subprocess.run(
        [RECON, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "command",
    [
        ("report", "--out", "out"),
        ("exceptions", "list"),
        ("export", "payouts", "--since", "2026-01-01", "--out", "p.csv"),
    ],
)
def test_an_account_not_configured_exits_2_naming_it(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """An account not configured exits 2 naming it."""
    result = recon(tmp_path, *command, "--account", "brand_x")
    assert result.returncode == 2, result.stderr
    assert (
        "--account: 'brand_x' is not a configured account (the accounts: default)" in result.stderr
    )
    assert not (tmp_path / "p.csv").exists()


def test_the_default_account_lists_and_exports_with_its_column(tmp_path: Path) -> None:
    """The default account lists and exports with its column."""
    listed = recon(tmp_path, "exceptions", "list", "--format", "csv", "--account", "default")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("exception_id,provider_account,state,")
    exported = recon(
        tmp_path, "export", "payouts", "--since", "2026-01-01", "--out", "p.csv",
        "--account", "default",
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "p.csv").read_text().startswith("transaction_id,provider_account,")
