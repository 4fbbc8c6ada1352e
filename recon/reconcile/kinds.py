"""Every kind of finding, collected from the rule modules that declare them, most urgent first.

The one registry (as datasette collects its facets): the report orders Needs action by this order,
the workbook and the email label each finding from it, and a name this version does not know is
shown as it is. A new kind is a rule module with its declaration, its place here (in the order of
urgency, and among the payout rules in the order they run, when it is one), and a test at
``decide``'s entry.
"""

from __future__ import annotations

from recon.reconcile import payout_checks
from recon.reconcile.balance import BALANCE_BREAK
from recon.reconcile.changes import RECORD_CHANGED
from recon.reconcile.double_payments import DOUBLE_PAYMENT, double_payment
from recon.reconcile.duplicates import POSSIBLE_DUPLICATE, possible_duplicate
from recon.reconcile.export_match import MISSING_FROM_EXPORT
from recon.reconcile.fees import (
    FEE_MISMATCH,
    FEE_MISSING,
    FEE_ON_UNPAID,
    fee_mismatch,
    fee_missing,
    fee_on_unpaid,
)
from recon.reconcile.finding import Kind, Rule
from recon.reconcile.late import LATE_SETTLEMENT, late_settlement
from recon.reconcile.payout_checks import (
    ACCOUNT_MISMATCH,
    AMOUNT_MISMATCH,
    CURRENCY_MISMATCH,
    FETCH_FAILED,
    NOT_A_PAYOUT,
    REFERENCE_MISMATCH,
    RETURN_EXCEEDS_PAYOUT,
    SESSION_ID_RECORDED,
    STALE,
    UNKNOWN_TRANSACTION,
    UNRECOGNISED_STATE,
    WRONG_TRANSACTION,
)
from recon.reconcile.return_checks import (
    RETURN_AMOUNT_MISMATCH,
    RETURN_CHANGED,
    RETURN_CURRENCY_MISMATCH,
    RETURN_ON_UNSETTLED,
    RETURN_UNVERIFIED,
    RETURN_WITHOUT_PAYOUT,
)
from recon.reconcile.reversals import REVERSED_AFTER_SETTLEMENT, reversed_after_settlement
from recon.reconcile.rollforward import ROLLFORWARD_BREAK
from recon.reconcile.unreadable import NOTIFICATION_UNREADABLE
from recon.reconcile.unrecorded import CREATION_UNKNOWN, UNRECORDED_PAYOUT

KINDS: tuple[Kind, ...] = (
    DOUBLE_PAYMENT,
    LATE_SETTLEMENT,
    REVERSED_AFTER_SETTLEMENT,
    AMOUNT_MISMATCH,
    CURRENCY_MISMATCH,
    NOT_A_PAYOUT,
    UNKNOWN_TRANSACTION,
    REFERENCE_MISMATCH,
    ACCOUNT_MISMATCH,
    UNRECOGNISED_STATE,
    SESSION_ID_RECORDED,
    STALE,
    WRONG_TRANSACTION,
    FETCH_FAILED,
    RETURN_EXCEEDS_PAYOUT,
    FEE_ON_UNPAID,
    FEE_MISMATCH,
    FEE_MISSING,
    POSSIBLE_DUPLICATE,
    RETURN_WITHOUT_PAYOUT,
    RETURN_UNVERIFIED,
    RETURN_CURRENCY_MISMATCH,
    RETURN_ON_UNSETTLED,
    RETURN_AMOUNT_MISMATCH,
    RETURN_CHANGED,
    NOTIFICATION_UNREADABLE,
    RECORD_CHANGED,
    UNRECORDED_PAYOUT,
    MISSING_FROM_EXPORT,
    CREATION_UNKNOWN,
    BALANCE_BREAK,
    ROLLFORWARD_BREAK,
)
# The rules over payouts, in the order they run: a rule reads what those before it found (a
# double payment is a late settlement whose candidate duplicate settled too).
PAYOUT_RULES: tuple[tuple[Kind, Rule], ...] = (
    *payout_checks.RULES,
    (REVERSED_AFTER_SETTLEMENT, reversed_after_settlement),
    (LATE_SETTLEMENT, late_settlement),
    (DOUBLE_PAYMENT, double_payment),
    (POSSIBLE_DUPLICATE, possible_duplicate),
    (FEE_MISMATCH, fee_mismatch),
    (FEE_ON_UNPAID, fee_on_unpaid),
    (FEE_MISSING, fee_missing),
)
# One problem, one finding: a finding of these kinds takes in tonight's findings of the kinds named
# that share a payout with it (recon.reconcile.problems). A double payment is its late settlement,
# the possible duplicates that make it, and a payout the provider made that the record lacks.
ABSORBS: dict[str, frozenset[str]] = {
    DOUBLE_PAYMENT.name: frozenset(
        {LATE_SETTLEMENT.name, POSSIBLE_DUPLICATE.name, UNRECORDED_PAYOUT.name}
    ),
}
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
assert len(BY_NAME) == len(KINDS), "two kinds share a name"
# Most urgent first: a kind's place in this order (a name this version lacks goes last).
URGENCY: dict[str, int] = {k.name: i for i, k in enumerate(KINDS)}


def kind_of(name: object) -> Kind | None:
    """The kind of a code name, or None for a name this version does not know."""
    return BY_NAME.get(str(name))


def label(name: object) -> str:
    """A finding's short label (``Paid after a failure``); the name itself if it has none."""
    kind = kind_of(name)
    return kind.label if kind is not None else str(name)


def names() -> list[str]:
    """Every kind's code name, most urgent first."""
    return list(BY_NAME)
