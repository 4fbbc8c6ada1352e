"""What a person may type to name a payout: its transaction id, its merchant_reference, a return's
id, or an id the provider named that the record lacks. Plain reads: the values equal to what was
typed (:func:`exact_hits`), else those near it (:func:`near_hits`); the choice is
:func:`recon.ops.lookup.choose`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, func, select

from recon.constants import DEFAULT_ACCOUNT
from recon.store._batch import chunks, one_of
from recon.store.tables import payouts, provider_items, run_returns


class HitKind(StrEnum):
    """What a stored value that matched is."""

    TRANSACTION_ID = "transaction id"
    REFERENCE = "merchant_reference"
    RETURN_ID = "return id"
    PROVIDER_ID = "provider-side id"
    PROVIDER_REFERENCE = "provider-side merchant_reference"


@dataclass(frozen=True, slots=True)
class Hit:
    """A stored value close to what was typed, and the payout (or provider-side id) it names."""

    kind: HitKind
    value: str
    payout_id: str


_NEAR_LIMIT = 100  # per column and side of what was typed: enough to suggest from
_PREFIX = 3  # near candidates share this many first characters (any case)


def _columns(
    account: str,
) -> list[tuple[HitKind, ColumnElement[str], ColumnElement[str], list[Any]]]:
    """Each stored value of ``account`` a person may type: its kind, its column, the payout it
    names, filters."""
    p, r, i = payouts.c, run_returns.c, provider_items.c
    mine_p, mine_r, mine_i = (
        p.provider_account == account,
        r.provider_account == account,
        i.provider_account == account,
    )
    return [
        (HitKind.TRANSACTION_ID, p.transaction_id, p.transaction_id, [mine_p]),
        (HitKind.REFERENCE, p.merchant_reference, p.transaction_id, [mine_p]),
        (HitKind.RETURN_ID, r.return_id, r.original_id, [mine_r, r.original_id.is_not(None)]),
        (HitKind.PROVIDER_ID, i.transaction_id, i.transaction_id, [mine_i]),
        (HitKind.PROVIDER_REFERENCE, i.merchant_reference, i.transaction_id, [mine_i]),
    ]


def exact_hits(conn: Connection, typed: str, *, account: str = DEFAULT_ACCOUNT) -> list[Hit]:
    """The stored ids and references of ``account`` equal to ``typed`` (already trimmed), each
    with its payout.

    Equality on the payouts' key and reference index and the provider-side ids' key; returns and
    provider-side references are few rows (one per return a run judged, per id the record lacks).
    """
    hits: list[Hit] = []
    for kind, column, payout, filters in _columns(account):
        query = select(column, payout).where(column == typed, *filters).group_by(column, payout)
        hits += [Hit(kind, str(value), str(named)) for value, named in conn.execute(query)]
    return hits


def near_hits(conn: Connection, typed: str, *, account: str = DEFAULT_ACCOUNT) -> list[Hit]:
    """Stored ids and references of ``account`` close to ``typed``, for when none equals it:
    those sharing its first characters in any case, the nearest in sorted order on each side of
    it (capped)."""
    lowered = typed.lower()
    prefix = lowered[:_PREFIX].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    hits: list[Hit] = []
    for kind, column, payout, filters in _columns(account):
        low = func.lower(column)
        near = (
            select(column, payout)
            .where(low.like(prefix + "%", escape="\\"), *filters)
            .group_by(column, payout)
        )
        after = near.where(low >= lowered).order_by(low, column)
        before = near.where(low < lowered).order_by(low.desc(), column)
        for query in (after, before):
            rows = conn.execute(query.limit(_NEAR_LIMIT)).all()
            hits += [Hit(kind, str(value), str(named)) for value, named in rows]
    return hits


@dataclass(frozen=True, slots=True)
class ItemFacts:
    """What ``recon exceptions list`` shows beside a finding: the item's amount and reference."""

    amount_minor: int | None
    currency: str | None
    merchant_reference: str | None


def item_facts(
    conn: Connection, items: Sequence[tuple[str, str]], *, account: str = DEFAULT_ACCOUNT
) -> dict[tuple[str, str], ItemFacts]:
    """Amount, currency and reference of each (item_kind, item_id) of ``account``: a recorded
    payout's, a return's (as the latest run saw it, with its payout's reference), a provider-side
    id's."""
    p, r, i = payouts.c, run_returns.c, provider_items.c
    by_kind: dict[str, list[str]] = {}
    for kind, item_id in items:
        by_kind.setdefault(kind, []).append(item_id)
    found: dict[tuple[str, str], ItemFacts] = {}
    for part in chunks(by_kind.get("payout", [])):
        query = select(p.transaction_id, p.amount_minor, p.currency, p.merchant_reference)
        mine = p.provider_account == account
        for row in conn.execute(query.where(mine, one_of(conn, p.transaction_id, part))):
            found["payout", row[0]] = ItemFacts(row[1], row[2], row[3])
    for part in chunks(by_kind.get("provider", [])):
        query = select(i.transaction_id, i.amount_minor, i.currency, i.merchant_reference)
        mine = i.provider_account == account
        for row in conn.execute(query.where(mine, one_of(conn, i.transaction_id, part))):
            found["provider", row[0]] = ItemFacts(row[1], row[2], row[3])
    for part in chunks(by_kind.get("return", [])):
        query = (
            select(r.return_id, r.amount_minor, r.currency, p.merchant_reference)
            .outerjoin(
                payouts,
                and_(p.provider_account == r.provider_account, p.transaction_id == r.original_id),
            )
            .where(r.provider_account == account, one_of(conn, r.return_id, part))
            .order_by(r.run_id)
        )
        for row in conn.execute(query):  # the latest run's row last: it wins
            found["return", row[0]] = ItemFacts(row[1], row[2], row[3])
    return found
