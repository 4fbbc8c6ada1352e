"""Which stored payouts a run must decide: the night's work, not the whole history.

Pure. A payout the run neither asked about nor can learn anything new of keeps every reconciled
column as the store has it, so deciding it again would change nothing: the rules of
:mod:`recon.reconcile.outcomes`, :mod:`.returns` and :mod:`.record` only move a payout that

- was asked about this run (its answer, or its fetch failure): ``poll_ids``; every open payout is
  among them, so ``stale`` and ``delayed`` (the flags that depend on "now") are covered;
- carries flags or candidate duplicates (carried flags are re-derived every run, and a late
  settlement's candidate duplicates may grow): the store's own non-empty ``exceptions`` and
  ``candidate_duplicates``, and every payout a live case names (so none turns "resolved"
  unseen);
- a known return names, claims or was confirmed for (returned amount, ``return_on_unsettled``,
  whether an original is in the store);
- has a watched outcome but no next check yet (a store upgraded from before the schedule): its
  first ``next_check_at`` is set, for outcomes seen inside their own group's window (past it the
  schedule gives no next check, so nothing would change: at steady state that is every settled
  payout older than ``return_watch_days``, most of the history);
- may be a candidate duplicate of a late settlement: a later payout of the same amount and currency
  to the same bank account or customer (created after it, or either ``created`` unknown: the rule
  of :func:`recon.reconcile.outcomes.candidate_duplicates`). :func:`duplicate_parties` names the
  accounts and customers to read, with the ``created`` the read may start after, once the
  payouts above are in hand;
- may pair with one of them as a possible duplicate (:mod:`recon.reconcile.duplicates`): the same
  ``merchant_reference``, or the same party and amount created within the window. Every payout a
  group's member is read with the group, so a member nobody polls still learns of a new one (a
  group whose members are all flagged is read through ``exceptions``).

:func:`related_reads` turns the last two into values (references, party ranges) once the payouts
above are in hand; the store reads both by index (:mod:`recon.store.run_inputs`); the totals of
every outcome come from a count, not from the frame (:func:`other_outcomes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

import pandas as pd

from recon.constants import FAILED_OUTCOMES
from recon.decision import KnownReturns, PartyRange, PayoutScope, RelatedReads
from recon.frames import ItemKind, PayoutsIn
from recon.reconcile.late import LATE_SETTLEMENT
from recon.reconcile.watch import WatchParams
from recon.run_frames import Cases, FailureCallbacks

_P = PayoutsIn
_RETURN_ID_COLUMNS = ("related_transaction_id", "original_transaction_id")


def payout_scope(
    *,
    poll_ids: Iterable[str],
    returns: KnownReturns,
    answers: pd.DataFrame,
    cases: pd.DataFrame,
    as_of: datetime,
    watch: WatchParams,
) -> PayoutScope:
    """The payouts this run must decide (see the module docstring for why each); ``cases``: the
    live cases (:class:`recon.run_frames.Cases`)."""
    named: set[str] = set(poll_ids)
    named.update(
        cases.loc[cases[Cases.ITEM_KIND] == ItemKind.PAYOUT, "item_id"].dropna().astype(str)
    )
    for frame, columns in (
        (returns.notices, ("claimed_original_id",)),
        (returns.earlier, _RETURN_ID_COLUMNS),
        (returns.confirmations, ("confirmed_original_id",)),
        (answers, _RETURN_ID_COLUMNS),
    ):
        for column in columns:
            if column in frame.columns:
                named.update(frame[column].dropna().astype(str))
    unscheduled = tuple(
        (
            frozenset(o.value for o in window.outcomes),
            watch.window_start(as_of, window.days).to_pydatetime(),
        )
        for window in watch.windows()
    )
    return PayoutScope(ids=frozenset(named), unscheduled=unscheduled)


def other_outcomes(stored: Mapping[str, int], payouts: pd.DataFrame) -> dict[str, int]:
    """How many stored payouts outside ``payouts`` (those read) have each outcome: ``stored``
    counts every stored payout's outcome; those read are decided again and counted from that."""
    others = Counter(stored)
    read = payouts[_P.PREV_OUTCOME].astype("string").dropna().value_counts()
    others.subtract({str(k): int(v) for k, v in read.items()})
    return {k: v for k, v in others.items() if v > 0}


