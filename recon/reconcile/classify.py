"""Classify the nightly run: frames in, frames out, "now" passed in (issue 4, item 3).

:func:`classify` takes the payouts in the store, this run's provider answers and what is known about
returned-funds transactions (the frame contract is in :mod:`recon.reconcile.frames`) and decides,
for every payout, exactly one outcome and zero or more exception flags. It never touches the
network, the database, the clock or files, and it is vectorised: merges, masks and ``np.select``,
never a Python loop over rows (only over the handful of flag kinds).

Outcome, from this run's ``ok`` answer: state 6 settled (returned if a confirmed return points to
it), 3 failed, 2 aborted, 4 delayed when the error code is ``transaction_is_delayed_in_bank`` or
``as_of > eta + delay_grace``, any other state pending. ``not_found`` gives unknown. A payout with
no ``ok``/``not_found`` answer (not polled, or its fetch failed) keeps ``prev_outcome``, or is
unchecked when it never had one; a fetch failure therefore never yields failed, aborted or unknown.

A return is confirmed only by the provider: its own ``ok`` answer is type 13 and names the payout
(``related_transaction_id``, else ``original_transaction_id``), or the payout's ``ok`` answer names
it in ``related_transaction_id`` while it is observed ``ok`` as type 13 (and does not name another
payout), or an earlier run confirmed it (``confirmed_original_id``). A notification alone never
confirms. Returned is reached only from settled.

Choices where issue 4 is silent:

- A state number outside 0-7 (or missing) in an ``ok`` answer is **pending**: not final, so the
  payout is polled again every night and turns ``stale`` after ``stale_days``. Settled would hide
  it, failed/aborted invite a second payment, and unknown stops polling after the re-check window.
- ``late_settlement`` uses ``ever_failed`` or a previous outcome of failed/aborted.
- Flags that need an answer (late_settlement, amount_mismatch, currency_mismatch, not_a_payout,
  unknown_transaction) are carried from ``prev_exceptions`` while a payout is not fetched (final
  payouts are not polled), so they persist instead of turning "resolved" unseen.
- In an ``ok`` answer a missing amount, currency or type counts as a mismatch (amount_mismatch,
  currency_mismatch, not_a_payout): what cannot be checked is not assumed to agree.
- ``stale`` counts from ``created``, else ``prev_outcome_since``; with neither it is not raised.
- Candidate duplicates: a later payout is one created strictly after the late one; when either
  ``created`` is unknown the payout is listed (a false alarm beats a missed double payment).
- A return's own link is ``related_transaction_id``, else ``original_transaction_id``. A
  payout-side link counts only when exactly one payout names the return. A confirmed return still
  adds to ``returned_minor`` of a payout that is not settled (its outcome does not change).
- A return whose notifications name different payouts is never verified and has no original.
- A return that could not be fetched gets ``fetch_failed`` rather than ``return_unverified``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon.constants import Flag, Outcome, TxState, TxType
from recon.errors import InputError
from recon.reconcile import frames as fr
from recon.reconcile.frames import ExceptionCol, ItemKind, ObsCol, ObsStatus, PayoutCol, ReturnCol

DELAYED_IN_BANK = "transaction_is_delayed_in_bank"
# Flags that depend on a provider answer: kept from the previous run while there is no new one.
CARRIED_FLAGS = (
    Flag.LATE_SETTLEMENT,
    Flag.AMOUNT_MISMATCH,
    Flag.CURRENCY_MISMATCH,
    Flag.NOT_A_PAYOUT,
    Flag.UNKNOWN_TRANSACTION,
)
_PAYOUT_FLAGS = (*CARRIED_FLAGS, Flag.STALE, Flag.FETCH_FAILED)
_OUTCOMES = [o.value for o in Outcome]
_CODE = {o: _OUTCOMES.index(o.value) for o in Outcome}
# The outcome for each branch of the state rules, in the order of the conditions in _base_outcome.
_BY_ANSWER = (
    Outcome.SETTLED,
    Outcome.FAILED,
    Outcome.ABORTED,
    Outcome.DELAYED,
    Outcome.PENDING,
    Outcome.UNKNOWN,
)
_FAILED = (Outcome.FAILED, Outcome.ABORTED)
_WAITING = (Outcome.PENDING, Outcome.DELAYED)
_P = PayoutCol
_R = ReturnCol

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ClassifyParams:
    """Time rules: the grace after ``eta`` before completed counts as delayed, and stale age."""

    delay_grace: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(hours=1))
    stale_days: float = 3.0


@dataclass(frozen=True)
class Classified:
    """The decision of one run: payouts, exceptions and returns (see :mod:`frames`)."""

    payouts: pd.DataFrame
    exceptions: pd.DataFrame
    returns: pd.DataFrame


class _W(StrEnum):
    """Working columns, dropped before the result is returned."""

    OK = "_ok"
    NOT_FOUND = "_not_found"
    FETCHED = "_fetched"
    CLAIMS = "_claims"
    N_CLAIMS = "_n_claims"
    IS13 = "_is13"
    OWN_LINK = "_own_link"
    CONFIRMED_FOR = "_confirmed_for"


def _obs(column: str) -> str:
    return f"obs_{column}"


def _flag(flag: Flag) -> str:
    return f"_flag_{flag}"


def _mask(series: pd.Series) -> Mask:
    return series.astype("boolean").to_numpy(dtype=bool, na_value=False)


def _codes(outcomes: tuple[Outcome, ...]) -> list[int]:
    return [_CODE[o] for o in outcomes]


def _text(series: pd.Series) -> pd.Series:
    return series.astype(fr.TEXT).fillna("?")


def classify(
    payouts: pd.DataFrame,
    observations: pd.DataFrame,
    returns: pd.DataFrame,
    *,
    as_of: pd.Timestamp,
    params: ClassifyParams | None = None,
) -> Classified:
    """Decide every payout's outcome and flags, and every return's link, as of ``as_of``."""
    params = params or ClassifyParams()
    if as_of.tzinfo is None:
        raise InputError("as_of must be a timezone-aware timestamp")
    as_of = as_of.tz_convert("UTC")
    pay, ids = _conform_payouts(payouts)
    obs = _conform_observations(observations)
    ret = fr.conform(returns, fr.RETURNS_IN, name="returns", optional=fr.RETURNS_OPTIONAL)
    work = pay.pipe(_join_observations, obs, ids).pipe(_base_outcome, as_of, params)
    links = _link_returns(work, obs, _collapse_returns(ret), ids)
    work = (
        work.pipe(_apply_returns, links, ids)
        .pipe(_payout_flags, as_of, params)
        .pipe(_candidate_duplicates)
        .pipe(_summarise, as_of)
    )
    extras = [c for c in pay.columns if c not in fr.PAYOUTS_IN]
    exceptions = pd.concat([_payout_exceptions(work, as_of), _return_exceptions(links)])
    return Classified(
        payouts=work[[*map(str, fr.PAYOUTS_IN), *map(str, fr.PAYOUTS_OUT), *extras]],
        exceptions=_sorted_exceptions(exceptions),
        returns=links[list(map(str, fr.RETURNS_OUT))].astype(dict(fr.RETURNS_OUT)),
    )


# --- inputs ----------------------------------------------------------------------------------


def _conform_payouts(payouts: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index]:
    """The conformed frame on a fresh RangeIndex, and its ids as an Index (hashed once, reused)."""
    pay = fr.conform(payouts, fr.PAYOUTS_IN, name="payouts", optional=fr.PAYOUTS_OPTIONAL)
    pay = pay.reset_index(drop=True)
    ids = pd.Index(pay[_P.TRANSACTION_ID])
    if ids.hasnans or not ids.is_unique:
        dupes = sorted(set(ids[ids.duplicated()].dropna()))[:5]
        raise InputError(f"payouts: transaction_id must be present and unique (repeated: {dupes})")
    return pay, ids


def _conform_observations(observations: pd.DataFrame) -> pd.DataFrame:
    obs = fr.conform(
        observations, fr.OBSERVATIONS_IN, name="observations", optional=fr.OBSERVATIONS_OPTIONAL
    )
    ids = obs[ObsCol.TRANSACTION_ID]
    if ids.isna().any() or not ids.is_unique:
        dupes = sorted(set(ids[ids.duplicated()].dropna()))[:5]
        raise InputError(f"observations: at most one row per transaction_id (repeated: {dupes})")
    bad = set(obs[ObsCol.STATUS].dropna().unique()) - {s.value for s in ObsStatus}
    if bad or obs[ObsCol.STATUS].isna().any():
        raise InputError(f"observations: status must be ok, not_found or error, not {sorted(bad)}")
    return obs


def _collapse_returns(ret: pd.DataFrame) -> pd.DataFrame:
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
        .set_axis([_W.CLAIMS, _W.N_CLAIMS], axis=1)
    )
    grouped = ret.groupby(_R.RETURN_ID, sort=True)
    first = grouped.first().drop(columns=[_R.NOTIFIED])
    out = (
        first.assign(**fr.columns({_R.NOTIFIED: grouped[_R.NOTIFIED].any()}))
        .join(claims)
        .reset_index()
    )
    single = _mask(out[_W.N_CLAIMS].eq(1))
    return out.assign(
        **fr.columns(
            {
                _W.N_CLAIMS: out[_W.N_CLAIMS].fillna(0).astype("int64"),
                _R.CLAIMED_ORIGINAL_ID: out[_W.CLAIMS].where(single).astype(fr.TEXT),
            }
        )
    ).astype(dict(fr.RETURNS_IN))


# --- payouts ---------------------------------------------------------------------------------


def _join_observations(pay: pd.DataFrame, obs: pd.DataFrame, ids: pd.Index) -> pd.DataFrame:
    """This run's answer beside each payout (``obs_*`` columns); answers for other ids are left."""
    # Probe the payout index with the (smaller) observation ids and align by row position:
    # integer reindexing instead of hashing a million id strings again in a merge.
    pos = ids.get_indexer(pd.Index(obs[ObsCol.TRANSACTION_ID]))
    known = pos >= 0
    aligned = (
        obs.loc[known]
        .drop(columns=[ObsCol.TRANSACTION_ID])
        .rename(columns=_obs)
        .set_axis(pos[known])
        .reindex(pay.index)
    )
    status = aligned[_obs(ObsCol.STATUS)]
    ok, not_found = _mask(status.eq(ObsStatus.OK)), _mask(status.eq(ObsStatus.NOT_FOUND))
    return pd.concat([pay, aligned], axis=1).assign(
        **fr.columns({_W.OK: ok, _W.NOT_FOUND: not_found, _W.FETCHED: ok | not_found})
    )


