"""Double payments: a late settlement whose candidate duplicate also settled (issue 26). Pure.

A payout reported failed that the bank pays out after all is a late settlement; the later payouts
of the same amount to the same bank account or customer are its candidate duplicates (the
re-payments a merchant makes believing it failed). When the late settlement and one of those
candidates have both settled, the customer was paid twice: shown before every other finding, naming
the re-payments and the amount paid twice.

The amount paid twice is what reached the customer beyond the one payment owed: the late
settlement's amount less its confirmed returns, plus each settled candidate's amount less its
confirmed returns, minus the late settlement's amount. A re-payment that came back in full is no
double payment; two settled re-payments pay twice the amount more.

Choices where the issue is silent:

- Settled means ``settled`` or ``returned`` on both sides (a returned payout did leave; its returns
  are subtracted). A candidate still in flight is the late settlement's own advice ("recover the
  duplicate"), not yet money paid twice.
- A confirmed return whose amount does not fit its currency (``returned_minor`` <NA>) counts as
  nothing came back: the finding errs on the side of a person looking.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from recon import frames as fr
from recon.constants import SETTLED_OUTCOMES
from recon.frames import ItemKind, PayoutCol
from recon.reconcile.finding import Found, Kind
from recon.reconcile.late import LATE_SETTLEMENT, candidates_of
from recon.reconcile.outcomes import Tonight
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.work import Mask, mask

_P = PayoutCol

DOUBLE_PAYMENT = Kind(
    name="double_payment",
    items=(ItemKind.PAYOUT,),
    label="Paid twice",
    action=(
        "Paid twice: reported failed, it was paid out after all, and its re-payment (named in the "
        "detail) settled too. Recover the amount paid twice from the customer, or ask the "
        "provider to recall one payout; do not pay this customer again."
    ),
    detail=(
        "{{ paid_twice_minor|money(currency) }} paid twice: settled after it was reported failed, "
        "and its re-payment {{ repaid_by|join(';') }} settled too"
    ),
    same_when=("paid_twice_minor", "currency", "repaid_by", *PAYOUT_FACTS),
    alarm=True,
)


def paid_twice(payouts: pd.DataFrame, late: Mask) -> pd.DataFrame:
    """Per payout (on ``payouts``' index): ``repaid_by``, its settled candidate duplicates
    (``;``-joined, "" when none), and ``paid_twice_minor``, the amount paid more than once (0 when
    it is no double payment); see the module docstring for the rule.

    ``payouts``: ``transaction_id``, ``amount_minor``, ``currency``, ``outcome``,
    ``returned_minor``, ``candidate_duplicates``; ``late``: which are late settlements.
    """
    outcome = payouts[_P.OUTCOME].astype("string")
    settled = mask(outcome.isin(SETTLED_OUTCOMES))
    amount = payouts[_P.AMOUNT_MINOR].astype("Int64")
    net = (amount - payouts[_P.RETURNED_MINOR].astype("Int64").fillna(0)).fillna(0)
    out = pd.DataFrame(
        {
            "repaid_by": pd.Series("", index=payouts.index, dtype=fr.TEXT),
            "paid_twice_minor": pd.Series(0, index=payouts.index, dtype="Int64"),
        }
    )
    cands = payouts[_P.CANDIDATE_DUPLICATES].astype(fr.TEXT).fillna("")
    rows = late & settled & mask(cands.ne(""))
    if not rows.any():
        return out
    pairs = (
        cands[rows].str.split(";").explode().rename("candidate").rename_axis("row").reset_index()
    )
    ids = payouts[_P.TRANSACTION_ID].astype(fr.TEXT)
    others = pd.DataFrame({"candidate": ids[settled], "net": net[settled]})
    pairs = pairs.merge(others, on="candidate", how="inner").sort_values(["row", "candidate"])
    grouped = pairs.groupby("row")
    received = net.loc[grouped.size().index] + grouped["net"].sum()
    surplus = (received - amount.loc[received.index]).fillna(0)
    double = surplus[mask(surplus > 0)].index
    out.loc[double, "repaid_by"] = grouped["candidate"].agg(";".join).loc[double].astype(fr.TEXT)
    out.loc[double, "paid_twice_minor"] = surplus.loc[double].astype("Int64")
    return out


def double_payment(work: pd.DataFrame, _: Tonight, found: Mapping[Kind, Found]) -> Found:
    """Where a late settlement's re-payment settled too: the amount paid twice and who repaid it."""
    late = found[LATE_SETTLEMENT]
    with_candidates = work.assign(**{_P.CANDIDATE_DUPLICATES: candidates_of(found)})
    paid = paid_twice(with_candidates, late.mask)
    return Found(
        mask(paid["paid_twice_minor"] > 0),
        pd.DataFrame(
            {
                "paid_twice_minor": paid["paid_twice_minor"],
                "currency": work[_P.CURRENCY],
                "repaid_by": [r.split(";") if r else [] for r in paid["repaid_by"].fillna("")],
            },
            index=work.index,
        ),
    )


__all__ = ["DOUBLE_PAYMENT", "double_payment", "paid_twice"]
