"""One night over the sandbox with every oddity a provider may answer: returns too large, in
another currency, on a failed payout, claimed at another amount; answers with another reference or
account, an undocumented state, a session id recorded for a payout; a failure the merchant
learned only from a callback; and a claim nobody can read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.run_support import (
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

ROLES = {
    "too_much": Spec("10.00"),
    "two_returns": Spec("10.00"),
    "other_currency": Spec("10.00"),
    "returned_failed": Spec("12.01"),
    "claimed_more": Spec("9.99"),
    "drift": Spec("20.00"),
    "odd_state": Spec("21.00"),
    "session": Spec("22.00"),
    "called_failed": Spec("23.00"),
}


@dataclass
class Night:
    tmp: Path
    world: World
    payouts: dict[str, Payout]
    result: Any
    session_id: str

    def rows(self) -> dict[str, dict[str, str]]:
        return by_id(read_csv(self.tmp / "night2" / "payouts.csv"))

    def row(self, role: str) -> dict[str, str]:
        key = self.session_id if role == "session" else self.payouts[role].transaction_id
        return self.rows()[key]

    def exceptions(self) -> dict[tuple[str, str], dict[str, str]]:
        rows = read_csv(self.tmp / "night2" / "exceptions.csv")
        return {(r["transaction_id"], r["exception"]): r for r in rows}

    def returns_of(self, role: str) -> list[dict[str, str]]:
        original = self.payouts[role].transaction_id
        rows = read_csv(self.tmp / "night2" / "returns.csv")
        return [r for r in rows if r["original_transaction_id"] == original]


def _return(world: World, payout: Payout, **fields: Any) -> None:
    world.post(f"/sandbox/transactions/{payout.transaction_id}/return", fields)


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    tmp = tmp_path_factory.mktemp("checks")
    database_url = f"sqlite:///{tmp / 'recon.db'}"
    with served_world(database_url) as world:
        env = recon_env(database_url, world.sandbox_url)
        made = dict(zip(ROLES, create_payouts(world, list(ROLES.values())), strict=True))
        session = world.post(f"/sandbox/transactions/{made['session'].transaction_id}/session")
        rows = [p.csv_row() for role, p in made.items() if role != "session"]
        rows.append(made["session"].csv_row(transaction_id=session["id"]))
        import_payouts(env, tmp, rows)
        first = recon(env, "run", "--as-of", world.now(), "--out", str(tmp / "night1"), cwd=tmp)
        assert first.returncode == 0, explain(first)
        world.advance(3600)  # settled, except 12.01 (failed)
        _return(world, made["too_much"], amount=Decimal("25.00"))
        _return(world, made["two_returns"], amount=Decimal("6.00"))
        _return(world, made["two_returns"], amount=Decimal("6.00"))
        _return(world, made["other_currency"], amount=Decimal("4.00"), currency="SEK")
        _return(world, made["returned_failed"], any_state=True)
        _return(world, made["claimed_more"], notified_amount=Decimal("5.00"))
        drifted = {"merchant_reference": "someone-else", "to_bank_account_id": "acct-elsewhere"}
        world.post(f"/sandbox/transactions/{made['drift'].transaction_id}/answer",
                   {"fields": drifted})  # fmt: skip
        world.post(f"/sandbox/transactions/{made['odd_state'].transaction_id}/answer",
                   {"fields": {"state": "STATE_REFUNDED"}})  # fmt: skip
        world.post(f"/sandbox/transactions/{made['called_failed'].transaction_id}/notify",
                   {"state": 3, "url": f"{world.receiver_url}/callbacks"})  # fmt: skip
        # A claim recon cannot read is stored all the same, and reported by the next run.
        assert post_notification(world.receiver_url or "", {"claim": "money", "n": 1}) == "stored"
        # A callback for an account not configured is kept too, and reported naming the account.
        orphan = made["too_much"].transaction_id
        stray = {"merchant_id": "m-other", "transaction_id": orphan, "transaction_state": 6}
        assert post_notification(world.receiver_url or "", stray, path="/callbacks/brand_c")
        world.advance(86400)  # the next night
        second = recon(env, "run", "--as-of", world.now(), "--out", str(tmp / "night2"), cwd=tmp)
        yield Night(tmp, world, made, second, session["id"])


def test_the_night_completes(night: Night) -> None:
    """Every oddity is a finding, not a failure: exit 0."""
    assert night.result.returncode == 0, explain(night.result)


def test_returns_larger_than_the_payout_alone_or_together_are_flagged(night: Night) -> None:
    """25.00 back on 10.00, and 6.00 + 6.00 back on 10.00: return_exceeds_payout on each."""
    exceptions = night.exceptions()
    for role in ("too_much", "two_returns"):
        assert (night.payouts[role].transaction_id, "return_exceeds_payout") in exceptions, role
    assert night.row("two_returns")["returned_amount"] == "12.00"
    assert len(night.returns_of("two_returns")) == 2


def test_a_return_in_another_currency_is_flagged_and_not_counted(night: Night) -> None:
    """SEK 4.00 on a EUR payout: return_currency_mismatch; EUR returned stays 0.00."""
    (found,) = night.returns_of("other_currency")
    assert (found["currency"], found["confirmed"]) == ("SEK", "true")
    assert (found["return_transaction_id"], "return_currency_mismatch") in night.exceptions()
    assert night.row("other_currency")["returned_amount"] == "0.00"
    assert night.row("other_currency")["outcome"] == "settled"


def test_a_return_on_a_failed_payout_is_flagged_and_kept_out_of_the_totals(night: Night) -> None:
    """The money did leave: return_on_unsettled; summary.csv counts no return for failed."""
    (found,) = night.returns_of("returned_failed")
    assert (found["return_transaction_id"], "return_on_unsettled") in night.exceptions()
    summary = read_csv(night.tmp / "night2" / "summary.csv")
    failed = [r for r in summary if r["outcome"] == "failed"]
    assert failed
    assert all(r["returned_amount"] == "" for r in failed)


def test_a_notification_claiming_another_amount_is_flagged(night: Night) -> None:
    """The notification says 5.00, the provider 9.99: return_amount_mismatch."""
    (found,) = night.returns_of("claimed_more")
    flagged = night.exceptions()[(found["return_transaction_id"], "return_amount_mismatch")]
    assert "5.00" in flagged["detail"]


def test_an_answer_with_another_reference_and_account_is_flagged(night: Night) -> None:
    """Both differences are findings; the outcome is the provider's."""
    tid = night.payouts["drift"].transaction_id
    exceptions = night.exceptions()
    assert "someone-else" in exceptions[(tid, "reference_mismatch")]["detail"]
    assert "acct-elsewhere" in exceptions[(tid, "account_mismatch")]["detail"]