def _base_outcome(work: pd.DataFrame, as_of: pd.Timestamp, params: ClassifyParams) -> pd.DataFrame:
    ok, not_found = work[_W.OK].to_numpy(), work[_W.NOT_FOUND].to_numpy()
    state = work[_obs(ObsCol.STATE)].fillna(-1).to_numpy(dtype=np.int64)
    in_bank = _mask(work[_obs(ObsCol.ERROR_CODE)].eq(DELAYED_IN_BANK))
    past_eta = _mask(work[_P.ETA] + params.delay_grace < as_of)
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
        [_CODE[o] for o in _BY_ANSWER],
        default=np.where(prev >= 0, prev, _CODE[Outcome.UNCHECKED]),
    )
    answered = ok | not_found
    return work.assign(
        **fr.columns(
            {
                _P.OUTCOME: pd.Categorical.from_codes(codes, dtype=fr.OUTCOME),
                _P.STATE: work[_obs(ObsCol.STATE)].where(answered, work[_P.PREV_STATE]),
                _P.ERROR_CODE: work[_obs(ObsCol.ERROR_CODE)].where(
                    answered, work[_P.PREV_ERROR_CODE]
                ),
            }
        )
    )


def _apply_returns(work: pd.DataFrame, links: pd.DataFrame, ids: pd.Index) -> pd.DataFrame:
    """Sum confirmed returns per payout; a settled payout with one becomes returned."""
    confirmed = links[links[_R.CONFIRMED]]
    pos = ids.get_indexer(pd.Index(confirmed[_W.CONFIRMED_FOR]))
    amounts = confirmed[_R.AMOUNT_MINOR].set_axis(pos)[pos >= 0].groupby(level=0)
    # One return whose amount does not fit its currency makes the sum unknown, not smaller.
    sums = amounts.sum().where(amounts.count() == amounts.size())
    returned = sums.astype(fr.MONEY).reindex(work.index, fill_value=0)
    has = np.zeros(len(work), dtype=bool)
    has[sums.index.to_numpy()] = True
    codes = work[_P.OUTCOME].cat.codes.to_numpy()
    codes = np.where(has & (codes == _CODE[Outcome.SETTLED]), _CODE[Outcome.RETURNED], codes)
    return work.assign(
        **fr.columns(
            {
                _P.RETURNED_MINOR: returned,
                _P.OUTCOME: pd.Categorical.from_codes(codes, dtype=fr.OUTCOME),
            }
        )
    )


