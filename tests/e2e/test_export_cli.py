"""`recon export payouts` as a command: a bad --since is refused with a clear line and exit 2."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.e2e.run_support import RECON


def test_a_since_that_is_not_a_date_exits_2_naming_the_option(tmp_path: Path) -> None:
    """Nothing is written; the message names --since and the forms it accepts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    result = subprocess.run(
        [RECON, "export", "payouts", "--since", "last tuesday", "--out", str(tmp_path / "p.csv")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "--since" in result.stderr
    assert "ISO 8601" in result.stderr
    assert not (tmp_path / "p.csv").exists()


def test_an_empty_store_exports_the_header_alone(tmp_path: Path) -> None:
    """A date with no payouts after it: payouts.csv's header line, exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    out = tmp_path / "p.csv"
    result = subprocess.run(
        [RECON, "export", "payouts", "--since", "2026-01-01", "--out", str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("transaction_id,merchant_reference,amount,")
