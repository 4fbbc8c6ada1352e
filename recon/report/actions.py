"""What a person should do about each finding: its kind's line, the provider's advice per code.

The kinds' lines are declared with them (:mod:`recon.reconcile.kinds`); the error-code lines come
from the provider's catalogue (``recon.provider.codes``), so a new code the catalogue learns shows
up here without a change.
"""

from __future__ import annotations

import pandas as pd

from recon.constants import FAILED_OUTCOMES, FlagStatus
from recon.reconcile.kinds import URGENCY, kind_of

CLEARED_ACTION = "Cleared since the previous run: no action needed."
NO_CODE_ACTION = (
    "The payout failed without an error code: ask the provider why before paying out again."
)


def flag_action(flag: str) -> str:
    """The recommended action for one kind (a generic line for a name this version lacks)."""
    kind = kind_of(flag)
    return kind.action if kind is not None else f"Unrecognised finding {flag!r}: investigate."


def _provider_advice(flag: object) -> bool:
    """The payout's current error code explains the finding, so the provider's advice helps."""
    kind = kind_of(flag)
    return kind is not None and kind.provider_advice


def _no_repay(flags: list[str]) -> bool:
    """A finding says the money is booked as paid: no advice to pay again goes with it."""
    return any((k := kind_of(f)) is not None and not k.repay_advice for f in flags)


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
    with_code = flags.map(_provider_advice).astype(bool) & (code_lines != "")
    action = base.where(~with_code, base + " Provider: " + code_lines)
    cleared = exceptions["status"].astype(object) == FlagStatus.CLEARED
    return action.where(~cleared, CLEARED_ACTION).astype(object)


def _flags_action(flags: list[str]) -> str:
    """The actions of a payout's findings, the most urgent first."""
    ordered = sorted(flags, key=lambda f: URGENCY.get(f, len(URGENCY)))
    return " ".join(flag_action(f) for f in ordered)


def payout_actions(payouts: pd.DataFrame) -> pd.Series:
    """One action per payout: its flags' lines (most urgent first), the catalogue's advice for
    its error code where that helps (a failed or aborted payout, a stale or unfetched one), "" for
    a payout that needs nothing.

    A late settlement is the double-payment risk, so filtering payouts.csv on "has an action"
    must find it: every flagged payout gets one, not only failed ones.
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
    flags = [f for f in flags_text.split(";") if f]
    parts = [_flags_action(flags)]
    if failed and _no_repay(flags):
        # The ordinary failed-payout advice ("ask why before paying again") would invite a
        # re-payment of money booked as paid; the provider's line is kept as information.
        parts.append("Provider: " + code_line if code_line else "")
    elif failed:
        parts.append(code_line or NO_CODE_ACTION)
    elif code_line and any(_provider_advice(f) for f in flags):
        parts.append("Provider: " + code_line)
    return " ".join(p for p in parts if p)


def advises_repay(flags_text: object) -> bool:
    """Whether the ordinary advice for a failed payout (pay again) may go with its findings."""
    text = "" if flags_text is None or pd.isna(flags_text) else str(flags_text)  # type: ignore[call-overload]
    return not _no_repay([f for f in text.split(";") if f])
