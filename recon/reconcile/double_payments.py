"""Double payments: a late settlement whose candidate duplicate also settled. Pure.

A payout reported failed that the bank pays out after all is a late settlement; the later payouts
of the same amount to the same bank account or customer are its candidate duplicates (the
re-payments a merchant makes believing it failed). When the late settlement and one of those
candidates have both settled, the customer was paid twice: shown before every other finding, naming
the re-payments and the amount paid twice.

The amount paid twice is what reached the customer beyond the one payment owed: the late
settlement's amount less its confirmed returns, plus each settled candidate's amount less its
confirmed returns, minus the late settlement's amount. A re-payment that came back in full is no
double payment; two settled re-payments pay twice the amount more.

Choices made here, which the rule alone leaves open:

- Settled means ``settled`` or ``returned`` on both sides (a returned payout did leave; its returns
  are subtracted). A candidate still in flight is the late settlement's own advice ("recover the
  duplicate"), not yet money paid twice.
- A confirmed return whose amount does not fit its currency (``returned_minor`` <NA>) counts as
  nothing came back: the finding errs on the side of a person looking.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import SETTLED_OUTCOMES, ItemStatus, TxState
from recon.frames import ItemKind, PayoutsOut
from recon.reconcile.finding import Found, Kind, Money, findings, no_findings
from recon.reconcile.late import LATE_SETTLEMENT, candidates_of
from recon.reconcile.outcomes import Tonight
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.work import Mask, mask
from recon.run_frames import ProviderItems, Recorded

_P = PayoutsOut

DOUBLE_PAYMENT = Kind(
    name="double_payment",
    items=(ItemKind.PAYOUT, ItemKind.PROVIDER),
    label="Paid twice",
    action=(
        "Paid more than once: the payouts named in the detail all settled (one reported failed and "
        "paid out after all, or one the provider made that the record lacks). Recover the amount "
        "paid too much from the customer, or ask the provider to recall a payout; do not pay this "
        "customer again; import a payout the record lacks."
    ),
    detail=(
        "{% if unrecorded is defined %}paid "
        "{{ 'twice' if members|length == 2 else members|length ~ ' times' }}: the provider made "
        "payout {{ unrecorded }} of {{ amount_minor|money(currency) }} that the record lacks, "
        "and the record's {{ twins|join(', ') }} settled too; "
        "{{ paid_twice_minor|money(currency) }} paid too much"
        "{% else %}{{ paid_twice_minor|money(currency) }} paid twice: settled after it was "
        "reported failed, and its re-payment {{ repaid_by|join(';') }} settled too{% endif %}"
    ),
    same_when=("paid_twice_minor", "currency", "repaid_by", "twins", *PAYOUT_FACTS),
    alarm=True,
    money=Money.PAID_TWICE,
)


def paid_twice(payouts: pd.DataFrame, late: Mask) -> pd.DataFrame:
    """Per payout (on ``payouts``' index): ``repaid_by``, its settled candidate duplicates
    (``;``-joined, "" when none), and ``paid_twice_minor``, the amount paid more than once (0 when
    it is no double payment); see the module docstring for the rule.

    ``payouts``: ``transaction_id``, ``amount_minor``, ``currency``, ``outcome``,
    ``returned_minor``, ``candidate_duplicates``; ``late``: which are late settlements.
    """
    out = pd.DataFrame(
        {
            "repaid_by": pd.Series("", index=payouts.index, dtype=fr.TEXT),
            "paid_twice_minor": pd.Series(0, index=payouts.index, dtype="Int64"),
        }
    )
    if not late.any():  # most nights: no late settlement, so nothing can be paid twice
        return out
    outcome = payouts[_P.OUTCOME].astype("string")
    settled = mask(outcome.isin(SETTLED_OUTCOMES))
    amount = payouts[_P.AMOUNT_MINOR].astype("Int64")
    net = (amount - payouts[_P.RETURNED_MINOR].astype("Int64").fillna(0)).fillna(0)
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
    """Where a late settlement's re-payment settled too: the amount paid twice and who repaid it;
    its members are the late settlement and the re-payments."""
    late = found[LATE_SETTLEMENT]
    # The candidates column only when there are late settlements to read it (a copy of the frame).
    with_candidates = (
        work.assign(**{_P.CANDIDATE_DUPLICATES: candidates_of(found)}) if late.mask.any() else work
    )
    paid = paid_twice(with_candidates, late.mask)
    double = mask(paid["paid_twice_minor"] > 0)
    # Lists only where one is paid twice (only the masked rows are read): most nights none is,
    # and a list per payout cost more than the rule (the collector walks every one made).
    repaid = np.full(len(work), None, dtype=object)
    members = np.full(len(work), None, dtype=object)
    if double.any():
        ids = work[_P.TRANSACTION_ID].astype(str).tolist()
        by = paid["repaid_by"].fillna("").tolist()
        for at in np.flatnonzero(double).tolist():
            repaid[at] = by[at].split(";") if by[at] else []
            members[at] = sorted([ids[at], *repaid[at]])
    return Found(
        double,
        pd.DataFrame(
            {
                "paid_twice_minor": paid["paid_twice_minor"],
                "at_stake_minor": paid["paid_twice_minor"],
                "currency": work[_P.CURRENCY],
                "repaid_by": repaid,
                "members": members,
            },
            index=work.index,
        ),
    )


def paid_by_the_provider_too(
    items: pd.DataFrame, recorded: pd.DataFrame, payouts: pd.DataFrame
) -> pd.DataFrame:
    """Payouts the provider made that the record lacks, settled, whose twins in the record (the
    same bank account, amount and currency, or the same merchant_reference and amount) settled
    too: the customer was paid once for each (:class:`recon.frames.Findings`, on the provider's
    item). ``items``: the provider's side as judged tonight; ``recorded``: the recorded payouts
    that may repeat them; ``payouts``: tonight's decided payouts (their outcome wins)."""
    made = items[
        (items[ProviderItems.STATUS].astype(str) == ItemStatus.PAYOUT)
        & (items[ProviderItems.STATE].astype("Int64") == int(TxState.SETTLED)).fillna(False)
    ]
    if made.empty or recorded.empty:
        return no_findings()
    tonight = payouts.set_index(_P.TRANSACTION_ID)[_P.OUTCOME].astype("string")
    rec = recorded.assign(
        outcome=recorded[Recorded.TRANSACTION_ID].map(tonight).fillna(recorded[Recorded.OUTCOME]),
        currency=recorded[Recorded.CURRENCY].str.upper(),
    )
    settled = rec[rec[Recorded.OUTCOME].isin(SETTLED_OUTCOMES).fillna(False).to_numpy(dtype=bool)]
    rows = []
    for item in made.to_dict("records"):
        code = str(item[ProviderItems.CURRENCY]).upper()
        same = settled[
            (settled[Recorded.AMOUNT_MINOR] == item[ProviderItems.AMOUNT_MINOR]).fillna(False)
            & (settled[Recorded.CURRENCY] == code).fillna(False)
            & (
                (
                    settled[Recorded.BANK_ACCOUNT_ID] == item[ProviderItems.TO_BANK_ACCOUNT_ID]
                ).fillna(False)
                | (
                    settled[Recorded.MERCHANT_REFERENCE] == item[ProviderItems.MERCHANT_REFERENCE]
                ).fillna(False)
            )
        ]
        twins = sorted(same[Recorded.TRANSACTION_ID].astype(str))
        if not twins:
            continue
        minor = int(item[ProviderItems.AMOUNT_MINOR])
        rows.append(
            {
                "id": str(item[ProviderItems.TRANSACTION_ID]),
                "unrecorded": str(item[ProviderItems.TRANSACTION_ID]),
                "twins": twins,
                "members": sorted([str(item[ProviderItems.TRANSACTION_ID]), *twins]),
                "amount_minor": minor,
                "currency": code,
                "paid_twice_minor": minor * len(twins),
                "at_stake_minor": minor * len(twins),
            }
        )
    columns = ["id", "unrecorded", "twins", "members", "amount_minor", "currency"]
    facts = pd.DataFrame(rows, columns=[*columns, "paid_twice_minor", "at_stake_minor"])
    return findings(
        DOUBLE_PAYMENT,
        ItemKind.PROVIDER,
        facts["id"].astype("string"),
        Found(np.ones(len(facts), dtype=bool), facts.drop(columns="id")),
    )


__all__ = ["DOUBLE_PAYMENT", "double_payment", "paid_by_the_provider_too", "paid_twice"]
