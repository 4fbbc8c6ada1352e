"""What a person should do about each finding: a line per flag, the provider's advice per code.

The flag lines are ours; the error-code lines come from the provider's catalogue
(``recon.provider.codes``), so a new code the catalogue learns shows up here without a change.
"""

from __future__ import annotations

import pandas as pd

from recon.constants import FAILED_OUTCOMES, Flag, FlagStatus

FLAG_ACTIONS: dict[Flag, str] = {
    Flag.DOUBLE_PAYMENT: (
        "Paid twice: reported failed, it was paid out after all, and its re-payment (named in the "
        "detail) settled too. Recover the amount paid twice from the customer, or ask the "
        "provider to recall one payout; do not pay this customer again."
    ),
    Flag.LATE_SETTLEMENT: (
        "Reported failed, then paid out by the bank: do not pay again; if it was re-paid, recover "
        "the duplicate (see candidate duplicates)."
    ),
    Flag.REVERSED_AFTER_SETTLEMENT: (
        "Settled, then reported failed or aborted by the provider: it was booked as paid, so do "
        "not re-pay it as an ordinary failure. Ask the provider whether the money was recalled "
        "and came back; re-book and re-pay only once it confirms that."
    ),
    Flag.AMOUNT_MISMATCH: (
        "The provider's amount differs from our record: check both with the provider's back "
        "office and correct the record before paying anything more."
    ),
    Flag.CURRENCY_MISMATCH: (
        "The provider's currency differs from our record: check with the provider's back office "
        "and correct the record."
    ),
    Flag.NOT_A_PAYOUT: (
        "The provider knows this id, but not as a payout: check the imported transaction id."
    ),
    Flag.UNKNOWN_TRANSACTION: (
        "The provider does not know this id: check the id; if it is right, ask the provider "
        "before paying again."
    ),
    Flag.REFERENCE_MISMATCH: (
        "The provider holds another merchant_reference for this payout: check which payout this "
        "id really is before paying or booking anything on it."
    ),
    Flag.ACCOUNT_MISMATCH: (
        "The provider paid another bank account than our record: check where the money went with "
        "the provider's back office before paying again."
    ),
    Flag.UNRECOGNISED_STATE: (
        "The provider answered a state its interface does not document (shown in the detail): "
        "treated as pending; ask the provider what it means before booking the payout."
    ),
    Flag.SESSION_ID_RECORDED: (
        "The record holds a session id, not the payout's transaction id: replace it with the "
        "transaction named in the detail and re-import; do not pay again."
    ),
    Flag.NOTIFICATION_UNREADABLE: (
        "The provider (or someone) sent a callback recon could not read in full; it is stored as "
        "received: read it (recon show, or the notifications table) and ask the provider if it "
        "claims money."
    ),
    Flag.STALE: (
        "Open for longer than the stale limit: escalate to the provider with the transaction "
        "id; do not pay again while it is open."
    ),
    Flag.WRONG_TRANSACTION: (
        "The provider answered about another transaction than the one asked for (named in the "
        "detail): the outcome is kept as it was; ask the provider why, and do not act on the "
        "answer."
    ),
    Flag.FETCH_FAILED: (
        "Could not be fetched in this run; the next run retries. Check the provider's status if "
        "it persists. If the provider refuses the id to this merchant account, check that the id "
        "is this account's (not another brand's or country's) and ask the provider."
    ),
    Flag.RETURN_WITHOUT_PAYOUT: (
        "Returned funds name a payout we do not have: check the original id with the provider."
    ),
    Flag.RETURN_UNVERIFIED: (
        "The provider does not confirm this return (the callback may be forged): do not pay out "
        "again or book the money as returned on its word."
    ),
    Flag.RETURN_EXCEEDS_PAYOUT: (
        "The bank returned more than this payout: ask the provider which returns are real "
        "before crediting the customer or paying again."
    ),
    Flag.POSSIBLE_DUPLICATE: (
        "Settled or in flight beside the payouts named in the detail (same merchant_reference, or "
        "same bank account or customer and amount): check whether the customer was meant to be "
        "paid more than once; if not, recover the duplicate; if so, resolve it as intended."
    ),
    Flag.RETURN_CURRENCY_MISMATCH: (
        "Returned in another currency than the payout (not counted as returned): ask the "
        "provider for the amount in the payout's currency."
    ),
    Flag.RETURN_ON_UNSETTLED: (
        "Funds came back for a payout we hold as failed or still open: the money did leave; "
        "treat the payout as paid and returned, and do not pay it again until it is clear."
    ),
    Flag.RETURN_AMOUNT_MISMATCH: (
        "The notification's amount differs from the provider's own answer: book the provider's "
        "amount and ask the provider about the notification."
    ),
    Flag.RETURN_CHANGED: (
        "The provider no longer answers this return as it was confirmed (gone, or another "
        "amount): the payout's returned amount now follows its latest answer; ask the provider "
        "which is true and correct what was booked on the earlier figure before paying out again."
    ),
    Flag.RECORD_CHANGED: (
        "Our record of this payout changed after it was reconciled (both values in the detail): "
        "find out who changed it and why, compare it with the provider's answer, and resolve "
        "it once the booking is right; do not pay again on the new figures alone."
    ),
    Flag.UNRECORDED_PAYOUT: (
        "The provider made this payout and our record lacks it (often a create whose answer was "
        "lost): check its twins in the detail; if one repeats it, the customer was paid twice, "
        "so recover one; otherwise import it into the record. Do not pay again."
    ),
    Flag.CREATION_UNKNOWN: (
        "A create was recorded without a transaction id, so its outcome is unknown: find the id "
        "in the provider's back office (or its callback) by the reference and import it; "
        "re-create only once you know it was not made, and resolve this then."
    ),
    Flag.ROLLFORWARD_BREAK: (
        "The night's figures do not carry forward: a stored row changed or vanished outside "
        "recon (a hand-made fix, a restore). Find which row, from the line and the difference in "
        "the detail, before trusting the totals; resolve this once it is explained."
    ),
}
CLEARED_ACTION = "Cleared since the previous run: no action needed."
NO_CODE_ACTION = (
    "The payout failed without an error code: ask the provider why before paying out again."
)
# Flags whose payout's current error_code explains the finding, so the provider's advice helps.
_CODE_APPLIES: frozenset[str] = frozenset({Flag.STALE, Flag.FETCH_FAILED})


