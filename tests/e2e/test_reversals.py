"""What changes after the fact (issue 25): a payout settled on one night and failed on a later watch
check is reversed_after_settlement; an answer about another id is wrong_transaction.

Each night is a real `recon run` over the sandbox, served on loopback.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from tests.e2e.run_support import (
    DAILY_RETURN_WATCH_SCHEDULE,
    Spec,
    by_id,
    create_payouts,
    findings_of,
    read_csv,
    recon,
    recon_env,
    run_night,
    served_world,
    write_payouts_csv,
)

DAY = 86400


def test_a_payout_settled_on_night_one_and_failed_on_a_later_check_is_a_reversal(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Settled on night 1; the bank reverses it; the return watch's check on night 2 finds it
    failed: reversed_after_settlement with the settled time and the new state, kept on night 3."""
    with served_world(empty_db_url) as world:
        env = recon_env(
            empty_db_url,
            world.sandbox_url,
            watch_schedule="1,2,3,4,5,6,7,30",
            return_watch_schedule=DAILY_RETURN_WATCH_SCHEDULE,
        )
        world.advance_to_hour(1)  # nights on whole calendar days apart: each check falls due
        (paid,) = create_payouts(world, [Spec("10.00")])
        tid = paid.transaction_id
        export = write_payouts_csv(tmp_path / "payouts.csv", [paid.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        world.advance(3600)
        night1_at = world.now()
        night1 = run_night(env, tmp_path, "night1", night1_at)
        assert by_id(read_csv(night1 / "payouts.csv"))[tid]["outcome"] == "settled"

        world.post(f"/sandbox/transactions/{tid}/reverse",
                   {"state": 3, "error_code": "bank_rejected_transaction"})  # fmt: skip
        world.advance(DAY)
        night2 = run_night(env, tmp_path, "night2", world.now())
        row = by_id(read_csv(night2 / "payouts.csv"))[tid]
        assert (row["previous_outcome"], row["outcome"]) == ("settled", "failed")
        assert row["exceptions"] == "reversed_after_settlement"
        assert "before paying out again" not in row["action"]
        finding = findings_of(night2)[(tid, "reversed_after_settlement")]
        seen = datetime.fromtimestamp(float(night1_at), UTC).strftime("%Y-%m-%d %H:%M UTC")
        assert finding["detail"] == (
            f"seen settled on {seen}, now failed, error code bank_rejected_transaction"
        )
        assert finding["status"] == "new"

        world.advance(DAY)  # the failed payout's watch asks again: still failed, still reversed
        night3 = findings_of(run_night(env, tmp_path, "night3", world.now()))
        kept = night3[(tid, "reversed_after_settlement")]
        assert kept["status"] == "persisting"
        assert kept["exception_id"] == finding["exception_id"]


def test_an_answer_about_another_id_is_a_wrong_transaction_until_a_right_answer_comes(
    empty_db_url: str, tmp_path: Path
) -> None:
    """The sandbox answers for A with B's transaction: A stays unchecked with wrong_transaction
    naming B (not fetch_failed); when the answer is right again, A settles and it clears."""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        asked, other = create_payouts(world, [Spec("10.00"), Spec("11.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [asked.csv_row(), other.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        world.advance(3600)
        a, b = asked.transaction_id, other.transaction_id
        world.post(f"/sandbox/transactions/{a}/answer", {"answer_of": b})
        night1 = run_night(env, tmp_path, "night1", world.now(), code=3)
        rows = by_id(read_csv(night1 / "payouts.csv"))
        assert (rows[a]["outcome"], rows[a]["exceptions"]) == ("unchecked", "wrong_transaction")
        assert rows[b]["outcome"] == "settled"
        finding = findings_of(night1)[(a, "wrong_transaction")]
        assert finding["detail"] == f"the provider answered about {b}; kept outcome unchecked"
        assert re.search(r"ask the provider", finding["action"])

        world.post(f"/sandbox/transactions/{a}/answer", {})
        world.advance(600)
        night2 = run_night(env, tmp_path, "night2", world.now())
        assert by_id(read_csv(night2 / "payouts.csv"))[a]["outcome"] == "settled"
        assert findings_of(night2)[(a, "wrong_transaction")]["status"] == "cleared"