def _payout_flags(work: pd.DataFrame, as_of: pd.Timestamp, params: ClassifyParams) -> pd.DataFrame:
    """One boolean column per payout flag kind (details are written only for flagged rows)."""
    ok, fetched = work[_W.OK].to_numpy(), work[_W.FETCHED].to_numpy()
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    prev = work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    was_failed = work[_P.EVER_FAILED].to_numpy() | np.isin(prev, _codes(_FAILED))
    state = work[_obs(ObsCol.STATE)]
    # Text is compared only where there is an answer: a million string comparisons are not free.
    answered = work.loc[ok, [_P.CURRENCY, _obs(ObsCol.CURRENCY)]]
    currency_differs = np.zeros(len(work), dtype=bool)
    currency_differs[ok] = ~_mask(
        answered[_obs(ObsCol.CURRENCY)].str.upper().eq(answered[_P.CURRENCY].str.upper())
    )
    found: dict[Flag, Mask] = {
        Flag.LATE_SETTLEMENT: ok
        & was_failed
        & _mask(state.isin([TxState.CREDIT, TxState.SETTLED])),
        Flag.AMOUNT_MISMATCH: ok
        & ~_mask(work[_obs(ObsCol.AMOUNT_MINOR)].eq(work[_P.AMOUNT_MINOR])),
        Flag.CURRENCY_MISMATCH: currency_differs,
        Flag.NOT_A_PAYOUT: ok & ~_mask(work[_obs(ObsCol.TYPE)].eq(TxType.PAYOUT)),
        Flag.UNKNOWN_TRANSACTION: work[_W.NOT_FOUND].to_numpy(),
        Flag.STALE: np.isin(outcome, _codes(_WAITING))
        & _mask(_age_days(work, as_of) > params.stale_days),
        Flag.FETCH_FAILED: work[_P.POLLED].to_numpy() & ~fetched,
    }
    # Flags that need an answer are kept while there is none; for them, flagged and not fetched
    # means carried, which is how the details tell the two apart.
    previous = work[_P.PREV_EXCEPTIONS]
    had = ~fetched & previous.notna().to_numpy()
    wrapped = ";" + previous[had] + ";"
    for flag in CARRIED_FLAGS:
        carried = np.zeros(len(work), dtype=bool)
        carried[had] = _mask(wrapped.str.contains(f";{flag};", regex=False))
        found[flag] = found[flag] | carried
    return work.assign(**fr.columns({_flag(flag): mask for flag, mask in found.items()}))