def flag_action(flag: str) -> str:
    """The recommended action for one flag (a generic line for a flag this version lacks)."""
    try:
        return FLAG_ACTIONS[Flag(flag)]
    except ValueError:
        return f"Unrecognised finding {flag!r}: investigate."


def error_action(code: str | None) -> str:
    """The provider catalogue's recommended action for an error code ("" without a code)."""
    if code is None or code == "":
        return ""
    from recon.provider.codes import lookup

    return lookup(code).action


def _code_actions(codes: pd.Series) -> pd.Series:
    present = codes.notna() & (codes.astype(object).fillna("") != "")
    uniq = {str(c): error_action(str(c)) for c in pd.unique(codes[present])}
    return codes.astype(object).where(present, "").map(uniq).astype(object).fillna("")


def exception_actions(exceptions: pd.DataFrame) -> pd.Series:
    """One recommended action per exception row (flag line, plus the catalogue's if it applies)."""
    flags = exceptions["flag"].astype(object)
    base = flags.map({f: flag_action(str(f)) for f in pd.unique(flags)}).astype(object)
    code_lines = _code_actions(exceptions["error_code"])
    with_code = flags.isin(_CODE_APPLIES) & (code_lines != "")
    action = base.where(~with_code, base + " Provider: " + code_lines)
    cleared = exceptions["status"].astype(object) == FlagStatus.CLEARED
    return action.where(~cleared, CLEARED_ACTION).astype(object)


def _flags_action(flags_text: str) -> str:
    """The actions of a payout's ``exceptions`` cell (``a;b``), the most urgent flag first."""
    order = {f.value: i for i, f in enumerate(Flag)}  # Flag's order is the order of urgency
    flags = sorted((f for f in flags_text.split(";") if f), key=lambda f: order.get(f, len(order)))
    return " ".join(flag_action(f) for f in flags)


def payout_actions(payouts: pd.DataFrame) -> pd.Series:
    """One action per payout: its flags' lines (most urgent first), the catalogue's advice for
    its error code where that helps (a failed or aborted payout, a stale or unfetched one), "" for
    a payout that needs nothing.

    A late settlement is the double-payment risk, so filtering payouts.csv on "has an action"
    must find it (issue 17): every flagged payout gets one, not only failed ones.
    """
    # Few distinct (flags, failed, code) combinations exist: build each action once (a million
    # payouts would otherwise concatenate a million strings several times over).
    keys = pd.DataFrame(
        {
            "flags": payouts["exceptions"].astype(object).where(payouts["exceptions"].notna(), ""),
            "failed": payouts["outcome"].astype(object).isin(FAILED_OUTCOMES),
            "code": payouts["error_code"].astype(object).where(payouts["error_code"].notna(), ""),
        },
        index=payouts.index,
    )
    group = keys.groupby(["flags", "failed", "code"], sort=False).ngroup()
    combos = keys.drop_duplicates().to_dict("records")
    texts = [_payout_action(str(c["flags"]), bool(c["failed"]), str(c["code"])) for c in combos]
    return pd.Series(texts, dtype=object).take(group.to_numpy()).set_axis(payouts.index)


def _payout_action(flags_text: str, failed: bool, code: str) -> str:
    code_line = error_action(code)
    parts = [_flags_action(flags_text)]
    if failed and Flag.REVERSED_AFTER_SETTLEMENT in flags_text.split(";"):
        # The ordinary failed-payout advice ("ask why before paying again") would invite a
        # re-payment of money booked as paid; the provider's line is kept as information.
        parts.append("Provider: " + code_line if code_line else "")
    elif failed:
        parts.append(code_line or NO_CODE_ACTION)
    elif code_line and any(f in _CODE_APPLIES for f in flags_text.split(";")):
        parts.append("Provider: " + code_line)
    return " ".join(p for p in parts if p)
