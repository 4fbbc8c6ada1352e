"""Reversals after settlement: a payout booked as paid that the provider now reports failed or
aborted (the mirror of a late settlement).

It stands on the outcome and on when a run first saw the payout settled (``settled_since``, else a
previous outcome of settled or returned), so it holds on nights the payout is not fetched. The money
was booked as paid: the ordinary advice for a failed payout (pay again) must not go with it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from recon.constants import FAILED_OUTCOMES
from recon.frames import ItemKind, PayoutsOut
from recon.reconcile.finding import Found, Kind
from recon.reconcile.outcomes import Tonight, settled_before
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.work import codes

_P = PayoutsOut

REVERSED_AFTER_SETTLEMENT = Kind(
    name="reversed_after_settlement",
    items=(ItemKind.PAYOUT,),
    label="Failed after being paid",
    action=(
        "Settled, then reported failed or aborted by the provider: it was booked as paid, so do "
        "not re-pay it as an ordinary failure. Ask the provider whether the money was recalled "
        "and came back; re-book and re-pay only once it confirms that."
    ),
    detail=(
        "seen settled on {% if settled_seen_at is not none %}{{ settled_seen_at|time }}"
        "{% else %}?{% endif %}, now {{ state|state }}"
        "{% if error_code is not none %}, error code {{ error_code }}{% endif %}"
    ),
    same_when=("settled_seen_at", "error_code", *PAYOUT_FACTS),
    repay_advice=False,
)


def reversed_after_settlement(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    """Failed or aborted now, and seen settled before."""
    seen = settled_before(work)
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    return Found(
        np.isin(outcome, codes(FAILED_OUTCOMES)) & seen.notna().to_numpy(),
        pd.DataFrame(
            {"settled_seen_at": seen, "state": work[_P.STATE], "error_code": work[_P.ERROR_CODE]},
            index=work.index,
        ),
    )
