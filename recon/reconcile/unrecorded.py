"""The provider's side: ids the provider named that the record lacks, and creates
recorded without a transaction id. Pure.

    named by a callback, a return or an answer, not recorded  -> an item, asked about (the cap)
    answered as a type-1 payout                               -> unrecorded_payout, naming twins
    answered as another type, or a session's id               -> counted ("other types")
    not found at the provider (forged, mistyped)              -> counted, never a finding
    recorded since                                            -> done (its finding clears)
    a create without an id                                    -> creation_unknown every night,
                                                                 until an item or a recorded
                                                                 payout has its reference and
                                                                 amount (or a person resolves it)

A twin is a recorded payout with the same merchant_reference, or to the same bank account with the
same amount and currency created within RECON_DUPLICATE_WINDOW of it. The provider's answer carries
no customer, so an unrecorded payout's twins are found by reference and account only; an
attempt, which has neither id nor answer, is matched on reference and amount alone (the interface
has no look-up by reference: recon never guesses an id).

Items are few (ids the record lacks, at most RECON_UNRECORDED_POLL_CAP asked a night).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.conform import typed
from recon.constants import ANSWERED, ItemStatus, ObsStatus, TxState, TxType
from recon.decision import ProviderInputs, ProviderSide
from recon.frames import ItemKind, Observations
from recon.reconcile.finding import Found, Kind, Money, findings
from recon.run_frames import Attempts, FirstNamed, Named, ProviderItems, Recorded

# States after which a payout's answer does not change by itself: not asked again.
_FINAL_STATES = frozenset({int(TxState.ABORTED), int(TxState.FAILED), int(TxState.SETTLED)})
# Who named an id: a transaction callback, a returned-funds notification's original id, an
# answer's related id, or a returned-funds notification's own id (a claim).
NAMED_BY_CLAIM = "claim"
_I, _A, _R = ProviderItems, Attempts, Recorded
_ABOUT = (
    "the provider made payout {{ transaction_id }} of "
    "{{ amount_minor|money_or(currency, 'an amount it did not give') }} ("
    "{% if state is none %}state unknown{% else %}{{ state|state }}{% endif %}"
    "{% if merchant_reference is not none %}, reference {{ merchant_reference }}{% endif %}"
    "{% if to_bank_account_id is not none %}, to account {{ to_bank_account_id }}{% endif %}"
    "{% if created is not none %}, created {{ created|time }}{% endif %}); the record lacks it"
    "{% if twins %}; it could be the twin of {{ twins|join(', ') }}"
    "{% else %}; no recorded payout looks like its twin{% endif %}"
)
UNRECORDED_PAYOUT = Kind(
    name="unrecorded_payout",
    items=(ItemKind.PROVIDER,),
    label="Payout missing from the record",
    action=(
        "The provider made this payout and our record lacks it (often a create whose answer was "
        "lost): check its twins in the detail; if one repeats it, the customer was paid twice, "
        "so recover one; otherwise import it into the record. Do not pay again."
    ),
    detail=_ABOUT,
    same_when=(
        "transaction_id",
        "amount_minor",
        "currency",
        "state",
        "merchant_reference",
        "to_bank_account_id",
        "created",
        "twins",
    ),
    money=Money.POSSIBLY_TWICE,
)
CREATION_UNKNOWN = Kind(
    name="creation_unknown",
    items=(ItemKind.ATTEMPT,),
    label="Payout sent without an id recorded",
    action=(
        "A create was recorded without a transaction id, so its outcome is unknown: find the id "
        "in the provider's back office (or its callback) by the reference and import it; "
        "re-create only once you know it was not made, and resolve this then."
    ),
    detail=(
        "a create of {{ amount_minor|money_or(currency, 'an amount it did not give') }}, "
        "reference {{ merchant_reference }}"
        "{% if bank_account_id is not none %}, to account {{ bank_account_id }}{% endif %}"
        "{% if created is not none %}, created {{ created|time }}{% endif %}, is recorded "
        "without a transaction id: its outcome is unknown until the provider names it (find the "
        "id in the provider's back office or its callback); paying again is a person's call"
    ),
    same_when=("amount_minor", "currency", "merchant_reference", "bank_account_id", "created"),
    money=Money.POSSIBLY_TWICE,
)

# Footer counts of the provider's side (RunCounts.provider; the report words them).
COUNT_PAYOUTS = "unrecorded_payouts"
COUNT_OTHER = "other_types"  # payments, refunds, sessions' ids (not returns: those are judged)
COUNT_UNKNOWN = "unknown"
COUNT_OVER_CAP = "over_cap"


def named_ids(notified: pd.DataFrame, answers: pd.DataFrame, *, at: datetime) -> pd.DataFrame:
    """Every id the provider named, first naming first: ``notified`` (transaction_id, named_by,
    named_at: from the notifications) and this run's answers' related and original ids (named by
    "answer" at ``at``). Columns transaction_id, named_by, first_named_at."""
    from_answers = pd.concat(
        [
            answers[Observations.RELATED_TRANSACTION_ID],
            answers[Observations.ORIGINAL_TRANSACTION_ID],
        ],
        ignore_index=True,
    ).dropna()
    frame = pd.concat(
        [
            notified.rename(columns={Named.NAMED_AT: _I.FIRST_NAMED_AT}),
            pd.DataFrame(
                {_I.TRANSACTION_ID: from_answers, _I.NAMED_BY: "answer", _I.FIRST_NAMED_AT: at}
            ),
        ],
        ignore_index=True,
    )
    frame = typed(frame, FirstNamed)
    frame = frame[frame[_I.TRANSACTION_ID].fillna("") != ""]
    return (
        frame.sort_values([_I.FIRST_NAMED_AT, _I.TRANSACTION_ID], kind="stable")
        .drop_duplicates(_I.TRANSACTION_ID)
        .reset_index(drop=True)
    )


def new_items(named: pd.DataFrame) -> pd.DataFrame:
    """Items for ids named for the first time (``named`` less the recorded and the known ones)."""
    return typed(named.assign(status=ItemStatus.UNASKED.value), ProviderItems)


def to_ask(items: pd.DataFrame, *, cap: int, answered: Iterable[str] = ()) -> tuple[list[str], int]:
    """Which items to ask about this run, least recently asked first, at most ``cap``; and how
    many more were due (asked by the next run). Due: never answered, or a payout the record
    lacks whose state may still move. Ids this run already has an answer about are not asked
    twice (a return's id, a resumed run's), and a returned-funds notification's own id (a claim)
    is left to the claims' schedule: an answer it gets there judges its item."""
    status = items[_I.STATUS].astype(str)
    moving = ~items[_I.STATE].isin(list(_FINAL_STATES)).fillna(False).astype(bool)
    due = (status == ItemStatus.UNASKED) | ((status == ItemStatus.PAYOUT) & moving)
    due &= ~items[_I.TRANSACTION_ID].isin(list(answered))
    # A returned-funds claim's own id is asked on the claims' schedule, under their cap.
    due &= (items[_I.NAMED_BY] != NAMED_BY_CLAIM).fillna(True).to_numpy()
    ordered = items[due.to_numpy()]
    # From the filtered frame itself: a Series assigned to an EMPTY frame brings its own index.
    ordered = ordered.assign(_never=ordered[_I.LAST_ASKED_RUN_ID].isna().to_numpy())
    ordered = ordered.sort_values(
        ["_never", _I.LAST_ASKED_RUN_ID, _I.FIRST_NAMED_AT, _I.TRANSACTION_ID],
        ascending=[False, True, True, True],
        kind="stable",
        na_position="first",
    )
    ids = [str(i) for i in ordered[_I.TRANSACTION_ID].tolist()]
    return ids[:cap], max(0, len(ids) - cap)


