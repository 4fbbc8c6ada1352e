"""Which raw bodies retention drops: the rule, pure.

A raw provider answer (``observations.raw``) or a raw notification body (``notifications.body``)
older than ``RECON_KEEP_RAW_DAYS`` is dropped, set to NULL, unless it is **evidence**:

- of a finding still open: an exception case not ended (``ended_run_id`` NULL) about the row's
  transaction id (item kinds ``payout`` and ``return``, and every member its facts name), or about
  the notification itself (item kind ``notification``: the notification's id);
- of a return: an answer of type 13, an answer naming a return (``related_transaction_id`` set),
  a RETURNED_TRANSACTION notification, and anything about a return's id (an id answered as
  type 13, announced by a notification, or judged by a run as a return).

Only the raw text goes: the parsed columns (state, type, amounts, ids, error codes, parse status)
stay, and they are all that reports, ``recon show`` and the decision read. Kept evidence is
looked at again by the next run, and dropped once its finding has ended.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from recon.constants import NotificationKind, TxType
from recon.frames import ItemKind
from recon.reconcile.finding import read_facts


class RawAnswer(NamedTuple):
    """An answer that still holds its raw body: what the rule needs of it."""

    id: int
    transaction_id: str
    type: int | None
    related_transaction_id: str | None


class RawNotification(NamedTuple):
    """A notification that still holds its raw body: what the rule needs of it."""

    id: int
    kind: str
    transaction_id: str | None


@dataclass(frozen=True, slots=True)
class Evidence:
    """What keeps a raw body: the ids of open findings and of returns."""

    open_transactions: frozenset[str] = frozenset()  # payouts and returns with a live case
    open_notifications: frozenset[int] = frozenset()  # notifications with a live case
    return_ids: frozenset[str] = frozenset()


def evidence(
    open_cases: Iterable[tuple[str, str, str | None]], return_ids: Iterable[str]
) -> Evidence:
    """The evidence from live cases' (item_kind, item_id, last facts as stored) and every known
    return's id: a finding's item and every member its facts name (a group of possible
    duplicates or a double payment is filed under one of its payouts)."""
    cases = list(open_cases)
    members = (m for _, _, facts in cases for m in ((read_facts(facts) or {}).get("members") or ()))
    return Evidence(
        open_transactions=frozenset(
            {i for kind, i, _ in cases if kind != ItemKind.NOTIFICATION} | set(map(str, members))
        ),
        open_notifications=frozenset(
            int(i) for kind, i, _ in cases if kind == ItemKind.NOTIFICATION and i.isdigit()
        ),
        return_ids=frozenset(return_ids),
    )


def raw_cutoff(as_of: datetime, keep_days: float) -> datetime:
    """Raw bodies fetched or received before this are past retention."""
    return as_of - timedelta(days=keep_days)


def answer_is_evidence(row: RawAnswer, ev: Evidence) -> bool:
    """An answer about a return, naming one, or about an item with an open finding."""
    return (
        row.type == TxType.RETURNED_FUNDS
        or row.related_transaction_id is not None
        or row.transaction_id in ev.return_ids
        or row.transaction_id in ev.open_transactions
    )


def notification_is_evidence(row: RawNotification, ev: Evidence) -> bool:
    """A return's notification, one about a return or an open finding, or itself a finding."""
    return (
        row.kind == NotificationKind.RETURNED_FUNDS
        or row.id in ev.open_notifications
        or (row.transaction_id is not None and row.transaction_id in ev.return_ids)
        or (row.transaction_id is not None and row.transaction_id in ev.open_transactions)
    )


def answers_to_drop(rows: Iterable[RawAnswer], ev: Evidence) -> list[int]:
    """Ids of the answers (all past retention) whose raw body goes."""
    return [row.id for row in rows if not answer_is_evidence(row, ev)]


def notifications_to_drop(rows: Iterable[RawNotification], ev: Evidence) -> list[int]:
    """Ids of the notifications (all past retention) whose raw body goes."""
    return [row.id for row in rows if not notification_is_evidence(row, ev)]
