"""What is wrong with a returned-funds transaction: its link, its confirmation, its amount.

Each kind is declared beside its rule; the rules read the linked returns
(:func:`recon.reconcile.returns.link_returns`). A return that could not be fetched, or whose answer
was about another id, is the payouts' own :data:`~recon.reconcile.payout_checks.FETCH_FAILED` and
:data:`~recon.reconcile.payout_checks.WRONG_TRANSACTION`, about the return.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import NOT_FETCHED, ObsStatus
from recon.frames import ItemKind, ReturnsJudged
from recon.money import to_minor
from recon.reconcile.finding import Found, Kind, Mask, Money, findings, no_findings
from recon.reconcile.payout_checks import FETCH_FAILED, WRONG_TRANSACTION
from recon.reconcile.work import W, mask

_R = ReturnsJudged
_RETURN = (ItemKind.RETURN,)

RETURN_WITHOUT_PAYOUT = Kind(
    name="return_without_payout",
    items=_RETURN,
    label="Returned money with no payout",
    action="Returned funds name a payout we do not have: check the original id with the provider.",
    detail=(
        "{% if claims %}notifications name different payouts: {{ claims|join(';') }}"
        "{% elif original_id is none %}no original payout is named"
        "{% else %}original payout {{ original_id }} is not in the store{% endif %}"
    ),
    same_when=("claims", "original_id"),
    money=Money.RETURNED,
)
RETURN_UNVERIFIED = Kind(
    name="return_unverified",
    items=_RETURN,
    label="Return not confirmed by the provider",
    action=(
        "The provider does not confirm this return (the callback may be forged): do not pay out "
        "again or book the money as returned on its word."
    ),
    detail=(
        "{% if claims %}notifications name different payouts: {{ claims|join(';') }}"
        "{% elif why == 'unknown' %}the provider does not know this transaction id"
        "{% elif why == 'not_returned_funds' %}the provider says it is a {{ type|type }}, "
        "not returned funds"
        "{% elif why == 'other_payout' %}the provider links it to {{ confirmed_for|q }}, not "
        "{{ claimed_original_id|q }}"
        "{% elif why == 'not_fetched' %}not fetched from the provider yet"
        "{% else %}the provider names no payout for it{% endif %}"
    ),
    same_when=("claims", "why", "type", "confirmed_for", "claimed_original_id"),
    money=Money.RETURNED,
)
RETURN_CURRENCY_MISMATCH = Kind(
    name="return_currency_mismatch",
    items=_RETURN,
    label="Return in another currency",
    action=(
        "Returned in another currency than the payout (not counted as returned): ask the "
        "provider for the amount in the payout's currency."
    ),
    detail=(
        "{{ amount_minor|money_q(currency) }} for payout {{ confirmed_for|q }} in "
        "{{ payout_currency|q }}; not counted as returned"
    ),
    same_when=("amount_minor", "currency", "confirmed_for", "payout_currency"),
    money=Money.RETURNED,
)
RETURN_ON_UNSETTLED = Kind(
    name="return_on_unsettled",
    items=_RETURN,
    label="Return on an unpaid payout",
    action=(
        "Funds came back for a payout we hold as failed or still open: the money did leave; "
        "treat the payout as paid and returned, and do not pay it again until it is clear."
    ),
    detail="confirmed for payout {{ confirmed_for|q }}, which is not settled",
    same_when=("confirmed_for",),
    money=Money.RETURNED,
)
RETURN_AMOUNT_MISMATCH = Kind(
    name="return_amount_mismatch",
    items=_RETURN,
    label="Return amount differs",
    action=(
        "The notification's amount differs from the provider's own answer: book the provider's "
        "amount and ask the provider about the notification."
    ),
    detail=(
        "notification {% if claimed_minor is not none %}{{ claimed_minor|money(currency) }}"
        "{% else %}{{ claimed_amount }} {{ currency|upper }}{% endif %}, provider "
        "{{ amount_minor|money_q(currency) }}"
    ),
    same_when=("claimed_amount", "claimed_minor", "amount_minor", "currency"),
    money=Money.RETURNED,
)
RETURN_CHANGED = Kind(
    name="return_changed",
    items=_RETURN,
    label="Return changed after it was confirmed",
    action=(
        "The provider no longer answers this return as it was confirmed (gone, or another "
        "amount): the payout's returned amount now follows its latest answer; ask the provider "
        "which is true and correct what was booked on the earlier figure before paying out again."
    ),
    detail=(
        "confirmed {{ confirmed_amount_minor|money_q(confirmed_currency) }} on "
        "{{ confirmed_at|time('%Y-%m-%d') }}, now "
        "{% if now == 'gone' %}404 not found"
        "{% elif now == 'not_returned_funds' %}{{ type|type }}, not returned funds"
        "{% else %}{{ amount_minor|money_q(currency) }}{% endif %}"
    ),
    same_when=(
        "confirmed_amount_minor",
        "confirmed_currency",
        "confirmed_at",
        "now",
        "type",
        "amount_minor",
        "currency",
    ),
    money=Money.RETURNED,
)


def return_findings(links: pd.DataFrame) -> pd.DataFrame:
    """Every finding on a returned-funds transaction (:class:`recon.frames.Findings`)."""
    if links.empty:  # no return known tonight: none of the checks below can find one
        return no_findings()
    status, claimed = links[_R.OBS_STATUS], links[_R.CLAIMED_ORIGINAL_ID]
    confirmed_for, conflict = links[W.CONFIRMED_FOR], links[W.N_CLAIMS].to_numpy() > 1
    confirmed = links[_R.CONFIRMED].to_numpy()
    fetch_failed = ~confirmed & mask(status.isin(NOT_FETCHED))
    wrong_id = ~confirmed & mask(status.eq(ObsStatus.WRONG_ID))
    verified = confirmed & ~conflict & (mask(claimed.isna()) | mask(claimed.eq(confirmed_for)))
    claims = pd.Series(
        [str(c).split(";") if n else None for c, n in zip(links[W.CLAIMS], conflict, strict=True)],
        index=links.index,
        dtype=object,
    )
    why = np.select(
        [
            mask(status.eq(ObsStatus.NOT_FOUND)),
            mask(status.eq(ObsStatus.OK)) & ~links[W.IS13].to_numpy(),
            confirmed,
            mask(status.isna()),
        ],
        ["unknown", "not_returned_funds", "other_payout", "not_fetched"],
        default="no_payout",
    )
    belongs = confirmed & ~links[W.PAYOUT_CURRENCY].isna().to_numpy()
    changed, now = _changed_since_confirmed(links)
    amount = {"amount_minor": links[_R.AMOUNT_MINOR], "currency": links[_R.CURRENCY]}
    found = {
        RETURN_WITHOUT_PAYOUT: Found(
            ~links[_R.MATCHED].to_numpy(),
            _facts(links, claims=claims, original_id=links[_R.ORIGINAL_ID]),
        ),
        RETURN_UNVERIFIED: Found(
            links[_R.NOTIFIED].to_numpy() & ~verified & ~fetch_failed & ~wrong_id & ~changed,
            _facts(
                links,
                claims=claims,
                why=why,
                type=links[_R.OBS_TYPE],
                confirmed_for=confirmed_for,
                claimed_original_id=claimed,
            ),
        ),
        WRONG_TRANSACTION: Found(
            wrong_id, _facts(links, answered_about=links[_R.OBS_RELATED_TRANSACTION_ID])
        ),
        FETCH_FAILED: Found(
            fetch_failed, _facts(links, refused=mask(status.eq(ObsStatus.REFUSED)))
        ),
        RETURN_CURRENCY_MISMATCH: Found(
            belongs & ~links[W.SAME_CURRENCY].to_numpy(),
            _facts(
                links,
                **amount,
                confirmed_for=confirmed_for,
                payout_currency=links[W.PAYOUT_CURRENCY],
            ),
        ),
        RETURN_ON_UNSETTLED: Found(
            belongs & ~links[W.PAYOUT_SETTLED].to_numpy(),
            _facts(links, confirmed_for=confirmed_for),
        ),
        RETURN_AMOUNT_MISMATCH: _claimed_amount_differs(links),
        RETURN_CHANGED: Found(
            changed,
            _facts(
                links,
                confirmed_amount_minor=links[_R.CONFIRMED_AMOUNT_MINOR],
                confirmed_currency=links[_R.CONFIRMED_CURRENCY],
                confirmed_at=links[_R.CONFIRMED_AT],
                now=now,
                type=links[_R.OBS_TYPE],
                **amount,
            ),
        ),
    }
    # The money at stake: the provider's amount of the return, else what a notification claims
    # (in the currency of the payout it names).
    claimed = _claimed_minor(links, links[_R.CURRENCY].fillna(links[W.CLAIMED_CURRENCY]))
    money = pd.DataFrame(
        {
            "at_stake_minor": links[_R.AMOUNT_MINOR].astype("Int64").fillna(claimed),
            "currency": links[_R.CURRENCY].fillna(links[W.CLAIMED_CURRENCY]),
        },
        index=links.index,
    )
    ids = links[_R.RETURN_ID]
    return pd.concat(
        [
            no_findings(),
            *(
                findings(k, ItemKind.RETURN, ids, Found(f.mask, f.facts.join(_new(money, f.facts))))
                for k, f in found.items()
            ),
        ],
        ignore_index=True,
    )


def _new(money: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """The money columns a rule's facts do not have already."""
    return money[[c for c in money.columns if c not in facts.columns]]


