"""One refused id is one payout's problem: a night over the sandbox where the
provider refuses one payout's id to this merchant account goes on; a night where it refuses them
all (a revoked key) stops with one line.

Each night is a real `recon run` over the sandbox served on loopback, on SQLite: a refusal is the
provider's answer and the client's reading of it, the same whatever the database.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.run_support import (
    Spec,
    by_id,
    create_payouts,
    explain,
    read_csv,
    recon,
    recon_env,
    served_world,
    write_payouts_csv,
)

REFUSED = "the provider refuses this id to this merchant account"


@pytest.mark.parametrize("status", [403, 401])
def test_a_night_where_one_id_is_refused_goes_on_and_flags_that_payout(
    tmp_path: Path, status: int
) -> None:
    """One of four payouts refused (403, or 401 with a fresh token): exit 3, reports written, that
    payout fetch_failed saying the provider refuses it, the three others reconciled."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env = recon_env(database_url, world.sandbox_url)
        payouts = create_payouts(world, [Spec(a) for a in ("10.00", "12.01", "20.00", "30.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        world.advance(400)  # past settle-after: the good ones are final
        refused = payouts[2].transaction_id
        world.post(f"/sandbox/transactions/{refused}/refuse", {"status": status})

        out = tmp_path / "night"
        night = recon(env, "run", "--as-of", world.now(), "--no-email", "--out", str(out),
                      cwd=tmp_path)  # fmt: skip
        assert night.returncode == 3, explain(night)

        rows = by_id(read_csv(out / "payouts.csv"))
        outcomes = {p.transaction_id: rows[p.transaction_id]["outcome"] for p in payouts}
        assert outcomes == {
            payouts[0].transaction_id: "settled",
            payouts[1].transaction_id: "failed",
            refused: "unchecked",
            payouts[3].transaction_id: "settled",
        }
        findings = [r for r in read_csv(out / "exceptions.csv") if r["exception"] == "fetch_failed"]
        assert [(r["transaction_id"], r["detail"].split(";")[0]) for r in findings] == [
            (refused, REFUSED)
        ]
        assert (out / "report.html").is_file()


def test_a_night_where_every_id_is_refused_stops_with_one_line(tmp_path: Path) -> None:
    """Every id refused while authorizing works (a revoked key): past RECON_REFUSED_LIMIT (2
    here) and more than half the ids asked, the run stops: exit 1, one line, no reports."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env = recon_env(database_url, world.sandbox_url, refused_limit="2", concurrency="1")
        payouts = create_payouts(world, [Spec("10.00")] * 5)
        export = write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in payouts])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        for payout in payouts:
            world.post(f"/sandbox/transactions/{payout.transaction_id}/refuse", {"status": 403})

        out = tmp_path / "night"
        night = recon(env, "run", "--as-of", world.now(), "--no-email", "--out", str(out),
                      cwd=tmp_path)  # fmt: skip
        assert night.returncode == 1, explain(night)
        lines = [line for line in night.stderr.splitlines() if line.startswith("recon: error:")]
        assert len(lines) == 1, explain(night)
        assert "Traceback" not in night.stderr
        assert "refused 3 of the 3 ids" in lines[0]
        assert "RECON_REFUSED_LIMIT (2)" in lines[0]
        assert not (out / "payouts.csv").exists()
