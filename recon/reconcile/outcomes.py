"""Payout outcomes: this run's answer beside each payout, the state rules, the returns' sums.

Steps of :func:`recon.reconcile.classify.classify` (its docstring has the rules and the choices):
each takes the working frame and returns it with more columns, reading no clock, store or network.
The findings on payouts are their own rules' (:mod:`recon.reconcile.kinds` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import SETTLED_OUTCOMES, ObsStatus, Outcome, TxState
from recon.frames import Observations, PayoutsOut, ReturnsJudged
from recon.reconcile.pricing import FeeRules
from recon.reconcile.work import CODE, Mask, W, answer_col, mask

DELAYED_IN_BANK = "transaction_is_delayed_in_bank"
_P = PayoutsOut
_R = ReturnsJudged


@dataclass(frozen=True)
class ClassifyParams:
    """Time rules: the grace after ``eta`` before completed counts as delayed, stale age, and
    how far apart same-party same-amount payouts may be created to be possible duplicates; and
    the fee rules (the agreed prices)."""

    delay_grace: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(hours=1))
    stale_days: float = 3.0
    duplicate_window: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(hours=24))
    fees: FeeRules = field(default_factory=FeeRules)


@dataclass(frozen=True)
class Tonight:
    """What every rule of a night may read besides the payouts: the run's clock and its rules."""

    as_of: pd.Timestamp
    params: ClassifyParams


