"""The record is evidence too: a record changed after reconciliation is asked
about again and flagged, and a run's files never change after it.

Each night is a real `recon run` over the sandbox, served on loopback.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.run_support import (
    Payout,
    Spec,
    by_id,
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
CSV_FILES = ("payouts.csv", "summary.csv", "exceptions.csv", "returns.csv")


def _two_nights(db_url: str, tmp: Path) -> tuple[dict[str, str], list[Payout], Path, Path]:
    """Night 1 settles three payouts; their records then change (one amount, one currency and
    amount); night 2 runs a day later."""
    with served_world(db_url, settle_after=30) as world:
        env = recon_env(db_url, world.sandbox_url)
        world.advance_to_hour(1)
        payouts = create_payouts(world, [Spec("100.00", "SE"), Spec("80.00", "SE"), Spec("7.00")])
        import_payouts(env, tmp, [p.csv_row() for p in payouts], name="v1.csv")
        world.advance(120)
        night1 = run_night(env, tmp, "night1", world.now())
        assert {r["outcome"] for r in read_csv(night1 / "payouts.csv")} == {"settled"}

        changed, other, same = payouts
        import_payouts(
            env,
            tmp,
            [
                changed.csv_row(amount="150.00"),
                other.csv_row(amount="50.00", currency="EUR"),
                same.csv_row(),
            ],
            name="v2.csv",
        )
        world.advance(DAY)
        night2 = run_night(env, tmp, "night2", world.now())
    return env, payouts, night1, night2


def test_a_run_rebuilt_after_records_changed_writes_its_csv_files_byte_for_byte(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Import, run, import changed records, run: `recon report --run 1` writes night 1's CSV
    files exactly as night 1 wrote them (100.00 SEK, no EUR settled row)."""
    env, _, night1, _ = _two_nights(empty_db_url, tmp_path)
    rebuilt = tmp_path / "rebuilt1"
    result = recon(env, "report", "--run", "1", "--out", str(rebuilt), cwd=tmp_path)
    assert result.returncode == 0, explain(result)
    for name in CSV_FILES:
        assert (rebuilt / name).read_bytes() == (night1 / name).read_bytes(), name
    html = (rebuilt / "report.html").read_text(encoding="utf-8")
    assert "150.00" not in html
    assert html == (night1 / "report.html").read_text(encoding="utf-8")


def test_a_changed_record_is_asked_about_again_flagged_and_compared_as_changed(
    tmp_path: Path,
) -> None:
    """Night 2 asks the provider about both changed payouts (not the unchanged one), flags each
    record_changed with both values, and compares the answer with the new record. On SQLite: the
    rule is tested at decide's entry (tests/unit/test_decide_cases.py), and the other tests here
    import the changes into every database."""
    _, payouts, _, night2 = _two_nights(f"sqlite:///{tmp_path / 'recon.db'}", tmp_path)
    changed, other, same = payouts
    found: dict[tuple[str, str], str] = {
        (r["transaction_id"], r["exception"]): r["detail"]
        for r in read_csv(night2 / "exceptions.csv")
    }
    assert "100.00" in found[(changed.transaction_id, "record_changed")]
    assert "150.00" in found[(changed.transaction_id, "record_changed")]
    assert (changed.transaction_id, "amount_mismatch") in found
    assert "SEK" in found[(other.transaction_id, "record_changed")]
    assert "EUR" in found[(other.transaction_id, "record_changed")]
    assert (other.transaction_id, "currency_mismatch") in found
    assert not [key for key in found if key[0] == same.transaction_id]
    assert "2 record changed" in (night2 / "report.html").read_text(encoding="utf-8")
    rows = by_id(read_csv(night2 / "payouts.csv"))
    assert rows[changed.transaction_id]["amount"] == "150.00"


def test_a_run_rebuilt_after_a_later_night_flagged_an_older_payout_lists_what_it_listed(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Night 2, ten days after night 1, lists neither payout (both settled before its window);
    then one record changes and night 3 flags it, and the other is flagged no more. `recon report
    --run 2` still writes night 2's files byte for byte: what a run covered is what it saw then,
    not what is open or flagged now."""
    with served_world(empty_db_url, settle_after=30) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        world.advance_to_hour(1)
        first, second = create_payouts(world, [Spec("100.00", "SE"), Spec("80.00", "SE")])
        import_payouts(env, tmp_path, [first.csv_row(), second.csv_row()], name="v1.csv")
        world.advance(120)
        run_night(env, tmp_path, "night1", world.now())
        world.advance(10 * DAY)
        night2 = run_night(env, tmp_path, "night2", world.now())
        import_payouts(
            env, tmp_path, [first.csv_row(amount="150.00"), second.csv_row()], name="v2.csv"
        )
        world.advance(3600)
        night3 = run_night(env, tmp_path, "night3", world.now())
        flagged = {r["transaction_id"] for r in read_csv(night3 / "exceptions.csv")}
        assert first.transaction_id in flagged
        rebuilt = tmp_path / "rebuilt2"
        result = recon(env, "report", "--run", "2", "--out", str(rebuilt), cwd=tmp_path)
        assert result.returncode == 0, explain(result)
        for name in CSV_FILES:
            assert (rebuilt / name).read_bytes() == (night2 / name).read_bytes(), name