def _claimed_minor(links: pd.DataFrame, currency: pd.Series) -> pd.Series:
    """What each return's notification claims, in minor units of ``currency`` (<NA>: none, or it
    does not fit the currency)."""
    minor: list[int | None] = []
    for claimed, code in zip(links[_R.CLAIMED_AMOUNT], currency, strict=True):
        try:
            minor.append(to_minor(Decimal(str(claimed)), str(code)))
        except (ArithmeticError, ValueError, TypeError):
            minor.append(None)
    return pd.Series(minor, index=links.index, dtype="Int64")


def _facts(links: pd.DataFrame, **columns: object) -> pd.DataFrame:
    return pd.DataFrame(columns, index=links.index)


def _changed_since_confirmed(links: pd.DataFrame) -> tuple[Mask, pd.Series]:
    """Where the provider's latest answer about a return a run confirmed differs from what the
    first confirmation saw (gone, not type 13, another amount or currency), and what it says now
    (``gone``, ``not_returned_funds`` or ``amount``).

    The comparison is with the first confirmation, not the previous answer, so the finding stands
    (with the same facts) while the answer stays, and its facts change when the answer changes.
    """
    status = links[_R.OBS_STATUS]
    was = links[_R.CONFIRMED_AT].notna().to_numpy()
    gone = mask(status.eq(ObsStatus.NOT_FOUND))
    ok = mask(status.eq(ObsStatus.OK))
    not13 = ok & ~links[W.IS13].to_numpy()
    other = ok & ~(
        mask(links[_R.AMOUNT_MINOR].eq(links[_R.CONFIRMED_AMOUNT_MINOR]))
        & mask(links[_R.CURRENCY].eq(links[_R.CONFIRMED_CURRENCY].str.upper()))
    )
    now = np.select([gone, not13], ["gone", "not_returned_funds"], default="amount")
    return was & (gone | not13 | other), pd.Series(now, index=links.index, dtype=fr.TEXT)


def _claimed_amount_differs(links: pd.DataFrame) -> Found:
    """Where a notification's amount is not the provider's (in the provider's currency).

    Returns are few, so each claimed amount is converted on its own (exactly: Decimal, never
    float); one that does not fit the currency's minor units differs.
    """
    minor: list[int | None] = []
    differs = np.zeros(len(links), dtype=bool)
    rows = zip(links[_R.CLAIMED_AMOUNT], links[_R.CURRENCY], links[_R.AMOUNT_MINOR], strict=True)
    for i, (claimed, currency, provider) in enumerate(rows):
        if pd.isna(claimed) or pd.isna(currency) or pd.isna(provider):
            minor.append(None)
            continue
        try:
            value: int | None = to_minor(Decimal(str(claimed)), str(currency))
        except (ArithmeticError, ValueError):
            value = None
        minor.append(value)
        differs[i] = value != int(provider)
    return Found(
        differs,
        _facts(
            links,
            claimed_amount=links[_R.CLAIMED_AMOUNT],
            claimed_minor=pd.Series(minor, index=links.index, dtype=object),
            amount_minor=links[_R.AMOUNT_MINOR],
            currency=links[_R.CURRENCY],
        ),
    )