def _age_days(frame: pd.DataFrame, as_of: pd.Timestamp) -> pd.Series:
    since = frame[_P.CREATED].fillna(frame[_P.PREV_OUTCOME_SINCE])
    days: pd.Series = (as_of - since).dt.total_seconds() / 86400
    return days


def _candidate_duplicates(work: pd.DataFrame) -> pd.DataFrame:
    """Per late settlement: later payouts, same amount, to the same bank account or customer."""
    dupes = pd.Series("", index=work.index, dtype=fr.TEXT)
    late = work.loc[work[_flag(Flag.LATE_SETTLEMENT)]]
    if late.empty:
        return work.assign(**fr.columns({_P.CANDIDATE_DUPLICATES: dupes}))
    keys = [_P.AMOUNT_MINOR, _P.CURRENCY]
    cols = [_P.TRANSACTION_ID, _P.CREATED, *keys]
    pairs = []
    for party in (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID):
        mine = late[[party, *cols]].dropna(subset=[party, *keys]).reset_index()
        theirs = work.loc[work[party].isin(mine[party]), [party, *cols]].dropna(subset=keys)
        pairs.append(mine.merge(theirs, on=[party, *keys], suffixes=("", "_c")))
    both = pd.concat(pairs)
    candidate, created_c = f"{_P.TRANSACTION_ID}_c", f"{_P.CREATED}_c"
    later = _mask(both[created_c] > both[_P.CREATED])
    unknown = _mask(both[created_c].isna() | both[_P.CREATED].isna())
    chosen = both[_mask(both[candidate] != both[_P.TRANSACTION_ID]) & (later | unknown)]
    # Grouped by the late payout's row label, so the result lands without another join.
    joined = (
        chosen[["index", candidate]]
        .drop_duplicates()
        .sort_values(["index", candidate])
        .groupby("index")[candidate]
        .agg(";".join)
    )
    dupes.loc[joined.index] = joined.astype(fr.TEXT)
    return work.assign(**fr.columns({_P.CANDIDATE_DUPLICATES: dupes}))


