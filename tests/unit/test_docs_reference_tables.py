"""The guides' tables are reference (what a command does, what a value means): what a test caught
before and what holds now, with its measurements, is docs/reliability.md's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A row telling a test's story: "Before: … Now: …", how it was tested, or the test that shows it.
_STORY = re.compile(r"\bBefore:|\bNow:|\btested\b|`tests/[\w/]+\.py`")


@pytest.mark.parametrize("guide", ["finance.md", "operations.md"])
def test_the_guides_tables_hold_no_before_and_after_rows(guide: str) -> None:
    """Every table row of the guide is reference; such rows live in reliability.md."""
    rows = [
        line
        for line in (DOCS / guide).read_text(encoding="utf-8").splitlines()
        if line.startswith("|") and _STORY.search(line)
    ]
    assert rows == []


def test_reliability_keeps_the_rows_the_guides_gave_up() -> None:
    """The rows that were in the guides' command tables are in reliability.md."""
    text = (DOCS / "reliability.md").read_text(encoding="utf-8")
    for start in (
        "| `recon export payouts` (20,000 payouts, CSV and xlsx) stopped by SIGTERM half-way",
        "| `recon exceptions apply` on a 1 MB workbook inflating to 288 MB",
        "| `recon report --out` into a file, or onto a full disk",
        "| `recon config check` with `RECON_SMTP_SECURITY=none` and a user",
    ):
        assert f"\n{start}" in text, start
