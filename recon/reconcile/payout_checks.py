"""What a payout's answer, age and returns say against its record: the checks of every payout.

Each kind is declared beside its rule; a rule takes the classifier's working frame (the payout, its
answer beside it as ``obs_*`` columns, its outcome) and returns where the kind stands and its facts.
Checks that need an answer are ``carried``: kept while the payout is not fetched. Text is compared
only where there is an answer (a million string comparisons are not free); the currency without
case, where a missing one in an answer counts as different (what cannot be checked is not assumed to
agree); reference and account only where both sides know them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from recon.constants import ObsStatus, Outcome, TxState, TxType
from recon.frames import ItemKind, Observations, PayoutsOut
from recon.reconcile.finding import Ends, Found, Kind, Mask, Money, Rule
from recon.reconcile.outcomes import Tonight, age_days
from recon.reconcile.work import W, answer_col, codes, mask

_P = PayoutsOut
_PAYOUT = (ItemKind.PAYOUT,)
_EITHER = (ItemKind.PAYOUT, ItemKind.RETURN)
_WAITING = (Outcome.PENDING, Outcome.DELAYED)
# The payout's own facts, beside each kind's: another state or returned amount is another finding.
PAYOUT_FACTS = ("state", "returned_minor")

AMOUNT_MISMATCH = Kind(
    name="amount_mismatch",
    items=_PAYOUT,
    label="Amount differs from the record",
    action=(
        "The provider's amount differs from our record: check both with the provider's back "
        "office and correct the record before paying anything more."
    ),
    detail=(
        "local {{ amount_minor|money_q(currency) }}, provider "
        "{% if provider_amount_minor is not none %}"
        "{{ provider_amount_minor|money(provider_currency) }}"
        "{% elif provider_amount_text is not none %}"
        "amount {{ provider_amount_text }} (does not fit the currency)"
        "{% else %}an amount that does not fit the currency{% endif %}"
    ),
    same_when=(
        "amount_minor",
        "currency",
        "provider_amount_minor",
        "provider_currency",
        "provider_amount_text",
        *PAYOUT_FACTS,
    ),
    carried=True,
)
CURRENCY_MISMATCH = Kind(
    name="currency_mismatch",
    items=_PAYOUT,
    label="Currency differs from the record",
    action=(
        "The provider's currency differs from our record: check with the provider's back office "
        "and correct the record."
    ),
    detail="local {{ currency|q }}, provider {{ provider_currency|q }}",
    same_when=("currency", "provider_currency", *PAYOUT_FACTS),
    carried=True,
)
NOT_A_PAYOUT = Kind(
    name="not_a_payout",
    items=_PAYOUT,
    label="Not a payout at the provider",
    action="The provider knows this id, but not as a payout: check the imported transaction id.",
    detail="the provider says it is a {{ type|type }}, not a payout",
    same_when=("type", *PAYOUT_FACTS),
    carried=True,
)
UNKNOWN_TRANSACTION = Kind(
    name="unknown_transaction",
    items=_PAYOUT,
    label="Unknown to the provider",
    action=(
        "The provider does not know this id: check the id; if it is right, ask the provider "
        "before paying again."
    ),
    detail="the provider does not know this transaction id",
    same_when=PAYOUT_FACTS,
    carried=True,
)
REFERENCE_MISMATCH = Kind(
    name="reference_mismatch",
    items=_PAYOUT,
    label="Reference differs from the record",
    action=(
        "The provider holds another merchant_reference for this payout: check which payout this "
        "id really is before paying or booking anything on it."
    ),
    detail="record {{ merchant_reference|q }}, provider {{ provider_reference|q }}",
    same_when=("merchant_reference", "provider_reference", *PAYOUT_FACTS),
    carried=True,
)
ACCOUNT_MISMATCH = Kind(
    name="account_mismatch",
    items=_PAYOUT,
    label="Bank account differs from the record",
    action=(
        "The provider paid another bank account than our record: check where the money went with "
        "the provider's back office before paying again."
    ),
    detail="record bank account {{ bank_account_id|q }}, provider {{ provider_account|q }}",
    same_when=("bank_account_id", "provider_account", *PAYOUT_FACTS),
    carried=True,
)
UNRECOGNISED_STATE = Kind(
    name="unrecognised_state",
    items=_PAYOUT,
    label="State the provider does not document",
    action=(
        "The provider answered a state its interface does not document (shown in the detail): "
        "treated as pending; ask the provider what it means before booking the payout."
    ),
    detail="the provider answered {{ answered_state|state }}; treated as pending",
    same_when=("answered_state", *PAYOUT_FACTS),
    carried=True,
)
SESSION_ID_RECORDED = Kind(
    name="session_id_recorded",
    items=_PAYOUT,
    label="Session id recorded instead of the payout's",
    action=(
        "The record holds a session id, not the payout's transaction id: replace it with the "
        "transaction named in the detail and re-import; do not pay again."
    ),
    detail=(
        "this id is a session, not a transaction: its transaction is "
        "{{ session_transaction_id if session_transaction_id is not none "
        "else 'not known (session.get named none)' }}; correct the record's transaction_id"
    ),
    same_when=("session_transaction_id", *PAYOUT_FACTS),
    carried=True,
)
STALE = Kind(
    name="stale",
    items=_PAYOUT,
    label="Unfinished for days",
    action=(
        "Open for longer than the stale limit: escalate to the provider with the transaction "
        "id; do not pay again while it is open."
    ),
    detail="{{ outcome }} for {{ age_days|q }} days",
    # Its age grows every night: the outcome is what makes it another finding.
    same_when=("outcome", *PAYOUT_FACTS),
    provider_advice=True,
)
WRONG_TRANSACTION = Kind(
    name="wrong_transaction",
    items=_EITHER,
    label="Answer was about another payout",
    action=(
        "The provider answered about another transaction than the one asked for (named in the "
        "detail): the outcome is kept as it was; ask the provider why, and do not act on the "
        "answer."
    ),
    detail=(
        "the provider answered about {{ answered_about|q }}"
        "{% if outcome is defined %}; kept outcome {{ outcome }}{% endif %}"
    ),
    same_when=("answered_about", *PAYOUT_FACTS),
    ends=Ends.ANSWER,
)
REFUSED = "the provider refuses this id to this merchant account"
FETCH_FAILED = Kind(
    name="fetch_failed",
    items=_EITHER,
    label="Could not be checked",
    action=(
        "Could not be fetched in this run; the next run retries. Check the provider's status if "
        "it persists. If the provider refuses the id to this merchant account, check that the id "
        "is this account's (not another brand's or country's) and ask the provider."
    ),
    detail=(
        "{% if refused %}" + REFUSED + "{% else %}could not be fetched this run{% endif %}"
        "{% if outcome is defined %}; kept outcome {{ outcome }}{% endif %}"
    ),
    # Which error a fetch met changes with the night, not with the facts.
    same_when=PAYOUT_FACTS,
    ends=Ends.ANSWER,
    provider_advice=True,
)
RETURN_EXCEEDS_PAYOUT = Kind(
    name="return_exceeds_payout",
    items=_PAYOUT,
    label="Returned more than was paid",
    action=(
        "The bank returned more than this payout: ask the provider which returns are real "
        "before crediting the customer or paying again."
    ),
    detail=(
        "confirmed returns add up to {{ returned_minor|money_q(currency) }}, more than the "
        "payout's {{ amount_minor|money_q(currency) }}"
    ),
    same_when=("amount_minor", "currency", *PAYOUT_FACTS),
    money=Money.RETURNED,
)


def _differs_where(
    ok: Mask, work: pd.DataFrame, record: str, answer: str, *, upper: bool = False
) -> Mask:
    """Where this run's answer differs from the record in one field (see the module docstring)."""
    ours, theirs = work.loc[ok, record], work.loc[ok, answer_col(answer)]
    if upper:
        # Equal text is equal in any case: only the rest are upper-cased to be compared.
        same = theirs.eq(ours).fillna(False)
        rest = ~same.to_numpy(dtype=bool)
        same[rest] = theirs[rest].str.upper().eq(ours[rest].str.upper())
    else:
        same = theirs.eq(ours) | theirs.isna() | ours.isna()
    differs = np.zeros(len(work), dtype=bool)
    differs[ok] = ~mask(same)
    return differs


