"""The provider's side: a payout the provider made that the record lacks, an id the
provider does not know, and a create recorded without a transaction id.

Each night is a real `recon run` over the sandbox and the receiver, served on loopback.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    findings_of,
    post_notification,
    recon,
    recon_env,
    run_night,
    served_world,
    write_payouts_csv,
)

DAY = 86400


def _callback(receiver_url: str | None, transaction_id: str, state: int = 6) -> None:
    body = {"merchant_id": "sandbox-merchant", "transaction_id": transaction_id,
            "transaction_state": state}  # fmt: skip
    assert post_notification(receiver_url or "", body) == "stored"


def test_a_callback_for_a_payout_the_record_lacks_paid_beside_its_twin_is_a_double_payment(
    empty_db_url: str, tmp_path: Path
) -> None:
    """The trace of a lost create answer: the provider paid twice, the record has the retry; the
    callback of the first makes it one finding, paid twice, naming both, and `recon show` knows
    it; it stands the next night."""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        # The retry of a create whose answer was lost, under a new reference (the sandbox, as
        # the provider, answers a repeated reference with the payout it already made).
        ghost, retry = create_payouts(
            world,
            [Spec("100.00", account="a", reference="R-1"),
             Spec("100.00", account="a", reference="R-1-retry")],
            prefix="g",
        )  # fmt: skip
        export = write_payouts_csv(tmp_path / "payouts.csv", [retry.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        world.advance(600)
        _callback(world.receiver_url, ghost.transaction_id)

        found = findings_of(run_night(env, tmp_path, "night1", world.now()))
        row = found[(ghost.transaction_id, "double_payment")]
        assert row["status"] == "new"
        assert row["detail"].startswith(
            f"paid twice: the provider made payout {ghost.transaction_id}"
        )
        assert sorted(row["members"].split(";")) == sorted(
            [ghost.transaction_id, retry.transaction_id]
        )
        assert row["amount_at_stake"] == "100.00"
        assert {flag for _, flag in found} == {"double_payment"}  # one problem, one finding

        shown = recon(env, "show", "--", ghost.transaction_id, cwd=tmp_path)
        assert shown.returncode == 0, explain(shown)
        assert "not in the record" in shown.stdout
        assert "Paid twice" in shown.stdout

        world.advance(DAY)
        again = findings_of(run_night(env, tmp_path, "night2", world.now()))
        assert again[(ghost.transaction_id, "double_payment")]["status"] == "persisting"


def test_a_forged_callback_is_counted_in_the_footer_and_never_a_finding(
    empty_db_url: str, tmp_path: Path
) -> None:
    """An id the provider does not know is asked about once, counted, and kept; no finding."""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        (paid,) = create_payouts(world, [Spec("10.00")])
        export = write_payouts_csv(tmp_path / "payouts.csv", [paid.csv_row()])
        assert recon(env, "import", "payouts", str(export), cwd=tmp_path).returncode == 0
        _callback(world.receiver_url, "gForged1")

        out = run_night(env, tmp_path, "night1", world.now())
        assert not [k for k in findings_of(out) if k[0] == "gForged1"]
        html = (out / "report.html").read_text(encoding="utf-8")
        assert "1 unknown to the provider" in html
        shown = recon(env, "show", "gForged1", cwd=tmp_path)
        assert shown.returncode == 0, explain(shown)
        assert "unknown" in shown.stdout


def test_a_create_without_an_id_is_creation_unknown_until_a_callback_matches_it(
    empty_db_url: str, tmp_path: Path
) -> None:
    """The row imports beside the others and is creation_unknown; the callback of the payout it
    made, with its reference and amount, matches and clears it. (Night after night:
    tests/unit/test_decide_cases.py, at decide's entry.)"""
    with served_world(empty_db_url) as world:
        env = recon_env(empty_db_url, world.sandbox_url)
        paid, made = create_payouts(
            world, [Spec("10.00"), Spec("50.00", reference="R-2")], prefix="c"
        )
        attempt = made.csv_row(transaction_id="")
        export = write_payouts_csv(tmp_path / "payouts.csv", [paid.csv_row(), attempt])
        imported = recon(env, "import", "payouts", str(export), cwd=tmp_path)
        assert imported.returncode == 0, explain(imported)
        assert "1 create without a transaction id" in imported.stdout

        first = findings_of(run_night(env, tmp_path, "night1", world.now()))
        assert first[("1", "creation_unknown")]["status"] == "new"

        _callback(world.receiver_url, made.transaction_id)
        world.advance(DAY)
        second = findings_of(run_night(env, tmp_path, "night2", world.now()))
        assert second[("1", "creation_unknown")]["status"] == "cleared"
        assert second[(made.transaction_id, "unrecorded_payout")]["status"] == "new"


def test_an_import_row_without_an_id_lacking_its_reference_is_refused_with_line_and_field(
    empty_db_url: str, tmp_path: Path
) -> None:
    """A row without a transaction id must carry reference, amount and currency."""
    rows = [
        {"transaction_id": "", "merchant_reference": "", "amount": "5.00", "currency": "EUR"},
    ]
    export = write_payouts_csv(tmp_path / "payouts.csv", rows)
    env = recon_env(empty_db_url, "http://127.0.0.1:9")
    result = recon(env, "import", "payouts", str(export), cwd=tmp_path)
    assert result.returncode == 2, explain(result)
    assert "line 2" in result.stderr
    assert "merchant_reference is missing" in result.stderr
