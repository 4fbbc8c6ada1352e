"""Forged returned-funds claims through the unauthenticated receiver: listed every night until a
person resolves them, asked about on a thinning schedule, then no longer asked; a cap per run; a
repeated notification after a resolution opens the claim again."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Payout,
    Spec,
    World,
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
FORGED = [f"forged-{i}" for i in range(5)]


@dataclass
class Abuse:
    tmp: Path
    world: World
    target: Payout
    nights: dict[str, Any]

    def unverified(self, name: str, field: str = "status") -> dict[str, str]:
        rows = read_csv(self.tmp / name / "exceptions.csv")
        return {
            r["transaction_id"]: r[field] for r in rows if r["exception"] == "return_unverified"
        }


def returns_polled(result: Any) -> int:
    found = re.search(r"returns (\d+)", result.stdout)
    return int(found.group(1)) if found else 0


def forge(world: World, target: Payout, return_id: str, amount: str = "75.50") -> None:
    body = {"transaction_id": return_id, "original_transaction_id": target.transaction_id,
            "notification_type": "RETURNED_TRANSACTION", "merchant_id": "sandbox-merchant",
            "amount": Decimal(amount)}  # fmt: skip
    assert post_notification(world.receiver_url or "", body) == "stored"


@pytest.fixture(scope="module")
def abuse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Abuse]:
    tmp = tmp_path_factory.mktemp("forged")
    database_url = f"sqlite:///{tmp / 'recon.db'}"
    with served_world(database_url) as world:
        env = recon_env(
            database_url,
            world.sandbox_url,
            claim_poll_cap="3",
            **DAILY_SCHEDULES,
        )
        world.advance_to_hour(1)  # the half-day run stays on the first run's calendar day
        (target,) = create_payouts(world, [Spec("30.00")])
        import_payouts(env, tmp, [target.csv_row()])
        a = Abuse(tmp, world, target, {})

        def run(name: str) -> None:
            result = recon(env, "run", "--as-of", world.now(), "--out", str(tmp / name), cwd=tmp)
            assert result.returncode == 0, explain(result)
            a.nights[name] = result

        for return_id in FORGED:
            forge(world, target, return_id)
        run("first")  # 3 of 5 asked (the cap), all 5 reported once
        run("again")  # the other 2 asked; none reported again
        world.advance(DAY // 2)
        run("half_day")  # nothing due
        world.advance(DAY)
        run("day1")  # day 1 of the schedule: 3 asked
        world.advance(40 * DAY)
        run("day41")  # the catch-up check of each (days 2 onwards), once: 3 (the cap)
        world.advance(DAY)
        run("day42")  # the other 2
        world.advance(DAY)
        run("day43")  # the watch is over: never asked again
        case = a.unverified("first", "exception_id")[FORGED[0]]
        resolved = recon(env, "exceptions", "resolve", case, "--note", "forged", cwd=tmp)
        assert resolved.returncode == 0, explain(resolved)
        run("resolved")  # listed once as resolved, then its case ends (recon no longer asks)
        run("after")
        # The forger tries again (an identical body is the same notification, stored once).
        forge(world, target, FORGED[0], amount="75.51")
        run("repeated")
        yield a


def test_each_forged_claim_stays_listed_until_a_person_resolves_it(abuse: Abuse) -> None:
    """The run after the notifications lists all five as new; every later run lists them as
    persisting, asked about or not, until a person resolves one (listed once, then gone)."""
    assert abuse.unverified("first") == dict.fromkeys(FORGED, "new")
    for name in ("again", "half_day", "day1", "day41", "day42", "day43"):
        assert abuse.unverified(name) == dict.fromkeys(FORGED, "persisting"), name
    assert abuse.unverified("resolved") == {
        FORGED[0]: "resolved",
        **dict.fromkeys(FORGED[1:], "persisting"),
    }
    assert abuse.unverified("after") == dict.fromkeys(FORGED[1:], "persisting")


def test_a_cap_limits_how_many_claims_a_run_asks_about(abuse: Abuse) -> None:
    """claim_poll_cap=3: three asked, two counted as left for the next run, which asks them."""
    first = abuse.nights["first"]
    assert returns_polled(first) == 3
    assert "2 unverified return claims left for the next run" in first.stdout
    assert returns_polled(abuse.nights["again"]) == 2


def test_claims_are_asked_about_on_a_thinning_schedule_then_dropped(abuse: Abuse) -> None:
    """Not every night: nothing half a day on, some on day 1, nothing after the watch ends."""
    assert returns_polled(abuse.nights["half_day"]) == 0
    assert returns_polled(abuse.nights["day1"]) == 3
    assert returns_polled(abuse.nights["day41"]) == 3
    assert returns_polled(abuse.nights["day42"]) == 2
    assert returns_polled(abuse.nights["day43"]) == 0


def test_a_repeated_notification_reopens_a_resolved_claim(abuse: Abuse) -> None:
    """The forger's second post after the resolution: asked about and listed as new again."""
    repeated = abuse.unverified("repeated")
    assert repeated == {FORGED[0]: "new", **dict.fromkeys(FORGED[1:], "persisting")}
    assert returns_polled(abuse.nights["repeated"]) == 1
