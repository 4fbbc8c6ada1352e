"""The documented sandbox behaviour (interface 7.3): magic payout amounts and test-bank scenarios.

Two amounts are the sandbox's own, for fees (the interface has none): 11.03 is aborted like
11.01 but charged a fee all the same, and 15.01 settles with its fee doubled.

Which of session states 10 and 11 means a known cause is unresolved in the interface (3.1). The
sandbox follows the "Effect" column of 7.3: a scenario where *login fails* ends in 11
(STATE_FAILED); one where login is *aborted* or the session callback is documented as state 10
ends in 10 (STATE_ABORTED).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from recon.constants import SessionState, TxState

DELAY_SECONDS = 300.0  # 13.01 stays completed this long (8. Limits)
RETURN_AFTER_SECONDS = 60.0  # 14.01 is returned this long after settling
SESSION_LIFETIME_SECONDS = 30 * 60.0
EXPIRED_SESSION = "expired_session"
DELAYED_IN_BANK = "transaction_is_delayed_in_bank"


@dataclass(frozen=True, slots=True)
class PayoutBehaviour:
    """What a payout amount does: its state at creation and what happens later."""

    initial_state: TxState
    error_code: str | None = None
    delayed: bool = False  # 13.01
    returned: bool = False  # 14.01
    fee_at_creation: bool = False  # 11.03: charged although it never pays
    fee_factor: int = 1  # 15.01: 2, the fee doubled


ORDINARY = PayoutBehaviour(TxState.COMPLETED)

MAGIC_AMOUNTS: dict[Decimal, PayoutBehaviour] = {
    Decimal("11.01"): PayoutBehaviour(TxState.ABORTED, "bank_rejected_transaction"),
    Decimal("11.02"): PayoutBehaviour(TxState.ABORTED, "invalid_recipient_account"),
    Decimal("12.01"): PayoutBehaviour(TxState.FAILED),
    Decimal("13.01"): PayoutBehaviour(TxState.COMPLETED, DELAYED_IN_BANK, delayed=True),
    Decimal("14.01"): PayoutBehaviour(TxState.COMPLETED, returned=True),
    Decimal("11.03"): PayoutBehaviour(
        TxState.ABORTED, "bank_rejected_transaction", fee_at_creation=True
    ),
    Decimal("15.01"): PayoutBehaviour(TxState.COMPLETED, fee_factor=2),
}


def payout_behaviour(amount: Decimal) -> PayoutBehaviour:
    """The behaviour of a payout of ``amount`` (``11.010`` is ``11.01``)."""
    return MAGIC_AMOUNTS.get(amount, ORDINARY)


@dataclass(frozen=True, slots=True)
class SessionScenario:
    """A choice on the hosted page and how the session ends."""

    key: str
    label: str
    state: SessionState
    error_code: str | None


SESSION_SCENARIOS: tuple[SessionScenario, ...] = (
    SessionScenario("select_account", "Select account (success)", SessionState.COMPLETED, None),
    SessionScenario(
        "fail_after_login", "Fail after login", SessionState.FAILED, "generic_bank_error"
    ),
    SessionScenario(
        "no_funds", "No funds", SessionState.FAILED, "psu_insufficient_funds_all_accounts"
    ),
    SessionScenario(
        "incomplete_kyc",
        "Incomplete KYC",
        SessionState.ABORTED,
        "incomplete_kyc_information_from_kyc_provider",
    ),
    SessionScenario(
        "risk_engine_abort", "Risk engine abort", SessionState.ABORTED, "risk_engine_rejection"
    ),
    SessionScenario(
        "fail_transaction", "Fail transaction", SessionState.ABORTED, "bank_rejected_transaction"
    ),
    SessionScenario(
        "underage_customer", "Underage customer", SessionState.ABORTED, "risk_engine_rejection"
    ),
)
SCENARIO_BY_KEY = {s.key: s for s in SESSION_SCENARIOS}
