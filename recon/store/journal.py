"""The journal's SQL side for a night: one provider account's money facts and lines read, lines
written.

The night (:mod:`recon.night.journal`) reads what the core needs (:func:`read_books`), hands it
to :func:`recon.reconcile.journal.journal_entries` and writes what comes back
(:func:`write_lines`), all in the run's fenced transaction (:meth:`recon.night.lifecycle.Run.
transaction`): a run that lost its lock writes no line. Lines are only ever added here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, insert, not_, or_, select

from recon.constants import SETTLED_OUTCOMES, ItemStatus, Outcome, TxState
from recon.reconcile.journal import Event, JournalLine, PayoutMoney, Role
from recon.store._batch import chunks
from recon.store.journal_tables import journal_lines
from recon.store.tables import payouts, provider_items

# The stored columns of a line that are a JournalLine's fields (run_id and batch are the store's).
_LINE_FIELDS = tuple(JournalLine.__dataclass_fields__)


@dataclass(frozen=True)
class Books:
    """One provider account's journal as a night reads it: the money facts, the stored lines
    and the number its next entry takes."""

    payouts: tuple[PayoutMoney, ...]
    lines: tuple[JournalLine, ...]
    next_number: int


def read_books(conn: Connection, account: str) -> Books:
    """Provider account ``account``'s money facts (every settled or returned payout, every
    payout with a line, and every payout the provider settled that the record lacks), its lines
    (in number and line order) and its next entry number."""
    return Books(
        payouts=(*_money(conn, account), *_unrecorded(conn, account)),
        lines=tuple(_lines(conn, account)),
        next_number=_next_number(conn, account),
    )


def _money(conn: Connection, account: str) -> Iterable[PayoutMoney]:
    p, j = payouts.c, journal_lines.c
    columns = (
        p.transaction_id,
        p.merchant_reference,
        p.currency,
        p.amount_minor,
        p.outcome,
        p.settled_at,
        p.settled_since,
        p.fee_minor,
        p.returned_minor,
    )
    settled = [o.value for o in SETTLED_OUTCOMES]
    booked = select(j.transaction_id).where(j.provider_account == account).distinct().subquery()
    # Two reads, each by its own index: the settled payouts, then the booked ones that are not.
    queries = (
        select(*columns).where(p.provider_account == account, p.outcome.in_(settled)),
        select(*columns)
        .join(booked, booked.c.transaction_id == p.transaction_id)
        .where(
            p.provider_account == account,
            or_(p.outcome.is_(None), not_(p.outcome.in_(settled))),
        ),
    )
    for query in queries:
        for row in conn.execute(query):
            yield PayoutMoney(
                transaction_id=row.transaction_id,
                merchant_reference=row.merchant_reference,
                currency=row.currency,
                amount_minor=int(row.amount_minor),
                outcome=row.outcome,
                settled_at=row.settled_at,
                settled_since=row.settled_since,
                fee_minor=_int_or_none(row.fee_minor),
                returned_minor=_int_or_none(row.returned_minor),
            )


def _unrecorded(conn: Connection, account: str) -> Iterable[PayoutMoney]:
    """The payouts the provider answered settled that the record lacks (an item's latest
    answer; an amount that does not fit its currency is not booked)."""
    i = provider_items.c
    query = select(
        i.transaction_id, i.merchant_reference, i.currency, i.amount_minor, i.answered_at
    ).where(
        i.provider_account == account,
        i.status == ItemStatus.PAYOUT.value,
        i.state == int(TxState.SETTLED),
        i.amount_minor.is_not(None),
        i.currency.is_not(None),
    )
    for row in conn.execute(query):
        currency = str(row.currency).upper()  # as the provider wrote it ("sek")
        if len(currency) != 3:
            continue
        yield PayoutMoney(
            transaction_id=row.transaction_id,
            merchant_reference=row.merchant_reference,
            currency=currency,
            amount_minor=int(row.amount_minor),
            outcome=Outcome.SETTLED.value,
            settled_at=None,
            settled_since=row.answered_at,
            fee_minor=None,
            returned_minor=None,
            recorded=False,
        )


def _lines(conn: Connection, account: str) -> list[JournalLine]:
    j = journal_lines.c
    query = (
        select(*(j[name] for name in _LINE_FIELDS))
        .where(j.provider_account == account)
        .order_by(j.number, j.line)
    )
    return [_line(row._mapping) for row in conn.execute(query)]


def _line(row: Any) -> JournalLine:
    values = dict(row)
    return JournalLine(
        **{
            **values,
            "number": int(values["number"]),
            "line": int(values["line"]),
            "version": int(values["version"]),
            "event": Event(values["event"]),
            "role": Role(values["role"]),
            "late": bool(values["late"]),
            "debit_minor": int(values["debit_minor"]),
            "credit_minor": int(values["credit_minor"]),
        }
    )


def _next_number(conn: Connection, account: str) -> int:
    j = journal_lines.c
    top = conn.execute(select(func.max(j.number)).where(j.provider_account == account)).scalar()
    return 1 if top is None else int(top) + 1


def write_lines(conn: Connection, run_id: int, lines: Sequence[JournalLine]) -> int:
    """Add ``lines`` as run ``run_id``'s (not exported); returns how many were written."""
    rows = [
        {
            **{name: getattr(line, name) for name in _LINE_FIELDS},
            "event": str(line.event),
            "role": str(line.role),
            "run_id": run_id,
        }
        for line in lines
    ]
    for part in chunks(rows):
        conn.execute(insert(journal_lines), list(part))
    return len(rows)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
