"""Nothing forgotten: a finding stays until a person or the facts close it, a failed
fetch spends no evidence, and a run's "now" never goes back.

Each night is a real `recon run` over the sandbox and the receiver, served on loopback.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    findings_of,
    post_notification,
    read_csv,
    recon,
    recon_env,
    run_night,
    served_world,
    write_payouts_csv,
)

DAY = 86400


def _open_cases(env: dict[str, str], tmp: Path) -> list[dict[str, str]]:
    listed = recon(env, "exceptions", "list", "--status", "open", "--format", "json", cwd=tmp)
    assert listed.returncode == 0, explain(listed)
    cases: list[dict[str, str]] = json.loads(listed.stdout)
    return cases


def _claim(receiver_url: str, return_id: str, original_id: str) -> None:
    body = {"transaction_id": return_id, "original_transaction_id": original_id,
            "notification_type": "RETURNED_TRANSACTION", "merchant_id": "sandbox-merchant",
            "amount": Decimal("12.50")}  # fmt: skip
    assert post_notification(receiver_url, body) == "stored"


def test_a_finding_nobody_acted_on_is_listed_each_night_until_a_person_resolves_it(
    empty_db_url: str, tmp_path: Path
) -> None:
    """An unconfirmed claim and a claim on a payout we do not have stay in Needs action, the
    mailed page and the queue the next night; `exceptions resolve` closes one, the other stays.
    (Night after night: tests/unit/test_decide.py, at decide's entry.)"""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        (target,) = create_payouts(world, [Spec("30.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [target.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        _claim(world.receiver_url or "", "forged-return", target.transaction_id)
        _claim(world.receiver_url or "", "orphan-return", "not-our-payout")
        unverified = ("forged-return", "return_unverified")
        orphan = ("orphan-return", "return_without_payout")

        first = findings_of(run_night(env, tmp_path, "night1", world.now()))
        assert first[unverified]["status"] == "new"
        assert first[orphan]["status"] == "new"

        world.advance(DAY)
        out = run_night(env, tmp_path, "night2", world.now())
        found = findings_of(out)
        assert found[unverified]["status"] == "persisting"
        assert found[orphan]["status"] == "persisting"
        assert found[unverified]["exception_id"] == first[unverified]["exception_id"]
        need = sum(r["status"] in ("new", "persisting") for r in found.values())
        assert need == len(_open_cases(env, tmp_path))
        html = (out / "report.html").read_text()
        assert re.search(rf"\b{need} problems? needs? action", html), need

        resolved = recon(env, "exceptions", "resolve", first[orphan]["exception_id"],
                         "--note", "not ours", "--by", "anna", cwd=tmp_path)  # fmt: skip
        assert resolved.returncode == 0, explain(resolved)
        world.advance(DAY)
        third = findings_of(run_night(env, tmp_path, "night3", world.now()))
        assert third[orphan]["status"] == "resolved"
        assert third[unverified]["status"] == "persisting"
        still = {(c["item_id"], c["exception"]) for c in _open_cases(env, tmp_path)}
        assert unverified in still
        assert orphan not in still


def test_a_fetch_that_fails_after_a_callback_leaves_the_payout_due_for_the_next_run(
    empty_db_url: str, tmp_path: Path
) -> None:
    """A callback says a failed payout settled; the run that asks gets 5xx, so the next run asks
    again (the hint is not spent) and finds the late settlement; fetch_failed clears only then."""
    with served_world(empty_db_url, settle_after=30) as world:
        env = recon_env(empty_db_url, world.sandbox_url, retry_attempts="1")
        world.advance_to_hour(1)  # every night of the test on one calendar day: no check is due
        (failed,) = create_payouts(world, [Spec("12.01")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [failed.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        world.advance(60)
        run_night(env, tmp_path, "night1", world.now())
        assert read_csv(tmp_path / "night1" / "payouts.csv")[0]["outcome"] == "failed"

        world.post(f"/sandbox/transactions/{failed.transaction_id}/confirm")
        world.post(
            f"/sandbox/transactions/{failed.transaction_id}/notify",
            {"state": 6, "url": f"{world.receiver_url}/callbacks"},
        )
        world.faults(error_rate=1.0, spare_authorize=True)
        world.advance(3600)
        second = findings_of(run_night(env, tmp_path, "night2", world.now(), code=3))
        assert second[(failed.transaction_id, "fetch_failed")]["status"] == "new"

        world.faults(error_rate=0.0)
        world.advance(3600)  # an hour: no watch check is due, only the unspent callback hint
        out = run_night(env, tmp_path, "night3", world.now())
        third = findings_of(out)
        assert third[(failed.transaction_id, "late_settlement")]["status"] == "new"
        assert third[(failed.transaction_id, "fetch_failed")]["status"] == "cleared"
        assert read_csv(out / "payouts.csv")[0]["outcome"] == "settled"


def test_a_run_before_the_latest_finished_run_is_refused_unless_dry(
    empty_db_url: str, tmp_path: Path
) -> None:
    """`recon run --as-of` earlier than the latest run's as-of exits 2 naming it; a dry run may."""
    with served_world(empty_db_url, receiver=False) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        (payout,) = create_payouts(world, [Spec("40.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [payout.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        run_night(env, tmp_path, "night1", "2030-01-02T06:00:00+00:00")
        back = recon(env, "run", "--as-of", "2030-01-01T06:00:00+00:00", "--no-email",
                     "--out", str(tmp_path / "back"), cwd=tmp_path)  # fmt: skip
        assert back.returncode == 2, explain(back)
        assert "2030-01-02" in back.stderr
        assert len(back.stderr.strip().splitlines()) == 1
        dry = recon(env, "run", "--as-of", "2030-01-01T06:00:00+00:00", "--dry-run",
                    "--out", str(tmp_path / "dry"), cwd=tmp_path)  # fmt: skip
        assert dry.returncode == 0, explain(dry)
        runs = recon(env, "runs", cwd=tmp_path)
        assert runs.stdout.count("2030-01-01") == 0, runs.stdout
