"""The provider's fee on each payout: what its answers charged.

A fee is the provider's price for a payout, charged in the payout's currency and kept in minor
units. The latest answer about a payout says its fee (none: no fee yet); a payout not answered
tonight keeps the fee its latest answer said.
"""

from __future__ import annotations

import pandas as pd

from recon import frames as fr
from recon.frames import ObsCol, PayoutCol
from recon.reconcile.work import W, answer_col

_P = PayoutCol


def with_fee(work: pd.DataFrame) -> pd.DataFrame:
    """``fee_minor`` and ``fee_id``: this run's answer's where the payout was answered, else the
    fee kept from its latest answer."""
    ok = work[W.OK].to_numpy(dtype=bool)
    charged = work[answer_col(ObsCol.FEE_AMOUNT_MINOR)].where(ok, work[_P.PREV_FEE_MINOR])
    fee_id = work[answer_col(ObsCol.FEE_ID)].where(ok, work[_P.PREV_FEE_ID])
    return work.assign(
        **fr.columns({_P.FEE_MINOR: charged.astype(fr.MONEY), _P.FEE_ID: fee_id.astype(fr.TEXT)})
    )
