"""The provider's flow error codes (interface 7.1, provider notes) as data, for reports to quote.

Each code has a category, a short meaning and the merchant's action in one line. The provider says
its codes are "updated on a regular basis", so :func:`lookup` never fails: an unknown code gets a
generic entry that keeps the code as it arrived.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class ErrorCategory(StrEnum):
    """The categories of interface 7.1, plus ``unknown`` for codes the catalogue does not know."""

    RESOLVABLE = "resolvable"
    NON_RESOLVABLE = "non_resolvable"
    MERCHANT_APPROVAL = "merchant_approval"
    SANDBOX_SHOWN = "sandbox_shown"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ErrorCodeInfo:
    """One catalogue entry. ``known`` is False for the generic entry of an unlisted code."""

    code: str
    category: ErrorCategory
    meaning: str
    action: str
    known: bool = True


_R = ErrorCategory.RESOLVABLE
_N = ErrorCategory.NON_RESOLVABLE
_M = ErrorCategory.MERCHANT_APPROVAL
_S = ErrorCategory.SANDBOX_SHOWN

# (code, category, meaning, merchant action), in the order of interface 7.1. The interface words
# its advice for a customer paying in ("user retries", "other method"); recon's actions are about
# a payout the merchant sent to a customer's bank account. Any failed payout may still be confirmed
# by the bank later (interface 3.3), so the advice to pay again always goes with a new reference
# and recon keeps watching the failed one (late_settlement).
_ROWS: tuple[tuple[str, ErrorCategory, str, str], ...] = (
    ("general_timeout", _R, "Timeout in the flow.",
     "The payout timed out before reaching the bank: pay out again with a new merchant_reference; "
     "tell the provider if timeouts repeat."),
    ("generic_bank_error", _R, "Temporary bank-side issue.",
     "The customer's bank failed the payout temporarily: pay out again later with a new "
     "merchant_reference; escalate to the provider if the same account keeps failing."),
    ("psu_authentication_error", _R, "The customer's bank login failed.",
     "A bank login failed in the flow that confirms the payout account: have the customer confirm "
     "their account again, then pay out with a new merchant_reference."),
    ("psu_insufficient_funds_selected_account", _R, "The selected account lacks funds.",
     "The account funding the payout lacked funds: top up the merchant's payout balance with the "
     "provider, then pay out again with a new merchant_reference."),
    ("psu_insufficient_funds_all_accounts", _R, "No account has enough funds.",
     "No funding account covered the payout: top up the merchant's payout balance with the "
     "provider, then pay out again with a new merchant_reference."),
    ("psu_simultaneous_attempt", _R, "Several sessions were opened at once.",
     "Parallel attempts for this customer collided: send one payout at a time per customer and "
     "pay out again after a few seconds with a new merchant_reference."),
    ("psu_simultaneous_attempt_cancel_login", _R,
     "A previous session is still pending in the bank app.",
     "An earlier bank login of the customer was still pending: once the customer has cancelled it "
     "in their banking app, pay out again with a new merchant_reference."),
    ("psu_abandoned_session", _N, "The customer did not finish in time.",
     "The customer did not finish confirming the payout account in time: send them a new account "
     "selection, then pay out to the account they select."),
    ("psu_closed_client", _N, "The customer closed the client.",
     "The customer closed the account selection before it ended: the payout was not sent; pay out "
     "once they have selected their account again."),
    ("psu_canceled_authentication", _N, "The customer cancelled authentication in the bank app.",
     "The customer cancelled the bank login for the payout account: ask whether they still want "
     "the payout there before paying out again."),
    ("bank_rejected_transaction", _N, "The bank rejected the transaction after confirmation.",
     "Check the request; escalate to the provider if the receiving bank rejects the payout again, "
     "and pay out again only after correcting the account or amount against the record."),
    ("risk_engine_rejection", _N, "Rejected by the provider's risk engine.",
     "The provider's risk checks stopped the payout: do not send it again as it is; ask the "
     "provider why, and settle with the customer another way if they uphold it."),
    ("merchant_approval_timeout", _M,
     "The merchant's system did not answer the approval request in time.",
     "Our approval endpoint did not answer in time (5-10 s), so the payout was not sent: fix the "
     "endpoint's availability or speed, then pay out again with a new merchant_reference."),
    ("merchant_approval_rejected", _M, "The merchant's system denied the transaction.",
     "Our own approval system declined the payout: check the decision there and pay out again "
     "only if it was wrong."),
    ("invalid_recipient_account", _S, "The payout's target account is invalid.",
     "The customer's bank account cannot receive the payout: get corrected account details from "
     "the customer and pay out to the corrected account."),
    ("transaction_is_delayed_in_bank", _S,
     "The payout is delayed in the bank while its state is completed.",
     "Wait for settlement: the customer's bank is holding the payout; do not pay out again, and "
     "escalate to the provider if it stays delayed past the grace period."),
    ("incomplete_kyc_information_from_kyc_provider", _S, "Identity information is incomplete.",
     "The provider lacks the recipient's identity details: complete the account holder's name, "
     "date of birth and address, then pay out again with a new merchant_reference."),
    ("expired_session", _N, "The session was not finished within its 30 minutes.",
     "The customer's account selection expired after 30 minutes: send them a new one and pay out "
     "once they finish it."),
)  # fmt: skip

# Spellings seen in the provider's documentation that mean a listed code.
_ALIASES: dict[str, str] = {
    "psu_simultaneous_attempt_cancel_loginn": "psu_simultaneous_attempt_cancel_login",
}

CATALOGUE: MappingProxyType[str, ErrorCodeInfo] = MappingProxyType(
    {row[0]: ErrorCodeInfo(*row) for row in _ROWS}
)

_GENERIC_MEANING = "An error code this version of recon does not know."
_GENERIC_ACTION = (
    "Look the code up in the provider's current documentation or ask the provider before paying "
    "out to this customer again."
)


def lookup(code: str | None) -> ErrorCodeInfo:
    """The catalogue entry of ``code`` (case and surrounding spaces ignored, aliases resolved).

    An unknown, empty or missing code gets a generic entry of category ``unknown`` that keeps the
    code string as given (``""`` for ``None``).
    """
    key = (code or "").strip().lower()
    info = CATALOGUE.get(_ALIASES.get(key, key))
    if info is not None:
        return info
    return ErrorCodeInfo(
        code=code or "",
        category=ErrorCategory.UNKNOWN,
        meaning=_GENERIC_MEANING,
        action=_GENERIC_ACTION,
        known=False,
    )
