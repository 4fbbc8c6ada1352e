"""The error-code catalogue of interface 7.1."""

from __future__ import annotations

import pytest

from recon.provider.codes import CATALOGUE, ErrorCategory, lookup

INTERFACE_7_1 = {
    "general_timeout": ErrorCategory.RESOLVABLE,
    "generic_bank_error": ErrorCategory.RESOLVABLE,
    "psu_authentication_error": ErrorCategory.RESOLVABLE,
    "psu_insufficient_funds_selected_account": ErrorCategory.RESOLVABLE,
    "psu_insufficient_funds_all_accounts": ErrorCategory.RESOLVABLE,
    "psu_simultaneous_attempt": ErrorCategory.RESOLVABLE,
    "psu_simultaneous_attempt_cancel_login": ErrorCategory.RESOLVABLE,
    "psu_abandoned_session": ErrorCategory.NON_RESOLVABLE,
    "psu_closed_client": ErrorCategory.NON_RESOLVABLE,
    "psu_canceled_authentication": ErrorCategory.NON_RESOLVABLE,
    "bank_rejected_transaction": ErrorCategory.NON_RESOLVABLE,
    "risk_engine_rejection": ErrorCategory.NON_RESOLVABLE,
    "merchant_approval_timeout": ErrorCategory.MERCHANT_APPROVAL,
    "merchant_approval_rejected": ErrorCategory.MERCHANT_APPROVAL,
    "invalid_recipient_account": ErrorCategory.SANDBOX_SHOWN,
    "transaction_is_delayed_in_bank": ErrorCategory.SANDBOX_SHOWN,
    "incomplete_kyc_information_from_kyc_provider": ErrorCategory.SANDBOX_SHOWN,
}


@pytest.mark.parametrize(("code", "category"), sorted(INTERFACE_7_1.items()))
def test_every_interface_code_has_its_category_and_a_one_line_action(
    code: str, category: ErrorCategory
) -> None:
    """Each code of interface 7.1 is catalogued with its category, a meaning and one-line action."""
    info = lookup(code)
    assert info.known
    assert info.code == code
    assert info.category is category
    assert info.meaning
    assert info.action
    assert "\n" not in info.action


def test_the_catalogue_holds_the_interface_codes_and_expired_session() -> None:
    """The catalogue is exactly the corrected 7.1 table plus the provider notes' expired_session."""
    assert set(CATALOGUE) == set(INTERFACE_7_1) | {"expired_session"}


def test_the_misspelt_cancel_loginn_is_an_alias_of_the_corrected_code() -> None:
    """The table's misspelling resolves to the corrected entry."""
    assert lookup("psu_simultaneous_attempt_cancel_loginn") is lookup(
        "psu_simultaneous_attempt_cancel_login"
    )


def test_expired_session_is_catalogued() -> None:
    """The provider notes' expired_session code has an entry."""
    assert lookup("expired_session").known


def test_lookup_ignores_case_and_surrounding_spaces() -> None:
    """Codes are matched case-insensitively, as they may arrive in either case."""
    assert lookup(" Bank_Rejected_Transaction ").code == "bank_rejected_transaction"


def test_an_unknown_code_gets_a_generic_entry_that_keeps_the_code() -> None:
    """An unlisted code is never rejected: it keeps its string and is categorised unknown."""
    info = lookup("brand_new_code_2031")
    assert info.code == "brand_new_code_2031"
    assert info.category is ErrorCategory.UNKNOWN
    assert not info.known
    assert info.action


def test_a_missing_code_gets_the_generic_entry_with_an_empty_code() -> None:
    """None (no error_code in the answer) maps to the generic entry."""
    info = lookup(None)
    assert info.code == ""
    assert info.category is ErrorCategory.UNKNOWN


# Advice that belongs to a pay-in (the customer paying the merchant), not to a payout.
PAY_IN_PHRASES = (
    "let the customer retry",
    "customer retries",
    "offer the customer",
    "another account",
    "payment method",
    "lower amount",
    "top-up",
    "checkout",
    "refund",
    "purchase",
)


def every_action() -> dict[str, str]:
    """Each catalogued code's action, the generic one, and the actions of report/actions.py."""
    from recon.reconcile.kinds import KINDS
    from recon.report.actions import NO_CODE_ACTION

    actions = {code: info.action for code, info in CATALOGUE.items()}
    actions["(unknown code)"] = lookup("brand_new_code_2031").action
    actions["(no code)"] = NO_CODE_ACTION
    return actions | {f"flag {kind}": kind.action for kind in KINDS}


@pytest.mark.parametrize(("code", "action"), sorted(every_action().items()))
def test_no_action_reads_like_a_pay_in(code: str, action: str) -> None:
    """No action asks the customer to retry a payment, offers another method, or refunds."""
    found = [phrase for phrase in PAY_IN_PHRASES if phrase in action.lower()]
    assert found == [], f"{code}: {action}"


@pytest.mark.parametrize("code", [*sorted(CATALOGUE), "brand_new_code_2031"])
def test_every_error_code_action_is_advice_about_a_payout(code: str) -> None:
    """Each code's action is one line about the payout: what happened to it and what to do."""
    action = lookup(code).action
    assert action.endswith(".")
    assert "\n" not in action
    words = ("payout", "pay out", "paying out", "paid out")
    assert any(word in action.lower() for word in words), action
