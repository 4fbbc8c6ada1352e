"""Payout outcomes and flags: this run's answer beside each payout, the state rules, the flags.

Steps of :func:`recon.reconcile.classify.classify` (its docstring has the rules and the choices):
each takes the working frame and returns it with more columns, reading no clock, store or network.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import (
    FAILED_OUTCOMES,
    SETTLED_OUTCOMES,
    Flag,
    ObsStatus,
    Outcome,
    TxState,
    TxType,
)
from recon.frames import ExceptionCol, ItemKind, ObsCol, PayoutCol, ReturnCol
from recon.reconcile.double_payments import DETAIL as DOUBLE_DETAIL
from recon.reconcile.duplicates import DETAIL as DUPLICATE_DETAIL
from recon.reconcile.work import CODE, Mask, W, answer_col, codes, flag_col, mask, shown
from recon.words import money_text, state_names, type_names

DELAYED_IN_BANK = "transaction_is_delayed_in_bank"
# The fetch_failed detail of an id the provider refuses (401/403 with a working token).
REFUSED_DETAIL = "the provider refuses this id to this merchant account"
# Flags that depend on a provider answer: kept from the previous run while there is no new one.
CARRIED_FLAGS = (
    Flag.LATE_SETTLEMENT,
    Flag.AMOUNT_MISMATCH,
    Flag.CURRENCY_MISMATCH,
    Flag.REFERENCE_MISMATCH,
    Flag.ACCOUNT_MISMATCH,
    Flag.UNRECOGNISED_STATE,
    Flag.NOT_A_PAYOUT,
    Flag.UNKNOWN_TRANSACTION,
    Flag.SESSION_ID_RECORDED,
)
PAYOUT_FLAGS = (
    *CARRIED_FLAGS,
    Flag.REVERSED_AFTER_SETTLEMENT,
    Flag.STALE,
    Flag.WRONG_TRANSACTION,
    Flag.FETCH_FAILED,
    Flag.RETURN_EXCEEDS_PAYOUT,
    Flag.POSSIBLE_DUPLICATE,
    Flag.DOUBLE_PAYMENT,
)
_WAITING = (Outcome.PENDING, Outcome.DELAYED)
_P = PayoutCol
_R = ReturnCol


@dataclass(frozen=True)
class ClassifyParams:
    """Time rules: the grace after ``eta`` before completed counts as delayed, stale age, and
    how far apart same-party same-amount payouts may be created to be possible duplicates."""

    delay_grace: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(hours=1))
    stale_days: float = 3.0
    duplicate_window: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(hours=24))


def join_observations(pay: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """This run's answer beside each payout (``obs_*`` columns); answers for other ids are left."""
    answers = obs.rename(columns=answer_col)
    tid = answer_col(ObsCol.TRANSACTION_ID)
    aligned = (
        pay[[_P.TRANSACTION_ID]]
        .merge(answers, how="left", left_on=_P.TRANSACTION_ID, right_on=tid)
        .drop(columns=[_P.TRANSACTION_ID, tid])
        .set_axis(pay.index)
    )
    status = aligned[answer_col(ObsCol.STATUS)]
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
    state = work[answer_col(ObsCol.STATE)].fillna(-1).to_numpy(dtype=np.int64)
    in_bank = mask(work[answer_col(ObsCol.ERROR_CODE)].eq(DELAYED_IN_BANK))
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
                _P.STATE: work[answer_col(ObsCol.STATE)].where(answered, work[_P.PREV_STATE]),
                _P.ERROR_CODE: work[answer_col(ObsCol.ERROR_CODE)].where(
                    answered, work[_P.PREV_ERROR_CODE]
                ),
            }
        )
    )