def test_an_undocumented_state_name_is_pending_and_flagged(night: Night) -> None:
    """STATE_REFUNDED: pending, unrecognised_state naming it, not fetch_failed, not settled."""
    row = night.row("odd_state")
    assert row["outcome"] == "pending"
    assert row["exceptions"] == "unrecognised_state"


def test_a_recorded_session_id_is_flagged_with_its_transaction(night: Night) -> None:
    """The record holds the session's id: session_id_recorded naming the real transaction id."""
    row = night.row("session")
    assert row["outcome"] != "unknown"
    assert "session_id_recorded" in row["exceptions"]
    flagged = night.exceptions()[(night.session_id, "session_id_recorded")]
    assert night.payouts["session"].transaction_id in flagged["detail"]


def test_a_failure_told_by_a_callback_then_seen_settled_is_a_late_settlement(
    night: Night,
) -> None:
    """The provider called back failed (state 3) for a payout every answer calls settled."""
    tid = night.payouts["called_failed"].transaction_id
    flagged = night.exceptions()[(tid, "late_settlement")]
    assert "a callback said failed" in flagged["detail"]
    assert night.row("called_failed")["outcome"] == "settled"


def test_a_claim_recon_cannot_read_is_kept_and_reported_by_the_next_run(night: Night) -> None:
    """The receiver stored it (200); the run lists it once, as notification_unreadable."""
    rows = read_csv(night.tmp / "night2" / "exceptions.csv")
    unreadable = [r for r in rows if r["exception"] == "notification_unreadable"]
    claims = [r for r in unreadable if '"claim"' in r["detail"]]
    assert len(claims) == 1
    assert claims[0]["status"] == "new"


def test_a_callback_for_an_account_not_configured_is_kept_and_reported_naming_it(
    night: Night,
) -> None:
    """POST /callbacks/brand_c with only the default account: notification_unreadable, brand_c."""
    rows = read_csv(night.tmp / "night2" / "exceptions.csv")
    stray = [
        r for r in rows if r["exception"] == "notification_unreadable" and "brand_c" in r["detail"]
    ]
    assert len(stray) == 1, [r["detail"] for r in rows]
    assert "not configured" in stray[0]["detail"]
    # The id it names is the default account's payout: nothing is stored or asked under brand_c.
    payouts = read_csv(night.tmp / "night2" / "payouts.csv")
    assert {r["provider_account"] for r in payouts} == {"default"}
