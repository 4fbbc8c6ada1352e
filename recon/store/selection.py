"""Which payouts a run asks the provider about, and why (no pandas: this runs before the first
request).

The rules are the core's (:mod:`recon.reconcile.watch` sets ``next_check_at``); these queries only
read them back: open outcomes every run, watched ones when due, any payout the provider sent a
transaction notification about since its last check (a callback is a hint, never an outcome), and
any payout whose record an import changed in a compared field, until a run has an answer about it
(:mod:`recon.reconcile.changes` marks the change answered).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Select, and_, func, or_, select

from recon.constants import (
    DEFAULT_ACCOUNT,
    OPEN_OUTCOMES,
    RETURN_WATCHED_OUTCOMES,
    WATCHED_OUTCOMES,
    NotificationKind,
    Outcome,
    PollReason,
)
from recon.records import EVIDENCE_FIELDS
from recon.store._batch import any_of
from recon.store.tables import notifications, payouts, record_changes


def _values(outcomes: frozenset[Outcome]) -> list[str]:
    return sorted(o.value for o in outcomes)


def select_polls(
    conn: Connection, *, as_of: datetime, account: str = DEFAULT_ACCOUNT
) -> dict[PollReason, list[str]]:
    """The ids of ``account`` to ask about, each under the first reason that applies (in
    PollReason's order)."""
    p = payouts.c
    due = and_(p.next_check_at.is_not(None), p.next_check_at <= as_of)
    mine = p.provider_account == account
    queries = {
        PollReason.OPEN: select(p.transaction_id).where(
            any_of(mine, (p.outcome.is_(None), p.outcome.in_(_values(OPEN_OUTCOMES))))
        ),
        PollReason.WATCH: select(p.transaction_id).where(
            mine, p.outcome.in_(_values(WATCHED_OUTCOMES)), due
        ),
        PollReason.RETURN_WATCH: select(p.transaction_id).where(
            mine, p.outcome.in_(_values(RETURN_WATCHED_OUTCOMES)), due
        ),
        PollReason.CALLBACK_HINT: _hinted(account),
        PollReason.RECORD_CHANGED: _changed(account),
    }
    seen: set[str] = set()
    polls: dict[PollReason, list[str]] = {}
    for reason, query in queries.items():
        ids = [i for i in conn.scalars(query) if i not in seen]
        seen.update(ids)
        polls[reason] = ids
    return polls


def _hinted(account: str) -> Select[tuple[str]]:
    """The payouts a transaction notification named since their last check (or never checked)."""
    p, n = payouts.c, notifications.c
    return (
        select(p.transaction_id)
        .join_from(
            notifications,
            payouts,
            and_(p.provider_account == n.provider_account, p.transaction_id == n.transaction_id),
        )
        .where(
            n.provider_account == account,
            n.kind == NotificationKind.TRANSACTION.value,
            or_(p.last_checked_at.is_(None), n.received_at > p.last_checked_at),
        )
        .distinct()
    )


def _changed(account: str) -> Select[tuple[str]]:
    """The payouts whose record an import changed in a compared field, not answered since."""
    c = record_changes.c
    return (
        select(c.transaction_id)
        .where(
            c.provider_account == account,
            c.closed_run_id.is_(None),
            c.answered_run_id.is_(None),
            c.field.in_(EVIDENCE_FIELDS),
        )
        .distinct()
    )


def with_evidence(
    conn: Connection, *, account: str = DEFAULT_ACCOUNT
) -> tuple[dict[str, datetime], frozenset[str]]:
    """The payouts with evidence only an answer may spend: per payout, when the latest transaction
    notification since its last check came; and the payouts whose record an import changed (a
    live change). The provider's export may stand in for an answer only where a file stored
    after that notification shows the payout; a changed record is always asked about."""
    p, n = payouts.c, notifications.c
    hinted = (
        select(p.transaction_id, func.max(n.received_at))
        .join_from(
            notifications,
            payouts,
            and_(p.provider_account == n.provider_account, p.transaction_id == n.transaction_id),
        )
        .where(
            n.provider_account == account,
            n.kind == NotificationKind.TRANSACTION.value,
            or_(p.last_checked_at.is_(None), n.received_at > p.last_checked_at),
        )
        .group_by(p.transaction_id)
    )
    times = {str(i): at for i, at in conn.execute(hinted)}
    return times, frozenset(str(i) for i in conn.scalars(_changed(account)))
