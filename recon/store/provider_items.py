"""The provider's side in the store: ids the provider named that the record lacks, and
creates recorded without a transaction id.

Reads and writes only; which ids to ask, what an answer makes of an item, what is a twin and what
matches an attempt are the core's (:mod:`recon.reconcile.unrecorded`). Every read is by an index:
the notifications received since a time, the items still live (``status``), the unmatched
attempts (``matched_at``), recorded payouts by reference or by (account, amount), ids by key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import Connection, and_, bindparam, insert, select, update

from recon.conform import typed
from recon.constants import DEFAULT_ACCOUNT, LIVE_ITEM_STATUSES, NotificationKind
from recon.decision import ProviderSide
from recon.frames import empty
from recon.run_frames import Attempts, Named, ProviderItems, Recorded
from recon.store._batch import any_of, chunks, one_of, upsert
from recon.store.tables import creation_attempts, notifications, payouts, provider_items
from recon.store.typed_read import frame_of

_PAIRS_PER_QUERY = 100
# Who named an id: (notification kind, its column, named_by).
_NAMINGS = (
    (NotificationKind.TRANSACTION, notifications.c.transaction_id, "callback"),
    # A returned-funds notification's own id is a claim, asked about on the claims' schedule
    # (RECON_CLAIM_POLL_CAP): kept as an item, judged from those answers, not asked twice.
    (NotificationKind.RETURNED_FUNDS, notifications.c.transaction_id, "claim"),
    (NotificationKind.RETURNED_FUNDS, notifications.c.original_transaction_id, "return"),
)


def named_since(
    conn: Connection, since: datetime | None, *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """Ids named by notifications of ``account`` received since ``since`` (all: None), with who
    named them and when first (transaction_id, named_by, named_at), by the received_at index."""
    n = notifications.c
    frames = []
    for kind, column, named_by in _NAMINGS:
        query = (
            select(column.label(Named.TRANSACTION_ID), n.received_at.label(Named.NAMED_AT))
            .where(n.provider_account == account, n.kind == kind.value, column.is_not(None))
            .order_by(n.received_at)
        )
        if since is not None:
            query = query.where(n.received_at >= since)
        frames.append(frame_of(conn, query).assign(named_by=named_by))
    whole = pd.concat(frames, ignore_index=True)
    return typed(whole, Named)


def absent_ids(
    conn: Connection, ids: Iterable[str], *, account: str = DEFAULT_ACCOUNT
) -> list[str]:
    """Of ``ids``, those neither recorded (payouts) nor already an item of ``account``, by
    primary key."""
    wanted = sorted(set(ids))
    known: set[str] = set()
    for table in (payouts, provider_items):
        for part in chunks(wanted):
            column = table.c.transaction_id
            query = select(column).where(
                table.c.provider_account == account, one_of(conn, column, part)
            )
            known |= {str(i) for i in conn.scalars(query)}
    return [i for i in wanted if i not in known]


def recorded_among(
    conn: Connection, ids: Iterable[str], *, account: str = DEFAULT_ACCOUNT
) -> frozenset[str]:
    """Of ``ids``, those the merchant's record of ``account`` has."""
    found: set[str] = set()
    p = payouts.c
    for part in chunks(sorted(set(ids))):
        found |= {
            str(i)
            for i in conn.scalars(
                select(p.transaction_id).where(
                    p.provider_account == account, one_of(conn, p.transaction_id, part)
                )
            )
        }
    return frozenset(found)


