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

# (code, category, meaning, merchant action), in the order of interface 7.1.
_ROWS: tuple[tuple[str, ErrorCategory, str, str], ...] = (
    ("general_timeout", _R, "Timeout in the flow.",
     "Retry automatically after a short delay and log it."),
    ("generic_bank_error", _R, "Temporary bank-side issue.",
     "Let the customer retry."),
    ("psu_authentication_error", _R, "The customer's bank login failed.",
     "Ask the customer to check their authentication app and retry."),
    ("psu_insufficient_funds_selected_account", _R, "The selected account lacks funds.",
     "Offer the customer another account."),
    ("psu_insufficient_funds_all_accounts", _R, "No account has enough funds.",
     "Suggest a lower amount, a top-up or another payment method."),
    ("psu_simultaneous_attempt", _R, "Several sessions were opened at once.",
     "Prevent parallel starts; retry after a few seconds."),
    ("psu_simultaneous_attempt_cancel_login", _R,
     "A previous session is still pending in the bank app.",
     "Ask the customer to cancel the earlier login in their banking app, then retry."),
    ("psu_abandoned_session", _N, "The customer did not finish in time.",
     "Offer the customer a restart."),
    ("psu_closed_client", _N, "The customer closed the client.",
     "Optionally offer the customer to resume."),
    ("psu_canceled_authentication", _N, "The customer cancelled authentication in the bank app.",
     "Offer the customer a restart or another method."),
    ("bank_rejected_transaction", _N, "The bank rejected the transaction after confirmation.",
     "Check the request; escalate to the provider if it repeats."),
    ("risk_engine_rejection", _N, "Rejected by the provider's risk engine.",
     "Do not retry; contact the customer or pay out another way."),
    ("merchant_approval_timeout", _M,
     "The merchant's system did not answer the approval request in time.",
     "Check the approval endpoint's availability and response time (5-10 s)."),
    ("merchant_approval_rejected", _M, "The merchant's system denied the transaction.",
     "Review the approval decision in the merchant's own system."),
    ("invalid_recipient_account", _S, "The payout's target account is invalid.",
     "Verify the customer's bank account details and pay out to a corrected account."),
    ("transaction_is_delayed_in_bank", _S,
     "The payout is delayed in the bank while its state is completed.",
     "Wait for settlement; escalate if it stays delayed past the grace period."),
    ("incomplete_kyc_information_from_kyc_provider", _S, "Identity information is incomplete.",
     "Collect complete holder details (name, date of birth, address) and retry."),
    ("expired_session", _N, "The session was not finished within its 30 minutes.",
     "Start a new session for the customer."),
)  # fmt: skip

# Spellings seen in the provider's documentation that mean a listed code.
_ALIASES: dict[str, str] = {
    "psu_simultaneous_attempt_cancel_loginn": "psu_simultaneous_attempt_cancel_login",
}

CATALOGUE: MappingProxyType[str, ErrorCodeInfo] = MappingProxyType(
    {row[0]: ErrorCodeInfo(*row) for row in _ROWS}
)

_GENERIC_MEANING = "An error code this version of recon does not know."
_GENERIC_ACTION = "Look the code up in the provider's current documentation or ask the provider."


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
