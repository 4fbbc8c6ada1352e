"""The spring-forward night in Europe/Stockholm: a failure seen one morning is asked about the next.

The runs are at 06:00 local. On the night the clocks go forward (2027-03-28, or the next such night
after today) the second run comes 23 hours after the first. Schedule days are calendar days in
RECON_TIMEZONE, so the failed payout's day-1 check is due from midnight and that run asks about it
(24-hour days would leave it for the following night). The schedules are the defaults.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.run_support import (
    Payout,
    Spec,
    World,
    by_id,
    create_payouts,
    explain,
    read_csv,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)
from tests.e2e.test_watch_nights import polls

STOCKHOLM = ZoneInfo("Europe/Stockholm")
CONFIRMED_BEFORE_RUN = 600  # the bank's confirmation of a failed payout settles 5 minutes on


def spring_forward_after(moment: datetime) -> date:
    """The first day after ``moment`` whose night Stockholm's clocks go forward."""
    day = moment.astimezone(STOCKHOLM).date() + timedelta(days=2)
    while True:
        before = datetime.combine(day - timedelta(days=1), time(12), STOCKHOLM)
        after = datetime.combine(day, time(12), STOCKHOLM)
        if after.astimezone(UTC) - before.astimezone(UTC) < timedelta(days=1):
            return day
        day += timedelta(days=1)


@dataclass
class Nights:
    tmp: Path
    world: World
    payouts: dict[str, Payout]
    runs: dict[str, Any]
    first: datetime
    second: datetime

    def row(self, night: str, role: str) -> dict[str, str]:
        rows = by_id(read_csv(self.tmp / night / "payouts.csv"))
        return rows[self.payouts[role].transaction_id]


def _advance_to(world: World, moment: datetime) -> None:
    """Move the sandbox clock to ``moment`` (it only moves forward)."""
    seconds = moment.timestamp() - float(world.now())
    assert seconds > 0, f"the sandbox clock is already past {moment}"
    world.advance(int(seconds))


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    """06:00 the day before the spring-forward night, and 06:00 after it: 23 hours apart."""
    tmp = tmp_path_factory.mktemp("dst")
    database_url = f"sqlite:///{tmp / 'recon.db'}"
    with served_world(database_url) as world:
        env = recon_env(database_url, world.sandbox_url, timezone="Europe/Stockholm")
        roles = {"failed": Spec("12.01"), "settled": Spec("20.00")}
        made = dict(zip(roles, create_payouts(world, list(roles.values())), strict=True))
        export = write_payouts_csv(tmp / "payouts.csv", [p.csv_row() for p in made.values()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp).returncode == 0
        day = spring_forward_after(datetime.fromtimestamp(float(world.now()), UTC))
        first = datetime.combine(day - timedelta(days=1), time(6), STOCKHOLM).astimezone(UTC)
        second = datetime.combine(day, time(6), STOCKHOLM).astimezone(UTC)
        assert second - first == timedelta(hours=23)  # in UTC: same-zone subtraction is wall time
        runs: dict[str, Any] = {}
        for name, moment in (("night1", first), ("night2", second)):
            _advance_to(world, moment - timedelta(seconds=CONFIRMED_BEFORE_RUN))
            if name == "night2":  # the bank confirms the failed payout overnight
                world.post(f"/sandbox/transactions/{made['failed'].transaction_id}/confirm")
            _advance_to(world, moment)
            result = recon(env, "run", "--as-of", moment.isoformat(), "--no-email", "--out",
                           str(tmp / name), cwd=tmp)  # fmt: skip
            assert result.returncode == 0, explain(result)
            runs[name] = result
        yield Nights(tmp, world, made, runs, first, second)


def test_the_first_run_sees_the_payout_failed(nights: Nights) -> None:
    """06:00 CET the day before: the 12.01 payout is failed, the other settled."""
    assert nights.row("night1", "failed")["outcome"] == "failed"
    assert nights.row("night1", "settled")["outcome"] == "settled"


def test_the_run_23_hours_later_asks_about_the_failed_payout(nights: Nights) -> None:
    """06:00 CEST after the spring-forward night: the failed payout's day-1 check is due, the
    settled one's return watch (day 6 first) is not; the bank's overnight confirmation is seen."""
    assert polls(nights.runs["night2"]) == {"watch": 1}
    row = nights.row("night2", "failed")
    assert (row["previous_outcome"], row["outcome"]) == ("failed", "settled")
    assert "late_settlement" in row["exceptions"]
