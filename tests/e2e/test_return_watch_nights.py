"""Returns stay watched: a confirmed return that later answers another amount,
or 404, is seen on its return watch day, and the payout's returned amount follows the provider.

Each night is a real `recon run` over the sandbox and the receiver, served on loopback.
"""

from __future__ import annotations

from pathlib import Path

from recon.jsonparse import loads
from tests.e2e.run_support import (
    Spec,
    World,
    create_payouts,
    explain,
    import_payouts,
    read_csv,
    recon,
    recon_env,
    run_night,
    served_world,
)

DAY = 86400


def _changed(out: Path) -> dict[str, dict[str, str]]:
    rows = read_csv(out / "exceptions.csv")
    return {r["transaction_id"]: r for r in rows if r["exception"] == "return_changed"}


def _returned(out: Path) -> dict[str, tuple[str, str]]:
    """Per payout: (outcome, returned_amount)."""
    rows = read_csv(out / "payouts.csv")
    return {r["transaction_id"]: (r["outcome"], r["returned_amount"]) for r in rows}


def _return_of(world: World, payout_id: str) -> str:
    listed = loads(world.admin.get("/sandbox/transactions").content)["transactions"]
    [found] = [
        t["id"] for t in listed if t["type"] == 13 and t["related_transaction_id"] == payout_id
    ]
    return str(found)


def test_a_confirmed_return_that_changes_or_disappears_is_return_changed_on_its_watch_day(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Two 14.01 payouts settle and are returned (confirmed on night 1). The sandbox then answers
    one return as 10.00 and the other as 404: not seen on day 1 (no check due), seen on day 2
    (return_changed, the returned amounts follow the provider, the gone one no longer counts).
    A person resolves one; the provider changes it again, and its next watch day reopens it."""
    with served_world(empty_db_url, settle_after=30) as world:
        env = recon_env(empty_db_url, world.sandbox_url, return_watch_schedule="2,4,6")
        world.advance_to_hour(1)
        smaller, gone = create_payouts(world, [Spec("14.01"), Spec("14.01")])
        import_payouts(env, tmp_path, [smaller.csv_row(), gone.csv_row()])
        world.advance(120)  # settled after 30 s, returned 60 s later
        first = run_night(env, tmp_path, "night1", world.now())
        both = {
            smaller.transaction_id: ("returned", "14.01"),
            gone.transaction_id: ("returned", "14.01"),
        }
        assert _returned(first) == both
        assert _changed(first) == {}

        r_smaller = _return_of(world, smaller.transaction_id)
        r_gone = _return_of(world, gone.transaction_id)
        world.post(f"/sandbox/transactions/{r_smaller}/change", {"amount": "10.00"})
        world.post(f"/sandbox/transactions/{r_gone}/change", {"gone": True})

        world.advance(DAY)  # day 1: no return watch check is due
        second = run_night(env, tmp_path, "night2", world.now())
        assert _changed(second) == {}
        assert _returned(second) == both

        world.advance(DAY)  # day 2: both returns are asked about again
        third = run_night(env, tmp_path, "night3", world.now())
        changed = _changed(third)
        assert set(changed) == {r_smaller, r_gone}
        assert changed[r_smaller]["status"] == "new"
        assert changed[r_smaller]["detail"].startswith("confirmed 14.01 EUR on ")
        assert changed[r_smaller]["detail"].endswith(", now 10.00 EUR")
        assert changed[r_gone]["detail"].endswith(", now 404 not found")
        assert _returned(third) == {
            smaller.transaction_id: ("returned", "10.00"),
            gone.transaction_id: ("settled", "0.00"),
        }

        resolved = recon(env, "exceptions", "resolve", changed[r_smaller]["exception_id"],
                         "--note", "bank kept 4.01", "--by", "anna", cwd=tmp_path)  # fmt: skip
        assert resolved.returncode == 0, explain(resolved)
        world.post(f"/sandbox/transactions/{r_smaller}/change", {"amount": "8.00"})

        world.advance(DAY)  # day 3: nothing due; the resolution stands, the 404 stays counted
        fourth = run_night(env, tmp_path, "night4", world.now())
        assert _changed(fourth)[r_smaller]["status"] == "resolved"
        assert _changed(fourth)[r_gone]["status"] == "persisting"
        assert _returned(fourth)[gone.transaction_id] == ("settled", "0.00")

        world.advance(DAY)  # day 4: asked again; the new answer reopens the resolved case
        fifth = run_night(env, tmp_path, "night5", world.now())
        again = _changed(fifth)[r_smaller]
        assert again["status"] == "new"
        assert again["exception_id"] == changed[r_smaller]["exception_id"]
        assert again["detail"].endswith(", now 8.00 EUR")
        assert _returned(fifth)[smaller.transaction_id] == ("returned", "8.00")