def _summarise(work: pd.DataFrame, as_of: pd.Timestamp) -> pd.DataFrame:
    """The exceptions cell (sorted flags) and the outcome history columns."""
    flags = sorted(_PAYOUT_FLAGS)
    bits = np.zeros(len(work), dtype=np.int64)
    for i, flag in enumerate(flags):
        bits |= work[_flag(flag)].to_numpy().astype(np.int64) << i
    # Few distinct combinations exist, so build each text once and index into them.
    combos, where = np.unique(bits, return_inverse=True)
    texts = np.array(
        [";".join(f for i, f in enumerate(flags) if c >> i & 1) for c in combos], dtype=object
    )
    changed = work[_P.OUTCOME].cat.codes.to_numpy() != work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    since = work[_P.PREV_OUTCOME_SINCE].where(~changed, as_of).fillna(as_of)
    return work.assign(
        **fr.columns(
            {
                _P.EXCEPTIONS: pd.array(texts[where.reshape(-1)], dtype=fr.TEXT),
                _P.OUTCOME_CHANGED: changed,
                _P.OUTCOME_SINCE: since.astype(fr.TIME),
            }
        )
    )


def _payout_details(flag: Flag, sub: pd.DataFrame, as_of: pd.Timestamp) -> pd.Series:
    """What a person reads for one flag kind, built for the flagged rows only."""
    outcome = sub[_P.OUTCOME].astype(fr.TEXT)
    match flag:
        case Flag.LATE_SETTLEMENT:
            dupes = sub[_P.CANDIDATE_DUPLICATES]
            text = "reported failed or aborted earlier, now state " + _text(sub[_P.STATE])
            text = text + dupes.where(dupes.eq(""), "; candidate duplicates: " + dupes)
        case Flag.AMOUNT_MISMATCH:
            unfit = "amount " + sub[_obs(ObsCol.AMOUNT_TEXT)] + " (does not fit the currency)"
            provider = sub[_obs(ObsCol.AMOUNT_MINOR)].astype(fr.TEXT).fillna(unfit)
            provider = provider.fillna("an amount that does not fit the currency")
            text = "local " + _text(sub[_P.AMOUNT_MINOR]) + " minor units, provider " + provider
        case Flag.CURRENCY_MISMATCH:
            provider = _text(sub[_obs(ObsCol.CURRENCY)])
            text = "local " + _text(sub[_P.CURRENCY]) + ", provider " + provider
        case Flag.NOT_A_PAYOUT:
            text = "provider type " + _text(sub[_obs(ObsCol.TYPE)]) + ", not 1 (payout)"
        case Flag.UNKNOWN_TRANSACTION:
            text = pd.Series("the provider does not know this transaction id", index=sub.index)
        case Flag.STALE:
            text = outcome + " for " + _text(_age_days(sub, as_of).round(1)) + " days"
        case _:
            text = "could not be fetched this run; kept outcome " + outcome
    kept = "kept from the previous run (not fetched this run)"
    return text.where(sub[_W.FETCHED] | (flag not in CARRIED_FLAGS), kept)