def _facts(work: pd.DataFrame, **columns: object) -> pd.DataFrame:
    return pd.DataFrame(columns, index=work.index)


def amount_mismatch(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    provider = work[answer_col(Observations.AMOUNT_MINOR)]
    return Found(
        ok & ~mask(provider.eq(work[_P.AMOUNT_MINOR])),
        _facts(
            work,
            amount_minor=work[_P.AMOUNT_MINOR],
            currency=work[_P.CURRENCY],
            provider_amount_minor=provider,
            provider_currency=work[answer_col(Observations.CURRENCY)].fillna(work[_P.CURRENCY]),
            provider_amount_text=work[answer_col(Observations.AMOUNT_TEXT)],
        ),
    )


def currency_mismatch(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    return Found(
        _differs_where(ok, work, _P.CURRENCY, Observations.CURRENCY, upper=True),
        _facts(
            work,
            currency=work[_P.CURRENCY],
            provider_currency=work[answer_col(Observations.CURRENCY)],
        ),
    )


def reference_mismatch(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    return Found(
        _differs_where(ok, work, _P.MERCHANT_REFERENCE, Observations.MERCHANT_REFERENCE),
        _facts(
            work,
            merchant_reference=work[_P.MERCHANT_REFERENCE],
            provider_reference=work[answer_col(Observations.MERCHANT_REFERENCE)],
        ),
    )


def account_mismatch(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    return Found(
        _differs_where(ok, work, _P.BANK_ACCOUNT_ID, Observations.TO_BANK_ACCOUNT_ID),
        _facts(
            work,
            bank_account_id=work[_P.BANK_ACCOUNT_ID],
            provider_account=work[answer_col(Observations.TO_BANK_ACCOUNT_ID)],
        ),
    )


def unrecognised_state(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    state = work[answer_col(Observations.STATE)]
    documented = mask(state.isin([s.value for s in TxState]))
    found = ok & ~documented
    raw = work[answer_col(Observations.STATE_RAW)].copy()
    # The state as text only where it is found (only those rows' facts are read).
    fill = found & raw.isna().to_numpy()
    raw[fill] = work.loc[fill, _P.STATE].astype("string")
    return Found(found, _facts(work, answered_state=raw))


def not_a_payout(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    ok = work[W.OK].to_numpy()
    kind = work[answer_col(Observations.TYPE)]
    return Found(ok & ~mask(kind.eq(TxType.PAYOUT)), _facts(work, type=kind))


def unknown_transaction(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    return Found(work[W.NOT_FOUND].to_numpy(), _facts(work))


def session_id_recorded(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    session_tx = work[answer_col(Observations.RELATED_TRANSACTION_ID)]
    return Found(work[W.SESSION].to_numpy(), _facts(work, session_transaction_id=session_tx))


def stale(work: pd.DataFrame, tonight: Tonight, __: Mapping[Kind, Found]) -> Found:
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    age = age_days(work, tonight.as_of)
    return Found(
        np.isin(outcome, codes(_WAITING)) & mask(age > tonight.params.stale_days),
        _facts(work, outcome=work[_P.OUTCOME].astype("string"), age_days=age.round(1)),
    )


def wrong_transaction(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    # An answer about another id is not a fetch failure: the provider said something wrong.
    return Found(
        work[W.WRONG_ID].to_numpy(),
        _facts(
            work,
            answered_about=work[answer_col(Observations.RELATED_TRANSACTION_ID)],
            outcome=work[_P.OUTCOME].astype("string"),
        ),
    )


def fetch_failed(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    fetched = work[W.FETCHED].to_numpy()
    refused = mask(work[answer_col(Observations.STATUS)].eq(ObsStatus.REFUSED))
    return Found(
        work[_P.POLLED].to_numpy() & ~fetched & ~work[W.WRONG_ID].to_numpy(),
        _facts(work, refused=refused, outcome=work[_P.OUTCOME].astype("string")),
    )


def return_exceeds_payout(work: pd.DataFrame, _: Tonight, __: Mapping[Kind, Found]) -> Found:
    return Found(
        mask(work[_P.RETURNED_MINOR] > work[_P.AMOUNT_MINOR]),
        _facts(
            work,
            returned_minor=work[_P.RETURNED_MINOR],
            amount_minor=work[_P.AMOUNT_MINOR],
            currency=work[_P.CURRENCY],
        ),
    )


# The checks in the order they run (each a rule of its kind: recon.reconcile.kinds.PAYOUT_RULES).
RULES: tuple[tuple[Kind, Rule], ...] = (
    (AMOUNT_MISMATCH, amount_mismatch),
    (CURRENCY_MISMATCH, currency_mismatch),
    (REFERENCE_MISMATCH, reference_mismatch),
    (ACCOUNT_MISMATCH, account_mismatch),
    (UNRECOGNISED_STATE, unrecognised_state),
    (NOT_A_PAYOUT, not_a_payout),
    (UNKNOWN_TRANSACTION, unknown_transaction),
    (SESSION_ID_RECORDED, session_id_recorded),
    (STALE, stale),
    (WRONG_TRANSACTION, wrong_transaction),
    (FETCH_FAILED, fetch_failed),
    (RETURN_EXCEEDS_PAYOUT, return_exceeds_payout),
)
