"""Late settlements: a payout reported failed (by an answer or a callback) that the bank paid out
after all, and the later payouts that may repeat it (its candidate duplicates).

A payout seen failed (an earlier answer, ``ever_failed``, or a transaction notification: evidence,
never an outcome) whose answer now says credited or settled is ``late_settlement``: do not pay it
again. Its candidate duplicates are the payouts created strictly after it, with the same amount and
currency, to the same bank account or customer; when either ``created`` is unknown the payout is
listed (a false alarm beats a missed double payment).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import FAILED_OUTCOMES, TxState
from recon.frames import ItemKind, Observations, PayoutsOut
from recon.reconcile.finding import Found, Kind, Mask, Money
from recon.reconcile.outcomes import Tonight
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.work import W, answer_col, carried, codes, mask

_P = PayoutsOut

LATE_SETTLEMENT = Kind(
    name="late_settlement",
    items=(ItemKind.PAYOUT,),
    label="Paid after a failure",
    action=(
        "Reported failed, then paid out by the bank: do not pay again; if it was re-paid, recover "
        "the duplicate (see candidate duplicates)."
    ),
    detail=(
        "{% if callback_at is not none %}a callback said {{ callback_state|state }} on "
        "{{ callback_at|time }}{% else %}reported failed or aborted earlier{% endif %}, now "
        "{{ state|state }}"
        "{% if candidates %}; candidate duplicates: {{ candidates|join(';') }}{% endif %}"
    ),
    same_when=("callback_state", "callback_at", "candidates", *PAYOUT_FACTS),
    carried=True,
    money=Money.POSSIBLY_TWICE,
)


def seen_failed_by_an_answer(work: pd.DataFrame) -> Mask:
    """An earlier answer said failed or aborted (``ever_failed``, or the previous outcome)."""
    prev = work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    return work[_P.EVER_FAILED].to_numpy(dtype=bool) | np.isin(prev, codes(FAILED_OUTCOMES))


def late_settlement(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    """Seen failed (by an answer or a callback), and this run's answer says credited or settled;
    or found before and not fetched since (carried). Its facts name the candidate duplicates."""
    was_failed = seen_failed_by_an_answer(work) | work[_P.CALLBACK_FAILED_AT].notna().to_numpy()
    paid = mask(work[answer_col(Observations.STATE)].isin([TxState.CREDIT, TxState.SETTLED]))
    late = work[W.OK].to_numpy() & was_failed & paid | carried(work, LATE_SETTLEMENT.name)
    return Found(late, late_facts(work, candidate_duplicates(work, late), late))


def candidate_duplicates(work: pd.DataFrame, late: Mask) -> pd.Series:
    """Per payout: the later payouts of a late settlement, ``;``-joined ("" for none)."""
    dupes = pd.Series("", index=work.index, dtype=fr.TEXT)
    rows = work.loc[late]
    if rows.empty:
        return dupes
    keys = [_P.AMOUNT_MINOR, _P.CURRENCY]
    cols = [_P.TRANSACTION_ID, _P.CREATED, *keys]
    pairs = []
    for party in (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID):
        mine = rows[[party, *cols]].dropna(subset=[party, *keys]).reset_index()
        theirs = work.loc[work[party].isin(mine[party]), [party, *cols]].dropna(subset=keys)
        pairs.append(mine.merge(theirs, on=[party, *keys], suffixes=("", "_c")))
    both = pd.concat(pairs)
    candidate, created_c = f"{_P.TRANSACTION_ID}_c", f"{_P.CREATED}_c"
    later = mask(both[created_c] > both[_P.CREATED])
    unknown = mask(both[created_c].isna() | both[_P.CREATED].isna())
    chosen = both[mask(both[candidate] != both[_P.TRANSACTION_ID]) & (later | unknown)]
    # Grouped by the late payout's row label, so the result lands without another join.
    joined = (
        chosen[["index", candidate]]
        .drop_duplicates()
        .sort_values(["index", candidate])
        .groupby("index")[candidate]
        .agg(";".join)
    )
    dupes.loc[joined.index] = joined.astype(fr.TEXT)
    return dupes


def candidates_of(found: Mapping[Kind, Found]) -> pd.Series:
    """The candidate duplicates column (``;``-joined, "" for none) from the late settlements."""
    facts = found[LATE_SETTLEMENT].facts["candidates"]
    return pd.Series([";".join(c) if c else "" for c in facts], index=facts.index, dtype=fr.TEXT)


def late_facts(work: pd.DataFrame, candidates: pd.Series, late: Mask) -> pd.DataFrame:
    """A late settlement's facts: the callback that said failed (when no answer did), the state
    now and the candidate duplicates, a list only where ``late`` (the rows read: a list per
    payout cost more than the rule, the collector walking every one made)."""
    by_callback = ~seen_failed_by_an_answer(work)
    listed = np.full(len(work), None, dtype=object)
    texts = candidates.fillna("").tolist()
    for at in np.flatnonzero(late).tolist():
        listed[at] = texts[at].split(";") if texts[at] else []
    return pd.DataFrame(
        {
            "callback_state": work[_P.CALLBACK_FAILED_STATE].where(by_callback),
            "callback_at": work[_P.CALLBACK_FAILED_AT].where(by_callback),
            "state": work[_P.STATE],
            "candidates": listed,
        },
        index=work.index,
    )