def _payout_exceptions(work: pd.DataFrame, as_of: pd.Timestamp) -> pd.DataFrame:
    parts = []
    for flag in _PAYOUT_FLAGS:
        sub = work[work[_flag(flag)]]
        parts.append(
            pd.DataFrame(
                {
                    ExceptionCol.ITEM_ID: sub[_P.TRANSACTION_ID],
                    ExceptionCol.ITEM_KIND: ItemKind.PAYOUT.value,
                    ExceptionCol.FLAG: flag.value,
                    ExceptionCol.DETAIL: _payout_details(flag, sub, as_of),
                }
            )
        )
    return pd.concat(parts)


def _sorted_exceptions(exceptions: pd.DataFrame) -> pd.DataFrame:
    typed = exceptions.astype(dict(fr.EXCEPTIONS))
    order = [ExceptionCol.ITEM_KIND, ExceptionCol.ITEM_ID, ExceptionCol.FLAG]
    return typed.sort_values(order).reset_index(drop=True)


# --- returns ---------------------------------------------------------------------------------


def _link_returns(
    work: pd.DataFrame, obs: pd.DataFrame, ret: pd.DataFrame, ids: pd.Index
) -> pd.DataFrame:
    """Every known return with the payout the provider confirms it for, and its flags."""
    frame = ret.pipe(_with_this_run, obs)
    status = frame[_R.OBS_STATUS]
    is13 = _mask(status.eq(ObsStatus.OK) & frame[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS))
    own = frame[_R.OBS_RELATED_TRANSACTION_ID].fillna(frame[_R.OBS_ORIGINAL_TRANSACTION_ID])
    frame = frame.assign(**fr.columns({_W.IS13: is13, _W.OWN_LINK: own.where(is13)}))
    confirmed_for = (
        frame[_W.OWN_LINK]
        .fillna(_payout_side_links(work, frame))
        .fillna(frame[_R.CONFIRMED_ORIGINAL_ID])
    )
    claimed = frame[_R.CLAIMED_ORIGINAL_ID]
    original = confirmed_for.fillna(claimed)
    return frame.assign(
        **fr.columns(
            {
                _W.CONFIRMED_FOR: confirmed_for,
                _R.CONFIRMED: confirmed_for.notna().to_numpy(),
                _R.ORIGINAL_ID: original,
                _R.MATCHED: ids.get_indexer(pd.Index(original)) >= 0,
                _R.AMOUNT_MINOR: frame[_R.OBS_AMOUNT_MINOR],
                _R.CURRENCY: frame[_R.OBS_CURRENCY].str.upper(),
            }
        )
    ).sort_values(_R.RETURN_ID, ignore_index=True)


