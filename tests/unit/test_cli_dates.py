"""Date options speak in dates: `--until 2026-12-25`, and a plain message otherwise."""

from __future__ import annotations

from datetime import date

import click
import pytest
from click.testing import CliRunner

from recon.cli import main
from recon.clitypes import DATE


@pytest.mark.parametrize(
    ("text", "day"), [("2026-12-25", date(2026, 12, 25)), (" 2026-02-28 ", date(2026, 2, 28))]
)
def test_a_date_like_2026_12_25_is_read(text: str, day: date) -> None:
    """The ISO form, spaces around it ignored."""
    assert DATE.convert(text, None, None) == day


@pytest.mark.parametrize("text", ["25/12/2026", "2026-02-30", "2026-12-25T10:00", "tomorrow", ""])
def test_anything_else_says_what_a_date_looks_like(text: str) -> None:
    """No strftime jargon: 'expected a date like 2026-12-25', with what was given."""
    with pytest.raises(click.BadParameter, match="expected a date like 2026-12-25"):
        DATE.convert(text, None, None)


def test_snooze_until_a_day_month_year_date_exits_2_with_the_expected_form() -> None:
    """`recon exceptions snooze E1-1 --until 25/12/2026`: exit 2, the message names the form."""
    result = CliRunner().invoke(
        main, ["exceptions", "snooze", "E1-1", "--note", "x", "--until", "25/12/2026"]
    )
    assert result.exit_code == 2
    assert "expected a date like 2026-12-25, got '25/12/2026'" in result.output
    assert "%Y" not in result.output
