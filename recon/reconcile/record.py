"""What the store must record of a classified run: which payouts changed, and who ever failed.

Pure rules over the classified payouts frame (:class:`recon.frames.PayoutsDecided`):

- ``record_changed``: any reconciled column (outcome, state, error code, returned amount,
  exceptions, candidate duplicates, the provider's fee and its id, the agreed fee and its entry)
  differs from the previous run's; two missing values are equal.
  Such a payout gets a history row, so any past run can be reported from the store.
- ``ever_failed_now``: it was failed or aborted in some run, this one included (late_settlement
  looks at it).
- ``settled_since_now``: when a run first saw it settled or returned, for its latest such stretch:
  this run's time when it turns settled or returned from anything else, kept otherwise (a failed
  payout keeps it, which is what makes it a reversal, :mod:`recon.reconcile.reversals`).
- ``next_check_at``: when the watch schedule (:mod:`recon.reconcile.watch`) makes it due again,
  counted from this run for a payout answered now or whose outcome changed; kept otherwise. A
  check that fell due and got no answer stays due whatever else moved (a fetch that failed, an
  outcome a confirmed return changed): only an answer spends it.
- ``answered``: this run has an answer about it. Only an answer spends evidence: the store moves
  ``last_checked_at`` (which a callback hint is compared with) for answered payouts alone, so a
  fetch that failed leaves the hint for the next run.
- ``write``: its row in the store is written: changed, polled (its last check time moves),
  ``ever_failed``, ``settled_since``, ``next_check_at`` or the provider's settled time
  (``settled_at``, kept on the payout, in no history row) changed, or the provider's
  ``created``/``eta`` filled in what the record lacked.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon import frames as fr
from recon.constants import FAILED_OUTCOMES, SETTLED_OUTCOMES
from recon.frames import Column, PayoutsDecided
from recon.reconcile.outcomes import settled_before
from recon.reconcile.watch import WatchParams, next_checks

_P = PayoutsDecided
# Each reconciled column beside the input column holding its previous value.
RECONCILED: tuple[tuple[Column, Column, str], ...] = (
    (_P.OUTCOME, _P.PREV_OUTCOME, "string"),
    (_P.STATE, _P.PREV_STATE, "Int64"),
    (_P.ERROR_CODE, _P.PREV_ERROR_CODE, "string"),
    (_P.RETURNED_MINOR, _P.PREV_RETURNED_MINOR, "Int64"),
    (_P.EXCEPTIONS, _P.PREV_EXCEPTIONS, "text"),
    (_P.CANDIDATE_DUPLICATES, _P.PREV_CANDIDATE_DUPLICATES, "text"),
    (_P.FEE_MINOR, _P.PREV_FEE_MINOR, "Int64"),
    (_P.FEE_ID, _P.PREV_FEE_ID, "string"),
    (_P.FEE_EXPECTED_MINOR, _P.PREV_FEE_EXPECTED_MINOR, "Int64"),
    (_P.FEE_ENTRY, _P.PREV_FEE_ENTRY, "string"),
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


def with_record(
    payouts: pd.DataFrame,
    record: pd.DataFrame,
    answered: pd.Series,
    *,
    as_of: pd.Timestamp,
    watch: WatchParams,
) -> pd.DataFrame:
    """The classified payouts with :class:`recon.frames.PayoutsDecided` added.

    ``record``: the payouts as the store gave them (row for row), to see which ``created`` and
    ``eta`` the provider's answer filled in (kept). ``answered``: per payout, whether this run has
    an answer about it (ok or not found).
    """
    changed = pd.Series(False, index=payouts.index)
    for column, previous, kind in RECONCILED:
        if changed.all():  # a first night: every outcome is new, so the rest cannot add one
            break
        changed |= _differs(_typed(payouts[column], kind), _typed(payouts[previous], kind))
    was_failed = payouts[_P.EVER_FAILED].astype(bool)
    failed_now = (
        payouts[_P.OUTCOME].astype("string").isin(FAILED_OUTCOMES).fillna(False).astype(bool)
    )
    ever_failed = was_failed | failed_now
    settled = [o.value for o in SETTLED_OUTCOMES]
    settles_now = payouts[_P.OUTCOME].isin(settled) & ~payouts[_P.PREV_OUTCOME].isin(settled)
    kept_settled: pd.Series = payouts[_P.SETTLED_SINCE]
    settled_since = payouts[_P.OUTCOME_SINCE].where(settles_now, settled_before(payouts))
    before: pd.Series = payouts[_P.PREV_NEXT_CHECK_AT]
    counted = answered.to_numpy(dtype=bool) | payouts[_P.OUTCOME_CHANGED].to_numpy(dtype=bool)
    fresh = next_checks(payouts[_P.OUTCOME], payouts[_P.OUTCOME_SINCE], as_of, watch)
    # A check that fell due and got no answer stays due, even when the outcome moved without one
    # (a return confirmed for it): only an answer spends it.
    still_due = ~answered.to_numpy(dtype=bool) & (before <= as_of).fillna(False).to_numpy()
    due = fresh.where(counted & ~still_due | before.isna().to_numpy(), before)
    filled = pd.Series(False, index=payouts.index)
    for column in (_P.CREATED, _P.ETA):
        filled |= record[column].isna().to_numpy() & payouts[column].notna().to_numpy()
    created_filled = record[_P.CREATED].isna().to_numpy() & payouts[_P.CREATED].notna().to_numpy()
    write = (
        changed
        | filled
        | payouts[_P.POLLED].astype(bool)
        | (ever_failed != was_failed)
        | _differs(settled_since, kept_settled)
        | _differs(due, before)
        | _differs(payouts[_P.SETTLED_AT], payouts[_P.PREV_SETTLED_AT])
    )
    return payouts.assign(
        **fr.columns(
            {
                _P.RECORD_CHANGED: changed.to_numpy(),
                _P.EVER_FAILED_NOW: ever_failed.to_numpy(),
                _P.SETTLED_SINCE_NOW: settled_since.astype(fr.TIME),
                _P.NEXT_CHECK_AT: due.astype(fr.TIME),
                _P.ANSWERED: answered.to_numpy(dtype=bool),
                _P.CREATED_FILLED: created_filled,
                _P.WRITE: write.to_numpy(),
            }
        )
    )
