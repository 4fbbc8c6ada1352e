"""Whole-number options hold what the store's ids and counts can: a number past a BIGINT is a
usage error naming the option, not the database's overflow."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import main

HUGE = str(2**63)  # one past the largest BIGINT (and SQLite INTEGER)


@pytest.mark.parametrize(
    "args",
    [["runs", "--limit", HUGE], ["report", "--run", HUGE], ["journal", "export", "--batch", HUGE]],
)
def test_a_number_past_a_bigint_exits_2_naming_the_option(args: list[str], tmp_path: Path) -> None:
    """Refused before the store is opened."""
    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{args[-2]}'" in result.output
    assert not (tmp_path / "recon.db").exists()