def apply_returns(work: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Sum confirmed returns in the payout's currency; a settled payout with any is returned, and
    a returned one with none left, because a return an earlier run confirmed for it no longer is
    (the provider's latest answer is a 404), is settled again."""
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


def payout_flags(work: pd.DataFrame, as_of: pd.Timestamp, params: ClassifyParams) -> pd.DataFrame:
    """One boolean column per payout flag kind (details are written only for flagged rows)."""
    ok, fetched = work[W.OK].to_numpy(), work[W.FETCHED].to_numpy()
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    prev = work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    # Seen failed: by an earlier answer, or by a callback (evidence, not an outcome).
    was_failed = (
        work[_P.EVER_FAILED].to_numpy()
        | np.isin(prev, codes(FAILED_OUTCOMES))
        | work[_P.CALLBACK_FAILED].notna().to_numpy()
    )
    state = work[answer_col(ObsCol.STATE)]
    # Text is compared only where there is an answer: a million string comparisons are not free.
    currency_differs = _differs_where(ok, work, _P.CURRENCY, ObsCol.CURRENCY, upper=True)
    # Reference and account are compared only where both sides know them.
    reference_differs = _differs_where(ok, work, _P.MERCHANT_REFERENCE, ObsCol.MERCHANT_REFERENCE)
    account_differs = _differs_where(ok, work, _P.BANK_ACCOUNT_ID, ObsCol.TO_BANK_ACCOUNT_ID)
    documented = mask(state.isin([s.value for s in TxState]))
    found: dict[Flag, Mask] = {
        Flag.LATE_SETTLEMENT: ok & was_failed & mask(state.isin([TxState.CREDIT, TxState.SETTLED])),
        # The mirror of a late settlement: booked as paid, then failed or aborted. It stands on the
        # outcome and the stored settled time, so it holds on nights the payout is not fetched.
        Flag.REVERSED_AFTER_SETTLEMENT: np.isin(outcome, codes(FAILED_OUTCOMES))
        & settled_before(work).notna().to_numpy(),
        Flag.AMOUNT_MISMATCH: ok
        & ~mask(work[answer_col(ObsCol.AMOUNT_MINOR)].eq(work[_P.AMOUNT_MINOR])),
        Flag.CURRENCY_MISMATCH: currency_differs,
        Flag.REFERENCE_MISMATCH: reference_differs,
        Flag.ACCOUNT_MISMATCH: account_differs,
        Flag.UNRECOGNISED_STATE: ok & ~documented,
        Flag.NOT_A_PAYOUT: ok & ~mask(work[answer_col(ObsCol.TYPE)].eq(TxType.PAYOUT)),
        Flag.UNKNOWN_TRANSACTION: work[W.NOT_FOUND].to_numpy(),
        Flag.SESSION_ID_RECORDED: work[W.SESSION].to_numpy(),
        Flag.STALE: np.isin(outcome, codes(_WAITING))
        & mask(_age_days(work, as_of) > params.stale_days),
        # An answer about another id is not a fetch failure: the provider said something wrong.
        Flag.WRONG_TRANSACTION: work[W.WRONG_ID].to_numpy(),
        Flag.FETCH_FAILED: work[_P.POLLED].to_numpy() & ~fetched & ~work[W.WRONG_ID].to_numpy(),
        Flag.RETURN_EXCEEDS_PAYOUT: mask(work[_P.RETURNED_MINOR] > work[_P.AMOUNT_MINOR]),
    }
    # Flags that need an answer are kept while there is none; for them, flagged and not fetched
    # means carried, which is how the details tell the two apart.
    previous = work[_P.PREV_EXCEPTIONS]
    had = ~fetched & previous.notna().to_numpy()
    wrapped = ";" + previous[had] + ";"
    for flag in CARRIED_FLAGS:
        carried = np.zeros(len(work), dtype=bool)
        carried[had] = mask(wrapped.str.contains(f";{flag};", regex=False))
        found[flag] = found[flag] | carried
    return work.assign(**fr.columns({flag_col(flag): mask for flag, mask in found.items()}))


def _differs_where(
    ok: Mask, work: pd.DataFrame, record: str, answer: str, *, upper: bool = False
) -> Mask:
    """Where this run's answer differs from the record in one field.

    Text is compared only where there is an answer: a million string comparisons are not free.
    The currency is compared without case and a missing one in an answer counts as different
    (what cannot be checked is not assumed to agree); other fields only where both are known.
    """
    ours, theirs = work.loc[ok, record], work.loc[ok, answer_col(answer)]
    if upper:
        same = theirs.str.upper().eq(ours.str.upper())
    else:
        same = theirs.eq(ours) | theirs.isna() | ours.isna()
    differs = np.zeros(len(work), dtype=bool)
    differs[ok] = ~mask(same)
    return differs


def _age_days(frame: pd.DataFrame, as_of: pd.Timestamp) -> pd.Series:
    since = frame[_P.CREATED].fillna(frame[_P.PREV_OUTCOME_SINCE])
    days: pd.Series = (as_of - since).dt.total_seconds() / 86400
    return days


def candidate_duplicates(work: pd.DataFrame) -> pd.DataFrame:
    """Per late settlement: later payouts, same amount, to the same bank account or customer."""
    dupes = pd.Series("", index=work.index, dtype=fr.TEXT)
    late = work.loc[work[flag_col(Flag.LATE_SETTLEMENT)]]
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
    return work.assign(**fr.columns({_P.CANDIDATE_DUPLICATES: dupes}))


def summarise(work: pd.DataFrame, as_of: pd.Timestamp) -> pd.DataFrame:
    """The exceptions cell (sorted flags) and the outcome history columns."""
    flags = sorted(PAYOUT_FLAGS)
    texts = pd.Series("", index=work.index, dtype=object)
    for flag in flags:
        texts = texts + np.where(work[flag_col(flag)].to_numpy(), f"{flag};", "")
    changed = work[_P.OUTCOME].cat.codes.to_numpy() != work[_P.PREV_OUTCOME].cat.codes.to_numpy()
    since = work[_P.PREV_OUTCOME_SINCE].where(~changed, as_of).fillna(as_of)
    return work.assign(
        **fr.columns(
            {
                _P.EXCEPTIONS: texts.str.rstrip(";").astype(fr.TEXT),
                _P.OUTCOME_CHANGED: changed,
                _P.OUTCOME_SINCE: since.astype(fr.TIME),
            }
        )
    )


def _payout_details(flag: Flag, sub: pd.DataFrame, as_of: pd.Timestamp) -> pd.Series:
    """What a person reads for one flag kind, built for the flagged rows only."""
    outcome = sub[_P.OUTCOME].astype(fr.TEXT)
    now = shown(state_names(sub[_P.STATE]))
    match flag:
        case Flag.LATE_SETTLEMENT:
            dupes = sub[_P.CANDIDATE_DUPLICATES]
            answered = sub[_P.EVER_FAILED] | sub[_P.PREV_OUTCOME].isin(
                [o.value for o in FAILED_OUTCOMES]
            )
            source = sub[_P.CALLBACK_FAILED].where(
                ~answered.to_numpy(), "reported failed or aborted earlier"
            )
            text = source.fillna("reported failed or aborted earlier") + ", now " + now
            text = text + dupes.where(dupes.eq(""), "; candidate duplicates: " + dupes)
        case Flag.REVERSED_AFTER_SETTLEMENT:
            seen = settled_before(sub).dt.strftime("%Y-%m-%d %H:%M UTC").astype(fr.TEXT)
            code = sub[_P.ERROR_CODE].astype(fr.TEXT)
            text = (
                "seen settled on "
                + shown(seen)
                + ", now "
                + now
                + (", error code " + code).fillna("")
            )
        case Flag.WRONG_TRANSACTION:
            about = shown(sub[answer_col(ObsCol.RELATED_TRANSACTION_ID)])
            text = "the provider answered about " + about + "; kept outcome " + outcome
        case Flag.AMOUNT_MISMATCH:
            unfit = "amount " + sub[answer_col(ObsCol.AMOUNT_TEXT)] + " (does not fit the currency)"
            currency = sub[answer_col(ObsCol.CURRENCY)].fillna(sub[_P.CURRENCY])
            provider = money_text(sub[answer_col(ObsCol.AMOUNT_MINOR)], currency).fillna(unfit)
            provider = provider.fillna("an amount that does not fit the currency")
            local = shown(money_text(sub[_P.AMOUNT_MINOR], sub[_P.CURRENCY]))
            text = "local " + local + ", provider " + provider
        case Flag.CURRENCY_MISMATCH:
            provider = shown(sub[answer_col(ObsCol.CURRENCY)])
            text = "local " + shown(sub[_P.CURRENCY]) + ", provider " + provider
        case Flag.REFERENCE_MISMATCH:
            provider = shown(sub[answer_col(ObsCol.MERCHANT_REFERENCE)])
            text = "record " + shown(sub[_P.MERCHANT_REFERENCE]) + ", provider " + provider
        case Flag.ACCOUNT_MISMATCH:
            provider = shown(sub[answer_col(ObsCol.TO_BANK_ACCOUNT_ID)])
            record = shown(sub[_P.BANK_ACCOUNT_ID])
            text = "record bank account " + record + ", provider " + provider
        case Flag.UNRECOGNISED_STATE:
            raw = sub[answer_col(ObsCol.STATE_RAW)].fillna(sub[_P.STATE].astype(fr.TEXT))
            text = "the provider answered " + shown(state_names(raw)) + "; treated as pending"
        case Flag.NOT_A_PAYOUT:
            kind = shown(type_names(sub[answer_col(ObsCol.TYPE)]))
            text = "the provider says it is a " + kind + ", not a payout"
        case Flag.SESSION_ID_RECORDED:
            session_tx = sub[answer_col(ObsCol.RELATED_TRANSACTION_ID)]
            text = (
                "this id is a session, not a transaction: its transaction is "
                + session_tx.fillna("not known (session.get named none)")
                + "; correct the record's transaction_id"
            )
        case Flag.UNKNOWN_TRANSACTION:
            text = pd.Series("the provider does not know this transaction id", index=sub.index)
        case Flag.RETURN_EXCEEDS_PAYOUT:
            returned = shown(money_text(sub[_P.RETURNED_MINOR], sub[_P.CURRENCY]))
            paid = shown(money_text(sub[_P.AMOUNT_MINOR], sub[_P.CURRENCY]))
            text = "confirmed returns add up to " + returned + ", more than the payout's " + paid
        case Flag.POSSIBLE_DUPLICATE:
            text = sub[DUPLICATE_DETAIL]
        case Flag.DOUBLE_PAYMENT:
            text = sub[DOUBLE_DETAIL]
        case Flag.STALE:
            text = outcome + " for " + shown(_age_days(sub, as_of).round(1)) + " days"
        case Flag.FETCH_FAILED:
            refused = mask(sub[answer_col(ObsCol.STATUS)].eq(ObsStatus.REFUSED))
            why = pd.Series("could not be fetched this run", index=sub.index, dtype=fr.TEXT)
            text = why.mask(refused, REFUSED_DETAIL) + "; kept outcome " + outcome
        case _:
            text = "could not be fetched this run; kept outcome " + outcome
    kept = "kept from the previous run (not fetched this run)"
    return text.where(sub[W.FETCHED] | (flag not in CARRIED_FLAGS), kept)


def payout_exceptions(work: pd.DataFrame, as_of: pd.Timestamp) -> pd.DataFrame:
    parts = []
    for flag in PAYOUT_FLAGS:
        sub = work[work[flag_col(flag)]]
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