def live_items(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """Items of ``account`` still unanswered or a payout the record lacks (by the status
    index)."""
    i = provider_items.c
    query = select(*(i[c] for c in ProviderItems)).where(
        i.provider_account == account,
        i.status.in_(sorted(s.value for s in LIVE_ITEM_STATUSES)),
    )
    return typed(frame_of(conn, query.order_by(i.transaction_id)), ProviderItems)


def item_record(
    conn: Connection, transaction_id: str, *, account: str = DEFAULT_ACCOUNT
) -> Mapping[str, Any] | None:
    """One item of ``account`` as stored, or None."""
    i = provider_items.c
    row = conn.execute(
        select(provider_items).where(
            i.provider_account == account, i.transaction_id == transaction_id
        )
    ).first()
    return None if row is None else dict(row._mapping)


def unmatched_attempts(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """Creates of ``account`` without a transaction id not matched yet (by the matched_at
    index)."""
    a = creation_attempts.c
    query = (
        select(*(a[c] for c in Attempts))
        .where(a.provider_account == account, a.matched_at.is_(None))
        .order_by(a.id)
    )
    return typed(frame_of(conn, query), Attempts)


def recorded_like(
    conn: Connection,
    references: Iterable[str],
    pairs: Iterable[tuple[str, int]],
    *,
    account: str = DEFAULT_ACCOUNT,
) -> pd.DataFrame:
    """Recorded payouts of ``account`` with one of ``references``, or to one of the (bank
    account, amount) ``pairs`` (by the (provider_account, merchant_reference) and
    (provider_account, bank_account_id, amount_minor, created) indexes)."""
    p = payouts.c
    columns = [p[c] for c in Recorded]
    mine = p.provider_account == account
    frames = []
    for part in chunks(sorted(set(references))):
        frames.append(
            frame_of(conn, select(*columns).where(mine, one_of(conn, p.merchant_reference, part)))
        )
    for pair_part in chunks(sorted(set(pairs)), _PAIRS_PER_QUERY):
        condition = any_of(
            mine,
            (and_(p.bank_account_id == who, p.amount_minor == amount) for who, amount in pair_part),
        )
        frames.append(frame_of(conn, select(*columns).where(condition)))
    if not frames:
        return empty(Recorded)
    whole = pd.concat(frames, ignore_index=True)
    return typed(whole, Recorded).drop_duplicates(Recorded.TRANSACTION_ID).reset_index(drop=True)


def _plain(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    for row in rows:
        for key, value in row.items():
            if isinstance(value, pd.Timestamp):
                row[key] = value.to_pydatetime()
    return [{str(k): v for k, v in row.items()} for row in rows]


def write_provider_side(
    conn: Connection, side: ProviderSide, *, as_of: datetime, account: str = DEFAULT_ACCOUNT
) -> None:
    """Store every item of ``account`` as the run left it and mark the attempts it matched, in
    the run's transaction."""
    changing = [
        c
        for c in ProviderItems.names()
        if c
        not in (ProviderItems.TRANSACTION_ID, ProviderItems.FIRST_NAMED_AT, ProviderItems.NAMED_BY)
    ]
    statement = upsert(conn, provider_items, ["provider_account", "transaction_id"], changing)
    items = side.items[ProviderItems.names()].assign(provider_account=account)
    for part in chunks(_plain(items)):
        conn.execute(statement, list(part))
    a = creation_attempts.c
    matched = update(creation_attempts).where(a.id == bindparam("b_id"), a.matched_at.is_(None))
    rows = [
        {"b_id": int(r[Attempts.ID]), "matched_transaction_id": str(r[Recorded.TRANSACTION_ID])}
        for r in side.matches.to_dict("records")
    ]
    if rows:
        conn.execute(
            matched.values(
                matched_transaction_id=bindparam("matched_transaction_id"), matched_at=as_of
            ),
            rows,
        )


def insert_attempts(
    conn: Connection,
    records: Sequence[Mapping[str, Any]],
    *,
    now: datetime,
    account: str = DEFAULT_ACCOUNT,
) -> int:
    """Store the imported creates of ``account`` without a transaction id that are not stored
    yet (the same reference, amount, currency and ``created``); how many were new."""
    a = creation_attempts.c
    refs = sorted({str(r["merchant_reference"]) for r in records})
    stored: set[tuple[Any, ...]] = set()
    for part in chunks(refs):
        query = select(a.merchant_reference, a.amount_minor, a.currency, a.created).where(
            a.provider_account == account, one_of(conn, a.merchant_reference, part)
        )
        stored |= {_attempt_key(*row) for row in conn.execute(query)}
    new = []
    for r in records:
        key = _attempt_key(r["merchant_reference"], r["amount_minor"], r["currency"], r["created"])
        if key not in stored:
            stored.add(key)
            new.append(
                {c: r.get(c) for c in Attempts if c != "id"}
                | {"imported_at": now, "provider_account": account}
            )
    for rows in chunks(new):
        conn.execute(insert(creation_attempts), list(rows))
    return len(new)


def _attempt_key(reference: Any, amount: Any, currency: Any, created: Any) -> tuple[Any, ...]:
    """An attempt's identity; ``created`` as naive UTC (SQLite gives it back naive)."""
    at = None
    if created is not None:
        moment = pd.Timestamp(created)
        at = moment.tz_convert("UTC").tz_localize(None) if moment.tzinfo else moment
    return (str(reference), int(amount), str(currency).upper(), at)
