"""Which returned-funds transactions a run knows (:func:`known_returns`) and asks about
(:func:`returns_to_poll`), and which claims it keeps quiet (:func:`quiet_claims`).

Pure: what the store knew (:class:`~recon.decision.KnownReturns`) and this run's answers in, ids
and the classifier's ``returns`` frame out.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.constants import ANSWERED, ObsStatus, TxType
from recon.decision import KnownReturns
from recon.frames import ReturnsIn
from recon.reconcile.returns import best_evidence
from recon.reconcile.watch import WatchParams, next_after
from recon.reconcile.work import mask
from recon.run_frames import Answers, Claims, EarlierAnswers, Watched

_R, _A = ReturnsIn, Answers


def _ok_rows(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[answers[_A.STATUS] == ObsStatus.OK]


def _confirmed_ids(known: KnownReturns, answers: pd.DataFrame) -> set[str]:
    ok = _ok_rows(answers)
    this_run = set(ok.loc[ok[_A.TYPE] == int(TxType.RETURNED_FUNDS), _A.TRANSACTION_ID])
    return set(known.seen13) | this_run | set(known.confirmations[_R.RETURN_ID])


def quiet_claims(known: KnownReturns, answers: pd.DataFrame) -> set[str]:
    """Announced ids no answer confirms whose last notification the previous run already saw.

    Such a claim (a forged id, say) is reported once, by the run after its notification came;
    after that it is kept out of the report, unless a new notification repeats it.
    """
    if known.previous_started_at is None:
        return set()
    claims = known.claims
    old = claims[Claims.LAST_NOTIFIED_AT] < pd.Timestamp(known.previous_started_at)
    return set(claims.loc[mask(old), Claims.RETURN_ID]) - _confirmed_ids(known, answers)


def returns_to_poll(
    known: KnownReturns,
    answers: pd.DataFrame,
    *,
    as_of: datetime,
    watch: WatchParams,
    cap: int,
) -> tuple[list[str], int]:
    """Returned-funds ids to ask about, and how many unverified claims the cap left out.

    Ids named by one of this run's payout answers (``related_transaction_id``) and not yet
    confirmed (answered ``ok`` as type 13 by some run) are always asked about. A return a run
    confirmed is asked about again on the return watch's schedule (``return_schedule_days``, for
    ``return_watch_days``) counted from its first confirmation, so one that disappears or changes
    amount is seen (:func:`recon.reconcile.returns.return_exceptions`). Ids only announced by a
    notification are claims: asked about by the next run, then on the same schedule counted from
    that first ask, then dropped until a new notification repeats them; at most ``cap`` a run,
    those asked least recently first. Ids this run already has an answer for are not asked again.
    """
    ok = _ok_rows(answers)
    named = set(ok.loc[ok[_A.TYPE] == int(TxType.PAYOUT), _A.RELATED_TRANSACTION_ID].dropna())
    answered = set(answers.loc[answers[_A.STATUS].isin(list(ANSWERED)), _A.TRANSACTION_ID])
    settled = _confirmed_ids(known, answers) | answered
    claims = known.claims[~known.claims[Claims.RETURN_ID].isin(settled | named)]
    first, last = claims[Claims.FIRST_ASKED_AT], claims[Claims.LAST_ASKED_AT]
    never = mask(first.isna())
    next_due = next_after(first.fillna(last), last, watch.return_points(), watch.tz)
    due = never | mask(next_due <= pd.Timestamp(as_of))
    waiting = (
        claims[due]
        .assign(_asked=last[due])
        .sort_values(["_asked", Claims.RETURN_ID], na_position="first")
    )
    unverified = list(waiting[Claims.RETURN_ID])
    first_ask = named - settled
    watched = _watched_due(known, as_of=as_of, watch=watch) - answered - first_ask
    chosen = sorted(first_ask) + sorted(watched) + sorted(unverified[:cap])
    return chosen, max(0, len(unverified) - cap)


def _watched_due(known: KnownReturns, *, as_of: datetime, watch: WatchParams) -> set[str]:
    """Confirmed returns whose return watch check is due: a day of the schedule counted from the
    first confirmation has begun since the last ask (or since the confirmation, with none)."""
    watched = known.watched
    base = watched[Watched.CONFIRMED_AT]
    last = watched[Watched.LAST_ASKED_AT].fillna(base)
    next_due = next_after(base, last, watch.return_points(), watch.tz)
    return set(watched.loc[mask(next_due <= pd.Timestamp(as_of)), Watched.RETURN_ID].astype(str))


def known_returns(
    known: KnownReturns, answers: pd.DataFrame, latest: pd.DataFrame, quiet: set[str]
) -> pd.DataFrame:
    """The classifier's ``returns`` frame: every returned-funds transaction known from any side.

    Known ids: announced by a notification (but the ``quiet`` claims, see :func:`quiet_claims`),
    answered as type 13 by some run, or named by one of this run's answers. Evidence:
    :func:`best_evidence` over the earlier answers and this run's (``latest``: its latest answer
    per id). Kept: ids announced, answered as type 13, or once confirmed (a return the provider
    now denies is still known; not, say, a payout's related_transaction_id naming another payout).
    Each carries its first confirmation (``confirmed_at``, ``confirmed_amount_minor``,
    ``confirmed_currency``) when a run confirmed it.
    """
    ok = _ok_rows(answers)
    notices = known.notices[~known.notices[_R.RETURN_ID].isin(quiet)].assign(**{_R.NOTIFIED: True})
    ids = set(notices[_R.RETURN_ID]) | known.seen13 | set(ok[_A.RELATED_TRANSACTION_ID].dropna())
    ids |= set(ok.loc[ok[_A.TYPE] == int(TxType.RETURNED_FUNDS), _A.TRANSACTION_ID])
    first = known.watched.drop(columns=Watched.LAST_ASKED_AT)
    ids |= set(first[Watched.RETURN_ID].astype(str))
    if not ids:
        return fr.empty(fr.ReturnsIn)
    earlier = known.earlier.rename(
        columns={EarlierAnswers.TRANSACTION_ID: _R.RETURN_ID}
        | {c: f"obs_{c}" for c in known.earlier.columns if c != EarlierAnswers.TRANSACTION_ID}
    )
    if _R.OBS_STATUS not in earlier.columns:
        earlier = earlier.assign(**{_R.OBS_STATUS: ObsStatus.OK.value})
    frame = (
        pd.DataFrame({_R.RETURN_ID: sorted(ids)})
        .merge(notices, how="left", on=_R.RETURN_ID)
        .merge(earlier, how="left", on=_R.RETURN_ID)
        .merge(known.confirmations, how="left", on=_R.RETURN_ID)
        .merge(first.astype({Watched.RETURN_ID: object}), how="left", on=_R.RETURN_ID)
        .pipe(best_evidence, latest)
    )
    frame[_R.NOTIFIED] = mask(frame[_R.NOTIFIED])
    status, kind = frame[_R.OBS_STATUS], frame[_R.OBS_TYPE]
    is13 = mask(status.eq(ObsStatus.OK) & kind.eq(TxType.RETURNED_FUNDS))
    was_confirmed = frame[_R.CONFIRMED_AT].notna().to_numpy()
    kept = frame[frame[_R.NOTIFIED].to_numpy() | is13 | was_confirmed]
    return conform(kept, fr.ReturnsIn, name="returns")