def judge_items(
    items: pd.DataFrame,
    latest: pd.DataFrame,
    *,
    recorded_ids: frozenset[str],
    run_id: int | None,
    as_of: datetime,
) -> pd.DataFrame:
    """The items as they stand after this run's answers: ok type 1 a payout, another type an
    other, not found unknown, a session's id other; a failed fetch changes nothing; an id the
    record has now is recorded. Each answered item takes the answer's fields."""
    if items.empty:  # most nights the provider named no id the record lacks: nothing to judge
        return typed(items, ProviderItems)
    answers = latest[latest[Observations.TRANSACTION_ID].isin(items[_I.TRANSACTION_ID])]
    answers = answers.set_index(Observations.TRANSACTION_ID)
    ids = items[_I.TRANSACTION_ID]
    got = ids.map(answers[Observations.STATUS].astype("string")).astype("string").fillna("")
    kind = ids.map(answers[Observations.TYPE].astype("Int64")).astype("Int64")
    ok = (got == ObsStatus.OK).to_numpy()
    status = np.select(
        [
            ids.isin(list(recorded_ids)).to_numpy(),
            ok & (kind == int(TxType.PAYOUT)).fillna(False).to_numpy(),
            ok | (got == ObsStatus.SESSION).to_numpy(),
            (got == ObsStatus.NOT_FOUND).to_numpy(),
        ],
        [ItemStatus.RECORDED, ItemStatus.PAYOUT, ItemStatus.OTHER, ItemStatus.UNKNOWN],
        default=items[_I.STATUS].astype(str).to_numpy(),
    )
    out = items.copy()
    asked = (got != "").to_numpy()
    out[_I.STATUS] = pd.array(status, dtype="string")
    if run_id is not None:
        out.loc[asked, _I.LAST_ASKED_RUN_ID] = run_id
    # Only an answer is one: a failed fetch, a refusal or an answer about another id is not.
    answered = got.isin([str(a) for a in ANSWERED]).to_numpy()
    out.loc[answered, _I.ANSWERED_AT] = pd.Timestamp(as_of)
    for column in (
        _I.TYPE,
        _I.STATE,
        _I.AMOUNT_MINOR,
        _I.CURRENCY,
        _I.MERCHANT_REFERENCE,
        _I.TO_BANK_ACCOUNT_ID,
        _I.CREATED,
    ):
        if column in answers.columns:
            fresh = answers[column].reindex(ids.to_numpy())
            out[column] = out[column].astype(object)
            out.loc[ok, column] = fresh.to_numpy()[ok]
    return typed(out, ProviderItems)


