"""Two payouts of one intent (issue 25, item 3): flagged, resolved as intended, reopened by a third.

Each night is a real `recon run` over the sandbox, served on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    read_csv,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)

HOUR = 3600
FLAG = "possible_duplicate"


def _night(env: dict[str, str], tmp: Path, name: str, as_of: str) -> dict[str, dict[str, str]]:
    out = tmp / name
    result = recon(env, "run", "--as-of", as_of, "--no-email", "--out", str(out), cwd=tmp)
    assert result.returncode == 0, explain(result)
    rows = read_csv(out / "exceptions.csv")
    return {r["transaction_id"]: r for r in rows if r["exception"] == FLAG}


def _import(env: dict[str, str], tmp: Path, rows: list[dict[str, str]], name: str) -> None:
    export = write_payouts_csv(tmp / name, rows)
    result = recon(env, "import", "payouts", str(export), cwd=tmp)
    assert result.returncode == 0, explain(result)


def test_two_settled_payouts_to_one_account_are_flagged_until_resolved_and_reopen_with_a_third(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Same amount and bank account, ten minutes apart, both settled: each is possible_duplicate
    naming the other; resolved as intended it stays resolved night after night (nobody asks about
    the settled payouts again); a third payout joining reopens both and names all.

    The sandbox answers a repeated merchant_reference and amount with the first payout's id (the
    interface's idempotency rule), so a retry at this provider carries a new reference: the
    account and amount are what pair them (the reference rule is tested in the core)."""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        (first,) = create_payouts(world, [Spec("20.00", reference="INV-TWICE")])
        again = Spec("20.00", reference="INV-TWICE-retry", bank_account_id=first.bank_account_id)
        world.advance(600)
        (second,) = create_payouts(world, [again], prefix="q")
        world.advance(3600)
        _import(env, tmp_path, [first.csv_row(), second.csv_row()], "night1.csv")
        a, b = first.transaction_id, second.transaction_id

        night1 = _night(env, tmp_path, "night1", world.now())
        assert set(night1) == {a, b}
        assert night1[a]["detail"].startswith(f"also settled or in flight: {b} (")
        assert night1[b]["detail"].startswith(f"also settled or in flight: {a} (")
        assert {r["status"] for r in night1.values()} == {"new"}

        for row in night1.values():
            resolved = recon(env, "exceptions", "resolve", row["exception_id"],
                             "--note", "intended: two instalments", "--by", "anna",
                             cwd=tmp_path)  # fmt: skip
            assert resolved.returncode == 0, explain(resolved)
        world.advance(2 * HOUR)
        assert {r["status"] for r in _night(env, tmp_path, "night2", world.now()).values()} == {
            "resolved"
        }
        world.advance(2 * HOUR)
        assert _night(env, tmp_path, "night3", world.now()) == {}  # still resolved: not listed
        listed = recon(env, "exceptions", "list", "--status", "open", "--format", "json",
                       cwd=tmp_path)  # fmt: skip
        assert FLAG not in {c["exception"] for c in json.loads(listed.stdout)}

        third_spec = Spec("20.00", reference="INV-THIRD", bank_account_id=first.bank_account_id)
        (third,) = create_payouts(world, [third_spec], prefix="r")
        world.advance(3600)
        _import(env, tmp_path, [third.csv_row()], "night4.csv")
        c = third.transaction_id
        night4 = _night(env, tmp_path, "night4", world.now())
        assert set(night4) == {a, b, c}
        assert {r["status"] for r in night4.values()} == {"new"}
        assert night4[a]["exception_id"] == night1[a]["exception_id"]
        assert night4[a]["detail"].startswith(
            f"also settled or in flight: {';'.join(sorted([b, c]))} ("
        )
