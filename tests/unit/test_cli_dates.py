"""Date options speak in dates: `--until 2026-12-25`, and a plain message otherwise."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import click
import pytest
from click.testing import CliRunner

from recon.cli import main
from recon.clitypes import DATE
from recon.errors import InputError
from recon.ops.fees import month_bounds


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


@pytest.mark.parametrize("text", ["1969-12-31", "0001-01-01", "9999-12-31"])
def test_a_day_no_payout_can_have_is_refused_naming_the_range(text: str) -> None:
    """Before the epoch the provider's times count from, or at the calendar's end: no such
    settlement, balance or snooze day; refused before anything reads it."""
    with pytest.raises(click.BadParameter, match="a day from 1970-01-01 to 9998-12-31"):
        DATE.convert(text, None, None)


@pytest.mark.parametrize(
    "args",
    [
        ["balance", "record", "--date", "9999-12-31", "--currency", "EUR", "--closing", "1.00"],
        ["provider-export", "pull", "--settled-from", "1969-12-30", "--settled-to", "1969-12-31"],
        ["import", "provider-export", "x.csv", "--settled-from", "9999-12-31",
         "--settled-to", "9999-12-31"],
    ],
)  # fmt: skip
def test_every_date_option_refuses_a_day_out_of_range_with_exit_2(
    args: list[str], tmp_path: Path
) -> None:
    """The usage error names the option; no store is made."""
    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 2, result.output
    assert "a day from 1970-01-01 to 9998-12-31" in result.output
    assert not (tmp_path / "recon.db").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["report", "--as-of", "0001-01-01T00:00:00+14:00"], "out of range for a time"),
        (["run", "--dry-run", "--as-of", "0001-01-01"], "a time from 1970-01-01 to 9998-12-31"),
        (["export", "payouts", "--since", "9999-12-31T23:59:59-12:00"], "out of range for a time"),
        (["export", "payouts", "--since", "1969-07-20T20:17:00Z"], "a time from 1970-01-01"),
    ],
)
def test_a_time_option_outside_the_days_recon_knows_exits_2(
    args: list[str], said: str, tmp_path: Path
) -> None:
    """--as-of and --since: a usage error naming the option, before the store is opened."""
    env = {"RECON_DATABASE_URL": f"sqlite:///{tmp_path / 'recon.db'}"}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert f"Invalid value for {args[-2]}:" in result.output  # the option named
    assert not (tmp_path / "recon.db").exists()


@pytest.mark.parametrize("month", ["0000-01", "9999-12", "1969-12", "2026-13", "11/2026"])
def test_a_month_outside_the_days_recon_knows_is_a_usage_error(month: str) -> None:
    """`recon fees --month`: its months lie within the days the date options take."""
    with pytest.raises(InputError, match=r"--month: give a month as YYYY-MM.*1970-01 to 9998-12"):
        month_bounds(month, ZoneInfo("Europe/Oslo"))
    assert month_bounds("1970-01", ZoneInfo("UTC"))[0] == datetime(
        1970, 1, 1, tzinfo=ZoneInfo("UTC")
    )
