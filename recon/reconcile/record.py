"""What the store must record of a classified run: which payouts changed, and who ever failed.

Pure rules over the classified payouts frame (:data:`recon.frames.RECORD_OUT`):

- ``record_changed``: any reconciled column (outcome, state, error code, returned amount,
  exceptions, candidate duplicates) differs from the previous run's; two missing values are equal.
  Such a payout gets a history row, so any past run can be reported from the store.
- ``ever_failed_now``: it was failed or aborted in some run, this one included (late_settlement
  looks at it).
- ``write``: its row in the store is written: changed, polled (its last check time moves), or
  ``ever_failed`` changed.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon import frames as fr
from recon.constants import Outcome
from recon.frames import PayoutCol

_P = PayoutCol
_FAILED = [Outcome.FAILED.value, Outcome.ABORTED.value]
# Each reconciled column beside the input column holding its previous value.
RECONCILED: tuple[tuple[PayoutCol, PayoutCol, str], ...] = (
    (_P.OUTCOME, _P.PREV_OUTCOME, "string"),
    (_P.STATE, _P.PREV_STATE, "Int64"),
    (_P.ERROR_CODE, _P.PREV_ERROR_CODE, "string"),
    (_P.RETURNED_MINOR, _P.PREV_RETURNED_MINOR, "Int64"),
    (_P.EXCEPTIONS, _P.PREV_EXCEPTIONS, "text"),
    (_P.CANDIDATE_DUPLICATES, _P.PREV_CANDIDATE_DUPLICATES, "text"),
)


def _typed(column: pd.Series, kind: str) -> pd.Series:
    # Flag lists are "" when empty and may be missing before a first run: the same thing.
    if kind == "text":
        return column.astype("string").fillna("")
    dtype: Any = kind
    return column.astype(dtype)


def _differs(a: pd.Series, b: pd.Series) -> pd.Series:
    """Elementwise "not equal", where two missing values are equal."""
    same = (a == b).fillna(False).astype(bool) | (a.isna() & b.isna())
    return ~same


def with_record(payouts: pd.DataFrame) -> pd.DataFrame:
    """The classified payouts with :data:`recon.frames.RECORD_OUT` added."""
    changed = pd.Series(False, index=payouts.index)
    for now, before, kind in RECONCILED:
        changed |= _differs(_typed(payouts[now], kind), _typed(payouts[before], kind))
    was_failed = payouts[_P.EVER_FAILED].astype(bool)
    failed_now = payouts[_P.OUTCOME].astype("string").isin(_FAILED).fillna(False).astype(bool)
    ever_failed = was_failed | failed_now
    write = changed | payouts[_P.POLLED].astype(bool) | (ever_failed != was_failed)
    return payouts.assign(
        **fr.columns(
            {
                _P.RECORD_CHANGED: changed.to_numpy(),
                _P.EVER_FAILED_NOW: ever_failed.to_numpy(),
                _P.WRITE: write.to_numpy(),
            }
        )
    )