def duplicate_parties(payouts: pd.DataFrame, failure_callbacks: pd.DataFrame) -> pd.DataFrame:
    """Bank accounts and customers (with amount and currency) a late settlement may repeat to.

    A late settlement needs the payout to have been seen failed (``ever_failed``, a failed or
    aborted previous outcome, a failure callback) or carries the flag from before; the payouts
    that may repeat it share its amount and currency and its bank account or customer, and were
    created after it (or either ``created`` is unknown). Returns one row per such payout:
    ``bank_account_id``, ``customer_id``, ``amount_minor``, ``created``.
    """
    seen_failed = (
        payouts[_P.EVER_FAILED].fillna(False).astype(bool)
        | payouts[_P.PREV_OUTCOME].astype("string").isin(FAILED_OUTCOMES).fillna(False).astype(bool)
        | payouts[_P.TRANSACTION_ID].isin(failure_callbacks[FailureCallbacks.TRANSACTION_ID])
        | payouts[_P.PREV_EXCEPTIONS]
        .astype("string")
        .str.contains(LATE_SETTLEMENT.name, regex=False)
        .fillna(False)
    )
    return payouts.loc[
        seen_failed.to_numpy(dtype=bool),
        [_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID, _P.AMOUNT_MINOR, _P.CREATED],
    ].reset_index(drop=True)


def related_reads(
    payouts: pd.DataFrame, failure_callbacks: pd.DataFrame, *, window: timedelta
) -> RelatedReads:
    """What to read beside ``payouts`` (the scope's): the payouts a late settlement may repeat
    (:func:`duplicate_parties`), and every payout that may pair with one of ``payouts`` as a
    possible duplicate: its ``merchant_reference``, its party and amount within ``window``."""
    ranges: set[PartyRange] = set()
    late = duplicate_parties(payouts, failure_callbacks)
    for party in (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID):
        for (who, amount), since in _late_starts(late, party).items():
            ranges.add(PartyRange(str(party), who, amount, since, None, undated=True))
        for (who, amount), spans in _windows(payouts, party, window).items():
            for since, until in spans:
                ranges.add(PartyRange(str(party), who, amount, since, until, undated=False))
    references = payouts[_P.MERCHANT_REFERENCE].dropna().astype(str)
    return RelatedReads(
        references=frozenset(references.tolist()),
        ranges=tuple(sorted(ranges, key=_range_key)),
    )


def _range_key(r: PartyRange) -> tuple[str, str, int, str, str]:
    return (r.party, r.who, r.amount_minor, str(r.since), str(r.until))


def _late_starts(parties: pd.DataFrame, party: str) -> dict[tuple[str, int], datetime | None]:
    """Per (party, amount): the earliest ``created`` a candidate must follow (None: any, since a
    payout of the pair has no ``created`` and every payout of the pair may then repeat it)."""
    starts: dict[tuple[str, int], datetime | None] = {}
    for who, amount, created in zip(
        parties[party], parties[_P.AMOUNT_MINOR], parties[_P.CREATED], strict=True
    ):
        if pd.isna(who) or pd.isna(amount):
            continue
        key = (str(who), int(amount))
        at = None if pd.isna(created) else pd.Timestamp(created).to_pydatetime()
        if key not in starts:
            starts[key] = at
        else:
            earlier = starts[key]
            if earlier is not None:
                starts[key] = None if at is None else min(earlier, at)
    return starts


def _windows(
    payouts: pd.DataFrame, party: str, window: timedelta
) -> dict[tuple[str, int], list[tuple[datetime, datetime]]]:
    """Per (party, amount): the spans of ``created`` within ``window`` of a payout's, merged
    where they overlap (a payout without ``created`` pairs by reference only). One sort of every
    payout, not a loop per party and amount."""
    known = payouts[[party, _P.AMOUNT_MINOR, _P.CREATED]].dropna()
    if known.empty:
        return {}
    known = known.assign(**{party: known[party].astype(str)}).sort_values(
        [party, _P.AMOUNT_MINOR, _P.CREATED], kind="stable"
    )
    created = known[_P.CREATED]
    since, until = created - window, created + window
    group = (known[[party, _P.AMOUNT_MINOR]] != known[[party, _P.AMOUNT_MINOR]].shift()).any(axis=1)
    # A span starts at a group's first payout or where no earlier one's window reaches it.
    reach = until.groupby(group.cumsum()).cummax().shift()
    starts = group | (since > reach).fillna(True)
    spans = (
        pd.DataFrame(
            {"who": known[party], "amount": known[_P.AMOUNT_MINOR], "since": since, "until": until}
        )
        .groupby(starts.cumsum().to_numpy(), sort=True)
        .agg(
            who=("who", "first"),
            amount=("amount", "first"),
            since=("since", "min"),
            until=("until", "max"),
        )
    )
    out: dict[tuple[str, int], list[tuple[datetime, datetime]]] = {}
    for who, amount, first, last in zip(
        spans["who"].tolist(),
        spans["amount"].tolist(),
        spans["since"].dt.to_pydatetime(),
        spans["until"].dt.to_pydatetime(),
        strict=True,
    ):
        out.setdefault((str(who), int(amount)), []).append((first, last))
    return out