def join_observations(pay: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """This run's answer beside each payout (``obs_*`` columns); answers for other ids are left."""
    answers = obs.rename(columns=answer_col)
    tid = answer_col(Observations.TRANSACTION_ID)
    aligned = (
        pay[[_P.TRANSACTION_ID]]
        .merge(answers, how="left", left_on=_P.TRANSACTION_ID, right_on=tid)
        .drop(columns=[_P.TRANSACTION_ID, tid])
        .set_axis(pay.index)
    )
    status = aligned[answer_col(Observations.STATUS)]
    ok, not_found = mask(status.eq(ObsStatus.OK)), mask(status.eq(ObsStatus.NOT_FOUND))
    session = mask(status.eq(ObsStatus.SESSION))
    wrong_id = mask(status.eq(ObsStatus.WRONG_ID))
    # The provider's created and eta stand in where the record has none (and are then kept).
    filled: dict[str, pd.Series] = {
        str(column): pay[column].fillna(aligned[answer_col(column)].where(ok))
        for column in (_P.CREATED, _P.ETA)
    }
    return pd.concat([pay.assign(**filled), aligned], axis=1).assign(
        **fr.columns(
            {
                W.OK: ok,
                W.NOT_FOUND: not_found,
                W.SESSION: session,
                W.WRONG_ID: wrong_id,
                W.FETCHED: ok | not_found | session,
            }
        )
    )


def base_outcome(work: pd.DataFrame, as_of: pd.Timestamp, params: ClassifyParams) -> pd.DataFrame:
    ok, not_found = work[W.OK].to_numpy(), work[W.NOT_FOUND].to_numpy()
    state = work[answer_col(Observations.STATE)].fillna(-1).to_numpy(dtype=np.int64)
    in_bank = mask(work[answer_col(Observations.ERROR_CODE)].eq(DELAYED_IN_BANK))
    past_eta = mask(work[_P.ETA] + params.delay_grace < as_of)
    prev = work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    codes = np.select(
        [
            ok & (state == TxState.SETTLED),
            ok & (state == TxState.FAILED),
            ok & (state == TxState.ABORTED),
            ok & (state == TxState.COMPLETED) & (in_bank | past_eta),
            ok,
            not_found,
        ],
        [
            CODE[Outcome.SETTLED],
            CODE[Outcome.FAILED],
            CODE[Outcome.ABORTED],
            CODE[Outcome.DELAYED],
            CODE[Outcome.PENDING],
            CODE[Outcome.UNKNOWN],
        ],
        default=np.where(prev >= 0, prev, CODE[Outcome.UNCHECKED]),
    )
    answered = ok | not_found
    return work.assign(
        **fr.columns(
            {
                _P.OUTCOME: pd.Categorical.from_codes(codes, dtype=fr.OUTCOME),
                _P.STATE: work[answer_col(Observations.STATE)].where(answered, work[_P.PREV_STATE]),
                _P.ERROR_CODE: work[answer_col(Observations.ERROR_CODE)].where(
                    answered, work[_P.PREV_ERROR_CODE]
                ),
                # The provider's settled time: an ok answer says it (or that there is none yet).
                _P.SETTLED_AT: work[answer_col(Observations.SETTLED)]
                .where(ok, work[_P.PREV_SETTLED_AT])
                .astype(fr.TIME),
            }
        )
    )


def apply_returns(work: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Sum confirmed returns in the payout's currency; a settled payout with any is returned, and
    a returned one with none left, because a return an earlier run confirmed for it no longer is
    (the provider's latest answer is a 404), is settled again."""
    if links.empty:  # no return known tonight: nothing came back, no outcome moves
        nothing = pd.Series(0, index=work.index, dtype=fr.MONEY)
        return work.assign(**fr.columns({_P.RETURNED_MINOR: nothing}))
    # A return in another currency is flagged, never added (SEK 4.00 is not EUR 4.00).
    confirmed = links[links[_R.CONFIRMED] & links[W.SAME_CURRENCY]]
    by_payout = confirmed.groupby(W.CONFIRMED_FOR)[_R.AMOUNT_MINOR]
    # One return whose amount does not fit its currency makes the sum unknown, not smaller.
    sums = by_payout.sum().where(by_payout.count() == by_payout.size())
    tx = work[_P.TRANSACTION_ID]
    has = tx.isin(sums.index)
    returned = tx.map(sums).astype(fr.MONEY).where(has, 0)
    outcome = work[_P.OUTCOME]
    outcome = outcome.mask(has & outcome.eq(Outcome.SETTLED), Outcome.RETURNED)
    denied = links.loc[~links[_R.CONFIRMED], _R.CONFIRMED_ORIGINAL_ID].dropna()
    lost = tx.isin(denied) & ~has
    outcome = outcome.mask(lost & outcome.eq(Outcome.RETURNED), Outcome.SETTLED)
    return work.assign(
        **fr.columns(
            {
                _P.RETURNED_MINOR: returned,
                _P.OUTCOME: outcome,
            }
        )
    )


def settled_before(work: pd.DataFrame) -> pd.Series:
    """When a run first saw the payout settled or returned (its latest such stretch), before this
    run; NaT if never. A store from before the time was kept gives the previous outcome's since."""
    was_settled = work[_P.PREV_OUTCOME].isin([o.value for o in SETTLED_OUTCOMES]).to_numpy()
    since: pd.Series = work[_P.SETTLED_SINCE].fillna(work[_P.PREV_OUTCOME_SINCE].where(was_settled))
    return since


def age_days(frame: pd.DataFrame, as_of: pd.Timestamp) -> pd.Series:
    """Days since the payout was created (else since its previous outcome), as of ``as_of``."""
    since = frame[_P.CREATED].fillna(frame[_P.PREV_OUTCOME_SINCE])
    days: pd.Series = (as_of - since).dt.total_seconds() / 86400
    return days


def summarise(work: pd.DataFrame, found: Mapping[str, Mask], as_of: pd.Timestamp) -> pd.DataFrame:
    """The exceptions cell (the kinds found, sorted by name) and the outcome history columns."""
    names = sorted(found)
    hit = np.zeros(len(work), dtype=bool)
    for name in names:
        hit |= np.asarray(found[name], dtype=bool)
    # Only the payouts something was found on have a cell to join (most have none).
    rows = np.flatnonzero(hit)
    cells = np.full(len(work), "", dtype=object)
    picked = [np.asarray(found[name], dtype=bool)[rows] for name in names]
    joined = (
        ";".join(n for n, f in zip(names, on, strict=True) if f) for on in zip(*picked, strict=True)
    )
    cells[rows] = list(joined)
    changed = work[_P.OUTCOME].cat.codes.to_numpy() != work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    since = work[_P.PREV_OUTCOME_SINCE].where(~changed, as_of).fillna(as_of)
    return work.assign(
        **fr.columns(
            {
                _P.EXCEPTIONS: pd.Series(cells, index=work.index).astype(fr.TEXT),
                _P.OUTCOME_CHANGED: changed,
                _P.OUTCOME_SINCE: since.astype(fr.TIME),
            }
        )
    )
