"""Returned-funds transactions: the best evidence for each, and the payout it belongs to.

Steps of :func:`recon.reconcile.classify.classify`; which returns a run knows and asks about is
:mod:`recon.reconcile.return_polls`. A return is confirmed only by the provider's own answers (see
:mod:`recon.reconcile.classify`); a notification is a claim. :func:`best_evidence` is the one rule
for which answer speaks for a return.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import NOT_FETCHED, ObsStatus, Outcome, TxType
from recon.errors import InputError
from recon.frames import Observations, PayoutsOut, ReturnsJudged
from recon.reconcile.work import W, answer_col, codes, mask

_P = PayoutsOut
_R = ReturnsJudged
_SETTLED = (Outcome.SETTLED, Outcome.RETURNED)


def collapse_returns(ret: pd.DataFrame) -> pd.DataFrame:
    """One row per return id: notified if any row is, the distinct claims counted and joined."""
    if ret[_R.RETURN_ID].isna().any():
        raise InputError("returns: return_id must be present on every row")
    claims = (
        ret[[_R.RETURN_ID, _R.CLAIMED_ORIGINAL_ID]]
        .dropna()
        .drop_duplicates()
        .sort_values([_R.RETURN_ID, _R.CLAIMED_ORIGINAL_ID])
        .groupby(_R.RETURN_ID, sort=False)[_R.CLAIMED_ORIGINAL_ID]
        .agg([";".join, "size"])
        .set_axis([W.CLAIMS, W.N_CLAIMS], axis=1)
    )
    grouped = ret.groupby(_R.RETURN_ID, sort=True)
    first = grouped.first().drop(columns=[_R.NOTIFIED])
    out = (
        first.assign(**fr.columns({_R.NOTIFIED: grouped[_R.NOTIFIED].any()}))
        .join(claims)
        .reset_index()
    )
    single = mask(out[W.N_CLAIMS].eq(1))
    return out.assign(
        **fr.columns(
            {
                W.N_CLAIMS: out[W.N_CLAIMS].fillna(0).astype("int64"),
                _R.CLAIMED_ORIGINAL_ID: out[W.CLAIMS].where(single).astype(fr.TEXT),
            }
        )
    ).astype(fr.ReturnsIn.dtypes())


def link_returns(
    work: pd.DataFrame, obs: pd.DataFrame, ret: pd.DataFrame, ids: pd.Index
) -> pd.DataFrame:
    """Every known return with the payout the provider confirms it for, and its flags."""
    frame = ret.pipe(best_evidence, obs).pipe(_filled)
    status = frame[_R.OBS_STATUS]
    is13 = mask(status.eq(ObsStatus.OK) & frame[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS))
    # Interface 3.3 links a type-13 transaction "by original_transaction_id"; the meaning of
    # related_transaction_id is unpublished (the sandbox sets it): the second word only.
    own = frame[_R.OBS_ORIGINAL_TRANSACTION_ID].fillna(frame[_R.OBS_RELATED_TRANSACTION_ID])
    frame = frame.assign(**fr.columns({W.IS13: is13, W.OWN_LINK: own.where(is13)}))
    # The provider's latest word is a 404: an earlier confirmation no longer holds, but the payout
    # it named stays the return's original (what return_changed is about).
    former = frame[_R.CONFIRMED_ORIGINAL_ID]
    confirmed_for = (
        frame[W.OWN_LINK]
        .fillna(_payout_side_links(work, frame))
        .fillna(former.where(~mask(status.eq(ObsStatus.NOT_FOUND))))
    )
    claimed = frame[_R.CLAIMED_ORIGINAL_ID]
    original = confirmed_for.fillna(former).fillna(claimed)
    currency = frame[_R.OBS_CURRENCY].str.upper()
    # The payout each confirmed return belongs to: its currency, and whether it is settled.
    at = ids.get_indexer(pd.Index(confirmed_for))
    known = at >= 0
    # Upper-cased only for the payouts returns name, not for every payout.
    currencies = work[_P.CURRENCY]
    payout_currency = pd.Series(pd.NA, index=frame.index, dtype=fr.TEXT)
    payout_currency[known] = currencies.iloc[at[known]].str.upper().to_numpy()
    named = ids.get_indexer(pd.Index(original))
    claimed_currency = pd.Series(pd.NA, index=frame.index, dtype=fr.TEXT)
    claimed_currency[named >= 0] = currencies.iloc[named[named >= 0]].str.upper().to_numpy()
    settled = np.zeros(len(frame), dtype=bool)
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    settled[known] = np.isin(outcome[at[known]], codes(_SETTLED))
    return frame.assign(
        **fr.columns(
            {
                W.CONFIRMED_FOR: confirmed_for,
                _R.CONFIRMED: confirmed_for.notna().to_numpy(),
                _R.ORIGINAL_ID: original,
                _R.MATCHED: ids.get_indexer(pd.Index(original)) >= 0,
                _R.AMOUNT_MINOR: frame[_R.OBS_AMOUNT_MINOR],
                _R.CURRENCY: currency,
                W.PAYOUT_CURRENCY: payout_currency,
                W.CLAIMED_CURRENCY: claimed_currency,
                W.PAYOUT_SETTLED: settled,
                W.SAME_CURRENCY: mask(currency.eq(payout_currency)),
            }
        )
    ).sort_values(_R.RETURN_ID, ignore_index=True)


EVIDENCE: list[str] = [
    _R.OBS_STATUS,
    _R.OBS_TYPE,
    _R.OBS_RELATED_TRANSACTION_ID,
    _R.OBS_ORIGINAL_TRANSACTION_ID,
    _R.OBS_AMOUNT_MINOR,
    _R.OBS_CURRENCY,
]


def best_evidence(ret: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """The one rule for which answer speaks for a return, and type-13 ids seen only this run.

    ``ret`` carries the best earlier evidence (``obs_*``: the latest ``ok`` answer of another
    run, or its ``not_found`` one for a return once confirmed, if any); ``obs`` holds this run's
    answers. This run's ``ok``/``not_found`` answer wins (the latest answer speaks: a confirmed
    return the provider now answers smaller, or not at all, is what the provider says now); else
    the earlier one stays; else this run's ``error`` (or ``refused``, ``wrong_id``) shows as such.
    Applying it twice gives the same frame.
    """
    now = obs.rename(
        columns={Observations.TRANSACTION_ID: _R.RETURN_ID}
        | {c: f"obs_{c}" for c in obs.columns if c != Observations.TRANSACTION_ID}
    )
    seen13 = now[now[_R.OBS_STATUS].eq(ObsStatus.OK) & now[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS)]
    new_ids = seen13.loc[~seen13[_R.RETURN_ID].isin(ret[_R.RETURN_ID]), [_R.RETURN_ID]]
    frame = pd.concat([ret, new_ids], ignore_index=True).merge(
        now[[_R.RETURN_ID, *EVIDENCE]], how="left", on=_R.RETURN_ID, suffixes=("", "_now")
    )
    now_status = frame[f"{_R.OBS_STATUS}_now"]
    use_now = mask(now_status.isin([ObsStatus.OK, ObsStatus.NOT_FOUND]))
    # An answer about another id is no evidence either, but says what happened: its status and
    # the id it was about (related_transaction_id) show, as a fetch error's status does.
    failed_now = mask(now_status.isin([*NOT_FETCHED, ObsStatus.WRONG_ID])) & ~mask(
        frame[_R.OBS_STATUS].isin([ObsStatus.OK, ObsStatus.NOT_FOUND])
    )
    wrong_now = failed_now & mask(now_status.eq(ObsStatus.WRONG_ID))
    chosen: dict[str, pd.Series] = {c: frame[f"{c}_now"].where(use_now, frame[c]) for c in EVIDENCE}
    chosen[_R.OBS_STATUS] = chosen[_R.OBS_STATUS].mask(failed_now, now_status)
    related = _R.OBS_RELATED_TRANSACTION_ID
    chosen[related] = chosen[related].mask(wrong_now, frame[f"{related}_now"])
    return frame.assign(**fr.columns(chosen)).drop(columns=[f"{c}_now" for c in EVIDENCE])


def _filled(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows added for this run's type-13 ids are not notified and have no claims."""
    return frame.assign(
        **fr.columns(
            {
                _R.NOTIFIED: mask(frame[_R.NOTIFIED]),
                W.N_CLAIMS: frame[W.N_CLAIMS].fillna(0).astype("int64"),
            }
        )
    )


def _payout_side_links(work: pd.DataFrame, frame: pd.DataFrame) -> pd.Series:
    """The payout naming a type-13 return in its own answer, when exactly one does so."""
    related = answer_col(Observations.RELATED_TRANSACTION_ID)
    named = work.loc[work[W.OK] & work[related].notna(), [_P.TRANSACTION_ID, related]]
    pairs = named.merge(
        frame.loc[frame[W.IS13], [_R.RETURN_ID, W.OWN_LINK]],
        left_on=related,
        right_on=_R.RETURN_ID,
    )
    agrees = pairs[W.OWN_LINK].isna() | pairs[W.OWN_LINK].eq(pairs[_P.TRANSACTION_ID])
    pairs = pairs[mask(agrees)].drop_duplicates([_R.RETURN_ID, _P.TRANSACTION_ID])
    unique = pairs.drop_duplicates(_R.RETURN_ID, keep=False)
    link = frame[[_R.RETURN_ID]].merge(
        unique[[_R.RETURN_ID, _P.TRANSACTION_ID]], how="left", on=_R.RETURN_ID
    )
    return link[_P.TRANSACTION_ID].astype(fr.TEXT).set_axis(frame.index)
