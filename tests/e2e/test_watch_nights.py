"""Nights weeks apart, with runs skipped: the watch sees what the bank does long after the payout.

A failed payout the bank confirms on day 4, a settled payout whose return's notification never
comes, and a payout the provider sends a callback about after its watch has ended: each is found
by the schedule, and settled payouts are not asked about every night.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Payout,
    Spec,
    World,
    by_id,
    create_payouts,
    explain,
    import_payouts,
    post_notification,
    read_csv,
    recon,
    recon_env,
    served_world,
)

DAY = 86400


@dataclass
class Watched:
    tmp: Path
    world: World
    env: dict[str, str]
    payouts: dict[str, Payout]
    nights: dict[str, Any]

    def run(self, name: str) -> Any:
        result = recon(self.env, "run", "--as-of", self.world.now(), "--no-email", "--out",
                       str(self.tmp / name), cwd=self.tmp)  # fmt: skip
        assert result.returncode == 0, explain(result)
        self.nights[name] = result
        return result

    def rows(self, name: str) -> dict[str, dict[str, str]]:
        return by_id(read_csv(self.tmp / name / "payouts.csv"))

    def row(self, name: str, role: str) -> dict[str, str]:
        return self.rows(name)[self.payouts[role].transaction_id]


def polls(result: Any) -> dict[str, int]:
    """The ids a run asked about per reason, from its closing line."""
    found = re.search(r"polled (\d+) in [^(]*\(([^)]*)\)", result.stdout)
    assert found, result.stdout
    reasons = found.group(2).split("; ", 1)[1] if "; " in found.group(2) else ""
    counted = {k: int(v) for k, v in (p.rsplit(" ", 1) for p in reasons.split(", ") if p)}
    assert sum(counted.values()) == int(found.group(1)), result.stdout
    return counted


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Watched]:
    """Night one, an hour on, half a day on, then day four, then three runs on day 45."""
    tmp = tmp_path_factory.mktemp("watch")
    database_url = f"sqlite:///{tmp / 'recon.db'}"
    with served_world(database_url) as world:
        env = recon_env(
            database_url,
            world.sandbox_url,
            **DAILY_SCHEDULES,
            report_days="400",
        )
        world.advance_to_hour(1)  # the half-day run stays on night two's calendar day
        roles = {"failed": Spec("12.01"), "lost_return": Spec("20.00"), "hinted": Spec("21.00"),
                 "quiet": Spec("22.00")}  # fmt: skip
        made = dict(zip(roles, create_payouts(world, list(roles.values())), strict=True))
        import_payouts(env, tmp, [p.csv_row() for p in made.values()])
        w = Watched(tmp, world, env, made, {})
        w.run("night1")
        world.advance(3600)  # everything but 12.01 has settled
        w.run("night2")
        world.advance(DAY // 2)
        w.run("night2b")  # half a day on: nothing is due
        world.advance(DAY)  # day 1.5: the bank returns a settled payout, and no one is told
        world.post(f"/sandbox/transactions/{made['lost_return'].transaction_id}/return",
                   {"notify": False})  # fmt: skip
        world.advance(2 * DAY + DAY // 2)  # day 4: the bank confirms the failed payout after all
        world.post(f"/sandbox/transactions/{made['failed'].transaction_id}/confirm")
        world.advance(600)  # 5, then settled
        w.run("night4")  # the runs of days 2 and 3 never happened
        world.advance(41 * DAY)  # day 45: every watch of a settled payout is over
        w.run("night45")  # catches up with the checks days 5 to 30 would have made, once
        posted = post_notification(
            world.receiver_url or "",
            {"merchant_id": "sandbox-merchant", "transaction_id": made["hinted"].transaction_id,
             "transaction_state": 6},
        )  # fmt: skip
        assert posted == "stored"
        w.run("night45b")
        w.run("night45c")
        yield w


def test_a_failed_payout_confirmed_by_the_bank_on_day_four_is_seen_settled(
    watched: Watched,
) -> None:
    """The watch outlasts the old three-day cut-off: settled, late_settlement, on day four."""
    row = watched.row("night4", "failed")
    assert (row["previous_outcome"], row["outcome"]) == ("failed", "settled")
    assert "late_settlement" in row["exceptions"]
    assert polls(watched.nights["night4"]).get("watch") == 1


def test_a_return_whose_notification_never_came_is_found_by_the_return_watch(
    watched: Watched,
) -> None:
    """The settled payout's answer names its type-13 return; the return is confirmed by polling."""
    row = watched.row("night4", "lost_return")
    assert (row["previous_outcome"], row["outcome"]) == ("settled", "returned")
    returns = read_csv(watched.tmp / "night4" / "returns.csv")
    lost = watched.payouts["lost_return"].transaction_id
    found = [r for r in returns if r["original_transaction_id"] == lost]
    assert [(r["confirmed"], r["notified"]) for r in found] == [("true", "false")]
    asked = polls(watched.nights["night4"])
    assert asked.get("return watch") == 3
    assert asked.get("returns") == 1


def test_settled_payouts_are_not_asked_about_every_night(watched: Watched) -> None:
    """Half a day after night two nothing is due: the run asks the provider about nothing."""
    assert polls(watched.nights["night2b"]) == {}
    assert "polled 0 in" in watched.nights["night2b"].stdout


def test_a_callback_makes_the_next_run_ask_about_a_payout_whatever_its_schedule(
    watched: Watched,
) -> None:
    """Day 45, past the return watch: only the payout the callback named is asked about, once."""
    assert polls(watched.nights["night45c"]) == {}
    assert polls(watched.nights["night45b"]) == {"callback hint": 1}
    assert watched.row("night45b", "hinted")["outcome"] == "settled"  # a hint is not an outcome


def test_nights_without_a_run_are_caught_up_with_one_check_each(watched: Watched) -> None:
    """Day 45 after day 4: each settled payout is asked once (its day-5 check), and so is the
    return confirmed on day 4 (its own return watch, counted from its confirmation), then never
    again."""
    assert polls(watched.nights["night45"]) == {"return watch": 4, "returns": 1}