def twins(items: pd.DataFrame, recorded: pd.DataFrame, *, window: pd.Timedelta) -> pd.Series:
    """Per item (by transaction_id): the recorded payouts that could be it, ", "-joined, sorted.

    Same merchant_reference; or the same bank account, amount and currency with ``created``
    within ``window`` of each other (either unknown: a candidate)."""
    if items.empty:  # no item, no twin to look for among the recorded payouts
        return items[_I.TRANSACTION_ID].astype("string")
    left = items[
        [
            _I.TRANSACTION_ID,
            _I.MERCHANT_REFERENCE,
            _I.TO_BANK_ACCOUNT_ID,
            _I.AMOUNT_MINOR,
            _I.CURRENCY,
            _I.CREATED,
        ]
    ].rename(columns={_I.TRANSACTION_ID: "item"})
    rec = recorded.assign(**{_R.CURRENCY: recorded[_R.CURRENCY].str.upper()})
    left = left.assign(**{_I.CURRENCY: left[_I.CURRENCY].str.upper()})
    by_ref = left.dropna(subset=[_I.MERCHANT_REFERENCE]).merge(
        rec[[_R.TRANSACTION_ID, _R.MERCHANT_REFERENCE]], on=_R.MERCHANT_REFERENCE
    )
    by_account = left.dropna(subset=[_I.TO_BANK_ACCOUNT_ID]).merge(
        rec[[_R.TRANSACTION_ID, _R.BANK_ACCOUNT_ID, _R.AMOUNT_MINOR, _R.CURRENCY, _R.CREATED]],
        left_on=[_I.TO_BANK_ACCOUNT_ID, _I.AMOUNT_MINOR, _I.CURRENCY],
        right_on=[_R.BANK_ACCOUNT_ID, _R.AMOUNT_MINOR, _R.CURRENCY],
        suffixes=("", "_rec"),
    )
    gap = (by_account[_R.CREATED] - by_account[f"{_R.CREATED}_rec"]).abs()
    by_account = by_account[(gap <= window).fillna(True).astype(bool).to_numpy()]
    both = pd.concat(
        [by_ref[["item", _R.TRANSACTION_ID]], by_account[["item", _R.TRANSACTION_ID]]],
        ignore_index=True,
    ).drop_duplicates()
    joined = both.sort_values(_R.TRANSACTION_ID).groupby("item")[_R.TRANSACTION_ID].agg(", ".join)
    return items[_I.TRANSACTION_ID].map(joined).astype("string").fillna("")


def match_attempts(
    attempts: pd.DataFrame, items: pd.DataFrame, recorded: pd.DataFrame
) -> pd.DataFrame:
    """Attempts whose merchant_reference, amount and currency an item answered as a payout, or a
    recorded payout, carries: (id, transaction_id), the lowest transaction id where several do."""
    if attempts.empty:  # no attempt to match (most nights)
        return pd.DataFrame(
            {_A.ID: pd.Series(dtype="Int64"), _R.TRANSACTION_ID: pd.Series(dtype="string")}
        )
    payouts = items[items[_I.STATUS] == ItemStatus.PAYOUT]
    same = [_R.TRANSACTION_ID, _R.MERCHANT_REFERENCE, _R.AMOUNT_MINOR, _R.CURRENCY]
    candidates = pd.concat([payouts[same], recorded[same]], ignore_index=True)
    candidates = candidates.assign(**{_R.CURRENCY: candidates[_R.CURRENCY].str.upper()})
    key = [_A.MERCHANT_REFERENCE, _A.AMOUNT_MINOR, _A.CURRENCY]
    matched = attempts[[_A.ID, *key]].merge(candidates, on=key)
    return (
        matched.sort_values([_A.ID, _R.TRANSACTION_ID])
        .drop_duplicates(_A.ID)[[_A.ID, _R.TRANSACTION_ID]]
        .reset_index(drop=True)
        .astype({_A.ID: "Int64", _R.TRANSACTION_ID: "string"})
    )


