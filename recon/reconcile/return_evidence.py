"""What is known of returned-funds transactions when a run starts, judged from what the store holds.

Pure. Two rules live here, each once:

- **Which earlier answer speaks for a return** (:func:`evidence`): an ``ok`` answer about an id
  answered as type 13 or announced by a notification, or a ``not_found`` one about a return a
  run once confirmed (the provider forgetting it is news); the latest of those per id speaks.
- **When runs asked about a claim** (:func:`claims`): the runs that started after its latest
  notification (the receiver's wall clock), on their own clock (``as_of``, as every time rule).
"""

from __future__ import annotations

from collections.abc import Set

import pandas as pd

from recon.constants import ObsStatus, TxType
from recon.decision import KnownReturns, ReturnReads
from recon.frames import ReturnsIn
from recon.run_frames import Asks, Claims, Notified, StoredAnswers

_S = StoredAnswers


def known(reads: ReturnReads) -> KnownReturns:
    """The :class:`KnownReturns` of what the store holds (:class:`ReturnReads`)."""
    announced = frozenset(reads.notices[ReturnsIn.RETURN_ID].dropna().astype(str))
    earlier, seen13 = evidence(reads.answers, announced=announced, confirmed=reads.confirmed_ids)
    return KnownReturns(
        notices=reads.notices,
        earlier=earlier,
        confirmations=reads.confirmations,
        seen13=seen13,
        claims=claims(reads.notified, reads.asks),
        previous_started_at=reads.previous_started_at,
        watched=reads.watched,
    )


def evidence(
    answers: pd.DataFrame, *, announced: Set[str], confirmed: Set[str]
) -> tuple[pd.DataFrame, frozenset[str]]:
    """Per id, the latest answer that speaks for a return (``answers`` oldest first, without their
    ``id``), and the ids some answer showed as type 13."""
    ids = answers[_S.TRANSACTION_ID].astype("string")
    status = answers[_S.STATUS].astype("string")
    is13 = answers[_S.TYPE].astype("Int64").eq(int(TxType.RETURNED_FUNDS)).fillna(False)
    ok = status.eq(ObsStatus.OK.value).fillna(False) & (is13 | ids.isin(announced))
    gone = status.eq(ObsStatus.NOT_FOUND.value).fillna(False) & ids.isin(confirmed)
    keep = (ok | gone).to_numpy(dtype=bool)
    kept = answers[keep]
    seen13 = frozenset(answers.loc[keep & is13.to_numpy(dtype=bool), _S.TRANSACTION_ID].astype(str))
    latest = kept.drop_duplicates(_S.TRANSACTION_ID, keep="last").drop(columns=_S.ID)
    return latest.reset_index(drop=True), seen13


def claims(notified: pd.DataFrame, asks: pd.DataFrame) -> pd.DataFrame:
    """Per announced id: its latest notification, and the first and last ``as_of`` of the runs
    that asked about it since (started at or after it; NaT: none did)."""
    joined = asks.merge(notified, left_on=Asks.TRANSACTION_ID, right_on=Notified.RETURN_ID)
    later = (joined[Asks.STARTED_AT] >= joined[Notified.LAST_NOTIFIED_AT]).to_numpy(dtype=bool)
    since = joined[later]
    asked = since.groupby(Notified.RETURN_ID, sort=False)[Asks.AS_OF].agg(["min", "max"])
    asked = asked.rename(columns={"min": Claims.FIRST_ASKED_AT, "max": Claims.LAST_ASKED_AT})
    out = notified.merge(asked, left_on=Notified.RETURN_ID, right_index=True, how="left")
    return out[Claims.names()].reset_index(drop=True)
