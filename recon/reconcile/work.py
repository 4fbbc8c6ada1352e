"""Working columns and small helpers shared by the classification steps (outcomes and returns).

Working columns start with ``_`` and never leave :func:`recon.reconcile.classify.classify`.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon.constants import Outcome
from recon.frames import PayoutsIn

Mask = npt.NDArray[np.bool_]
OUTCOMES = [o.value for o in Outcome]
# Outcome -> its code in the OUTCOME categorical (the order of the enum).
CODE = {o: OUTCOMES.index(o.value) for o in Outcome}


class W(StrEnum):
    """Working columns, dropped before the result is returned."""

    OK = "_ok"
    NOT_FOUND = "_not_found"
    SESSION = "_session"  # the id is a session's (session_id_recorded)
    WRONG_ID = "_wrong_id"  # the answer is about another id (wrong_transaction)
    FETCHED = "_fetched"
    CLAIMS = "_claims"
    N_CLAIMS = "_n_claims"
    IS13 = "_is13"
    OWN_LINK = "_own_link"
    CONFIRMED_FOR = "_confirmed_for"
    PAYOUT_SETTLED = "_payout_settled"  # the payout a return is confirmed for is settled
    SAME_CURRENCY = "_same_currency"  # the return is in its payout's currency
    PAYOUT_CURRENCY = "_payout_currency"
    CLAIMED_CURRENCY = "_claimed_currency"  # the currency of the payout a notification names


def answer_col(column: str) -> str:
    """The name of this run's answer column beside a payout (``obs_state`` ...)."""
    return f"obs_{column}"


def mask(series: pd.Series) -> Mask:
    """A boolean array where missing counts as False."""
    return series.astype("boolean").to_numpy(dtype=bool, na_value=False)


def codes(outcomes: tuple[Outcome, ...]) -> list[int]:
    """The categorical codes of some outcomes."""
    return [CODE[o] for o in outcomes]


def carried(work: pd.DataFrame, name: str) -> Mask:
    """Where a finding that needs an answer (its kind's ``name``) stood after the previous run
    and there is no answer now: it is kept (carried) until one comes."""
    previous = work[PayoutsIn.PREV_EXCEPTIONS]
    had = ~work[W.FETCHED].to_numpy() & previous.notna().to_numpy()
    kept = np.zeros(len(work), dtype=bool)
    kept[had] = mask((";" + previous[had] + ";").str.contains(f";{name};", regex=False))
    return kept
