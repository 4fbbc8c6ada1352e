"""Options past what recon can hold or read are named, exit 2: a whole number past a BIGINT (the
store's ids and counts), a query file that is not UTF-8; never a traceback."""

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


def test_a_query_file_that_is_not_utf8_exits_2_naming_it(tmp_path: Path) -> None:
    """`import payouts --sql`: a UTF-16 query file is named, as the nightly import names it."""
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1", encoding="utf-16")
    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"}
    args = ["import", "payouts", "--sql", str(query), "--source-url", f"sqlite:///{tmp_path}/m.db"]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 2, result.output
    assert f"{query}: cannot read the query" in result.output