def _unrecorded(payouts: pd.DataFrame, twin: pd.Series) -> Found:
    """The facts of each payout the record lacks. Only what stays true while the finding stands (a
    matched attempt is not named: it is matched once, and facts that changed the next night would
    reopen a person's resolution)."""
    return Found(
        np.ones(len(payouts), dtype=bool),
        pd.DataFrame(
            {
                "transaction_id": payouts[_I.TRANSACTION_ID],
                "amount_minor": payouts[_I.AMOUNT_MINOR],
                "currency": payouts[_I.CURRENCY],
                "state": payouts[_I.STATE],
                "merchant_reference": payouts[_I.MERCHANT_REFERENCE],
                "to_bank_account_id": payouts[_I.TO_BANK_ACCOUNT_ID],
                "created": payouts[_I.CREATED],
                "twins": [t.split(", ") if t else [] for t in twin.fillna("")],
            },
            index=payouts.index,
        ),
    )


def _unknown_creations(attempts: pd.DataFrame) -> Found:
    return Found(
        np.ones(len(attempts), dtype=bool),
        pd.DataFrame(
            {
                "amount_minor": attempts[_A.AMOUNT_MINOR],
                "currency": attempts[_A.CURRENCY],
                "merchant_reference": attempts[_A.MERCHANT_REFERENCE],
                "bank_account_id": attempts[_A.BANK_ACCOUNT_ID],
                "created": attempts[_A.CREATED],
            },
            index=attempts.index,
        ),
    )


def provider_side(
    inputs: ProviderInputs, latest: pd.DataFrame, *, run_id: int | None, as_of: datetime
) -> tuple[ProviderSide, pd.DataFrame, frozenset[tuple[str, str]]]:
    """Judge every item and attempt: (what to write and count, the findings, the items judged)."""
    before = inputs.items
    items = judge_items(
        before, latest, recorded_ids=inputs.recorded_ids, run_id=run_id, as_of=as_of
    )
    matches = match_attempts(inputs.attempts, items, inputs.recorded)
    open_attempts = inputs.attempts[~inputs.attempts[_A.ID].isin(matches[_A.ID]).to_numpy()]
    payouts = items[items[_I.STATUS] == ItemStatus.PAYOUT].reset_index(drop=True)
    twin = twins(payouts, inputs.recorded, window=inputs.window)
    found = pd.concat(
        [
            findings(
                UNRECORDED_PAYOUT,
                ItemKind.PROVIDER,
                payouts[_I.TRANSACTION_ID],
                _unrecorded(payouts, twin),
            ),
            findings(
                CREATION_UNKNOWN,
                ItemKind.ATTEMPT,
                open_attempts[_A.ID].astype("string"),
                _unknown_creations(open_attempts),
            ),
        ],
        ignore_index=True,
    )
    answered_now = items[_I.ANSWERED_AT].eq(pd.Timestamp(as_of)).fillna(False).to_numpy()
    changed_to = items[_I.STATUS].astype(str).where(answered_now, "")
    counts = {
        COUNT_PAYOUTS: len(payouts),
        COUNT_OTHER: int(
            ((changed_to == ItemStatus.OTHER) & (items[_I.TYPE] != int(TxType.RETURNED_FUNDS)))
            .fillna(True)
            .sum()
        ),
        COUNT_UNKNOWN: int((changed_to == ItemStatus.UNKNOWN).sum()),
        COUNT_OVER_CAP: inputs.over_cap,
    }
    judged = frozenset(
        [(ItemKind.PROVIDER.value, str(i)) for i in items[_I.TRANSACTION_ID]]
        + [(ItemKind.ATTEMPT.value, str(i)) for i in inputs.attempts[_A.ID]]
    )
    side = ProviderSide(items=items, matches=matches, counts={k: v for k, v in counts.items() if v})
    return side, found, judged


def no_provider_side() -> ProviderInputs:
    """Nothing of the provider's side (a store or a test that does not read it)."""
    return ProviderInputs(
        items=fr.empty(ProviderItems),
        attempts=fr.empty(Attempts),
        recorded=fr.empty(Recorded),
        window=pd.Timedelta(hours=24),
    )