def _with_this_run(ret: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """Add type-13 transactions seen only in this run; prefer this run's answer as evidence."""
    evidence = [
        _R.OBS_STATUS, _R.OBS_TYPE, _R.OBS_RELATED_TRANSACTION_ID,
        _R.OBS_ORIGINAL_TRANSACTION_ID, _R.OBS_AMOUNT_MINOR, _R.OBS_CURRENCY,
    ]  # fmt: skip
    now = obs.rename(
        columns={ObsCol.TRANSACTION_ID: _R.RETURN_ID}
        | {c: f"obs_{c}" for c in obs.columns if c != ObsCol.TRANSACTION_ID}
    )
    seen13 = now[now[_R.OBS_STATUS].eq(ObsStatus.OK) & now[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS)]
    new_ids = seen13.loc[~seen13[_R.RETURN_ID].isin(ret[_R.RETURN_ID]), [_R.RETURN_ID]]
    frame = pd.concat([ret, new_ids], ignore_index=True).merge(
        now[[_R.RETURN_ID, *evidence]], how="left", on=_R.RETURN_ID, suffixes=("", "_now")
    )
    now_status = frame[f"{_R.OBS_STATUS}_now"]
    use_now = _mask(now_status.isin([ObsStatus.OK, ObsStatus.NOT_FOUND]))
    failed_now = _mask(now_status.eq(ObsStatus.ERROR)) & ~_mask(
        frame[_R.OBS_STATUS].isin([ObsStatus.OK, ObsStatus.NOT_FOUND])
    )
    chosen: dict[str, pd.Series] = {c: frame[f"{c}_now"].where(use_now, frame[c]) for c in evidence}
    chosen[_R.OBS_STATUS] = chosen[_R.OBS_STATUS].mask(failed_now, ObsStatus.ERROR.value)
    return frame.assign(
        **fr.columns(chosen),
        **fr.columns(
            {
                _R.NOTIFIED: _mask(frame[_R.NOTIFIED]),
                _W.N_CLAIMS: frame[_W.N_CLAIMS].fillna(0).astype("int64"),
            }
        ),
    ).drop(columns=[f"{c}_now" for c in evidence])


def _payout_side_links(work: pd.DataFrame, frame: pd.DataFrame) -> pd.Series:
    """The payout naming a type-13 return in its own answer, when exactly one does so."""
    related = _obs(ObsCol.RELATED_TRANSACTION_ID)
    named = work.loc[work[_W.OK] & work[related].notna(), [_P.TRANSACTION_ID, related]]
    pairs = named.merge(
        frame.loc[frame[_W.IS13], [_R.RETURN_ID, _W.OWN_LINK]],
        left_on=related,
        right_on=_R.RETURN_ID,
    )
    agrees = pairs[_W.OWN_LINK].isna() | pairs[_W.OWN_LINK].eq(pairs[_P.TRANSACTION_ID])
    pairs = pairs[_mask(agrees)].drop_duplicates([_R.RETURN_ID, _P.TRANSACTION_ID])
    unique = pairs.drop_duplicates(_R.RETURN_ID, keep=False)
    link = frame[[_R.RETURN_ID]].merge(
        unique[[_R.RETURN_ID, _P.TRANSACTION_ID]], how="left", on=_R.RETURN_ID
    )
    return link[_P.TRANSACTION_ID].astype(fr.TEXT).set_axis(frame.index)


def _return_exceptions(links: pd.DataFrame) -> pd.DataFrame:
    status, claimed = links[_R.OBS_STATUS], links[_R.CLAIMED_ORIGINAL_ID]
    confirmed_for, conflict = links[_W.CONFIRMED_FOR], links[_W.N_CLAIMS].to_numpy() > 1
    confirmed = links[_R.CONFIRMED].to_numpy()
    fetch_failed = ~confirmed & _mask(status.eq(ObsStatus.ERROR))
    verified = confirmed & ~conflict & (_mask(claimed.isna()) | _mask(claimed.eq(confirmed_for)))
    claims = "notifications name different payouts: " + _text(links[_W.CLAIMS])
    why_unverified = np.select(
        [
            conflict,
            _mask(status.eq(ObsStatus.NOT_FOUND)),
            _mask(status.eq(ObsStatus.OK)) & ~links[_W.IS13].to_numpy(),
            confirmed,
            _mask(status.isna()),
        ],
        [
            claims,
            "the provider does not know this transaction id",
            "the provider reports type " + _text(links[_R.OBS_TYPE]) + ", not 13 (returned funds)",
            "the provider links it to " + _text(confirmed_for) + ", not " + _text(claimed),
            "not fetched from the provider yet",
        ],
        default="the provider names no payout for it",
    )
    why_orphan = np.select(
        [conflict, _mask(links[_R.ORIGINAL_ID].isna())],
        [claims, "no original payout is named"],
        default="original payout " + _text(links[_R.ORIGINAL_ID]) + " is not in the store",
    )
    found = {
        Flag.RETURN_WITHOUT_PAYOUT: (~links[_R.MATCHED].to_numpy(), why_orphan),
        Flag.RETURN_UNVERIFIED: (links[_R.NOTIFIED].to_numpy() & ~verified & ~fetch_failed,
                                 why_unverified),
        Flag.FETCH_FAILED: (fetch_failed, np.full(len(links), "could not be fetched this run")),
    }  # fmt: skip
    return pd.concat(
        [
            pd.DataFrame(
                {
                    ExceptionCol.ITEM_ID: links.loc[mask, _R.RETURN_ID],
                    ExceptionCol.ITEM_KIND: ItemKind.RETURN.value,
                    ExceptionCol.FLAG: flag.value,
                    ExceptionCol.DETAIL: np.asarray(detail, dtype=object)[mask],
                }
            )
            for flag, (mask, detail) in found.items()
        ]
    )
