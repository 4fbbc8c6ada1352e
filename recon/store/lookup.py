"""What a person may type to name a payout: its transaction id, its merchant_reference, a return's
id, or an id the provider named that the record lacks. A plain read; the choice is
:func:`recon.ops.lookup.choose`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import ColumnElement, Connection, func, or_, select

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


_NEAR_LIMIT = 200  # per column: enough to suggest from, never the whole table
_PREFIX = 3  # near candidates share this many first characters (any case)


def _matching(column: ColumnElement[str], typed: str) -> ColumnElement[bool]:
    """Equal, equal in another case, or sharing the first characters (any case)."""
    lowered = typed.lower()
    prefix = lowered[:_PREFIX].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return or_(
        column == typed,
        func.lower(column) == lowered,
        func.lower(column).like(prefix + "%", escape="\\"),
    )


def lookup_candidates(conn: Connection, typed: str) -> list[Hit]:
    """Ids and references equal or close to ``typed`` (already trimmed), each with its payout."""
    p, r, i = payouts.c, run_returns.c, provider_items.c
    queries = [
        (
            HitKind.TRANSACTION_ID,
            select(p.transaction_id, p.transaction_id).where(_matching(p.transaction_id, typed)),
        ),
        (
            HitKind.REFERENCE,
            select(p.merchant_reference, p.transaction_id).where(
                _matching(p.merchant_reference, typed)
            ),
        ),
        (
            HitKind.RETURN_ID,
            select(r.return_id, r.original_id)
            .distinct()
            .where(_matching(r.return_id, typed), r.original_id.is_not(None)),
        ),
        (
            HitKind.PROVIDER_ID,
            select(i.transaction_id, i.transaction_id).where(_matching(i.transaction_id, typed)),
        ),
        (
            HitKind.PROVIDER_REFERENCE,
            select(i.merchant_reference, i.transaction_id).where(
                _matching(i.merchant_reference, typed)
            ),
        ),
    ]
    hits: list[Hit] = []
    for kind, query in queries:
        rows = conn.execute(query.limit(_NEAR_LIMIT)).all()
        hits += [Hit(kind, str(value), str(payout)) for value, payout in rows if value is not None]
    return hits


@dataclass(frozen=True, slots=True)
class ItemFacts:
    """What ``recon exceptions list`` shows beside a finding: the item's amount and reference."""

    amount_minor: int | None
    currency: str | None
    merchant_reference: str | None


def item_facts(
    conn: Connection, items: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], ItemFacts]:
    """Amount, currency and reference of each (item_kind, item_id): a recorded payout's, a return's
    (as the latest run saw it, with its payout's reference), a provider-side id's."""
    p, r, i = payouts.c, run_returns.c, provider_items.c
    by_kind: dict[str, list[str]] = {}
    for kind, item_id in items:
        by_kind.setdefault(kind, []).append(item_id)
    found: dict[tuple[str, str], ItemFacts] = {}
    for part in chunks(by_kind.get("payout", [])):
        query = select(p.transaction_id, p.amount_minor, p.currency, p.merchant_reference)
        for row in conn.execute(query.where(one_of(conn, p.transaction_id, part))):
            found["payout", row[0]] = ItemFacts(row[1], row[2], row[3])
    for part in chunks(by_kind.get("provider", [])):
        query = select(i.transaction_id, i.amount_minor, i.currency, i.merchant_reference)
        for row in conn.execute(query.where(one_of(conn, i.transaction_id, part))):
            found["provider", row[0]] = ItemFacts(row[1], row[2], row[3])
    for part in chunks(by_kind.get("return", [])):
        query = (
            select(r.return_id, r.amount_minor, r.currency, p.merchant_reference)
            .outerjoin(payouts, p.transaction_id == r.original_id)
            .where(one_of(conn, r.return_id, part))
            .order_by(r.run_id)
        )
        for row in conn.execute(query):  # the latest run's row last: it wins
            found["return", row[0]] = ItemFacts(row[1], row[2], row[3])
    return found
