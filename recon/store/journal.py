"""The journal's SQL side for a night: one provider account's money facts and lines read, lines
written, the account's mark moved.

The night (:mod:`recon.night.journal`) reads what the core needs (:func:`read_books`), hands it
to :func:`recon.reconcile.journal.journal_entries` and writes what comes back
(:func:`write_lines`), all in the run's fenced transaction (:meth:`recon.night.lifecycle.Run.
transaction`): a run that lost its lock writes no line. Lines are only ever added here.

After the journal step the account's journal holds what every payout's facts prove, and
:func:`write_mark` names that run. A payout's money facts change only where a run writes the
payout (:func:`recon.store.apply.apply_decision` sets ``last_run_id`` on every row it writes) or
where an import changes a record a run has reconciled (:func:`recon.store.payouts.upsert_payouts`
adds a ``record_changes`` row); a record no run has reconciled has no outcome, so no line. So a
night after a mark reads only those payouts, and their lines (:func:`read_books` with
``since``): the core, given every payout it could reverse or book, makes the same lines as from
the whole account. Payouts are never deleted by recon; one deleted or changed behind its back is
seen by the next whole read (delete the account's mark).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, delete, func, insert, not_, or_, select, union

from recon.constants import SETTLED_OUTCOMES, ItemStatus, Outcome, TxState
from recon.reconcile.journal import Event, JournalLine, PayoutMoney, Role
from recon.store._batch import chunks
from recon.store.journal_tables import journal_lines, journal_marks
from recon.store.tables import payouts, provider_items, record_changes

# The stored columns of a line that are a JournalLine's fields (run_id and batch are the store's).
_LINE_FIELDS = tuple(JournalLine.__dataclass_fields__)


@dataclass(frozen=True)
class Books:
    """One provider account's journal as a night reads it: the money facts, the stored lines
    and the number its next entry takes."""

    payouts: tuple[PayoutMoney, ...]
    lines: tuple[JournalLine, ...]
    next_number: int


def read_books(conn: Connection, account: str, since: int | None = None) -> Books:
    """Provider account ``account``'s money facts, its lines (in number and line order) and its
    next entry number.

    ``since`` None: every settled or returned payout, every payout with a line, and every line.
    ``since`` a run id (the account's mark, :func:`read_mark`): only the payouts a run after it
    wrote or an import changed (record_changes), whatever their outcome, and their lines.
    Either way, every payout the provider settled that the record lacks (items are few), and
    the payouts and lines of every id ever booked as one.
    """
    if since is None:
        money, lines = _whole(account)
    else:
        money, lines = _changed(account, since)
    return Books(
        payouts=(*_money(conn, money), *_unrecorded(conn, account)),
        lines=tuple(line_from_row(row) for row in conn.execute(lines)),
        next_number=_next_number(conn, account),
    )


def read_mark(conn: Connection, account: str) -> int | None:
    """The run whose journal step last ran for ``account`` (None: never, or not since 0020)."""
    m = journal_marks.c
    run_id = conn.execute(select(m.run_id).where(m.provider_account == account)).scalar()
    return None if run_id is None else int(run_id)


def write_mark(conn: Connection, account: str, run_id: int) -> None:
    """Name run ``run_id`` as the one whose journal step last ran for ``account``."""
    m = journal_marks.c
    conn.execute(delete(journal_marks).where(m.provider_account == account))
    conn.execute(insert(journal_marks).values(provider_account=account, run_id=run_id))


_MONEY_COLUMNS = (
    payouts.c.transaction_id,
    payouts.c.merchant_reference,
    payouts.c.currency,
    payouts.c.amount_minor,
    payouts.c.outcome,
    payouts.c.settled_at,
    payouts.c.settled_since,
    payouts.c.fee_minor,
    payouts.c.returned_minor,
)
_LINE_COLUMNS = tuple(journal_lines.c[name] for name in _LINE_FIELDS)


def _whole(account: str) -> tuple[list[Select[Any]], Select[Any]]:
    """The whole account: its settled payouts, the booked ones that are not, every line."""
    p, j = payouts.c, journal_lines.c
    settled = [o.value for o in SETTLED_OUTCOMES]
    booked = select(j.transaction_id).where(j.provider_account == account).distinct().subquery()
    # Two reads, each by its own index: the settled payouts, then the booked ones that are not.
    money = [
        select(*_MONEY_COLUMNS).where(p.provider_account == account, p.outcome.in_(settled)),
        select(*_MONEY_COLUMNS)
        .join(booked, booked.c.transaction_id == p.transaction_id)
        .where(
            p.provider_account == account,
            or_(p.outcome.is_(None), not_(p.outcome.in_(settled))),
        ),
    ]
    lines = select(*_LINE_COLUMNS).where(j.provider_account == account).order_by(j.number, j.line)
    return money, lines


def _changed(account: str, since: int) -> tuple[list[Select[Any]], Select[Any]]:
    """The payouts written by a run after ``since`` or changed by an import, and their lines."""
    p, j, r = payouts.c, journal_lines.c, record_changes.c
    i = provider_items.c
    changed = union(
        select(p.transaction_id).where(p.provider_account == account, p.last_run_id > since),
        select(r.transaction_id).where(r.provider_account == account),
        # A payout the record lacks, and one booked as such: whether it is recorded since or
        # not, its money and lines are read together.
        select(i.transaction_id).where(
            i.provider_account == account, i.status == ItemStatus.PAYOUT.value
        ),
        select(j.transaction_id).where(
            j.provider_account == account, j.event == Event.UNRECORDED_PAYOUT.value
        ),
    ).subquery()
    money = [
        select(*_MONEY_COLUMNS)
        .join(changed, changed.c.transaction_id == p.transaction_id)
        .where(p.provider_account == account)
    ]
    lines = (
        select(*_LINE_COLUMNS)
        .join(changed, changed.c.transaction_id == j.transaction_id)
        .where(j.provider_account == account)
        .order_by(j.number, j.line)
    )
    return money, lines


def _money(conn: Connection, queries: Iterable[Select[Any]]) -> Iterable[PayoutMoney]:
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


def line_from_row(row: Any) -> JournalLine:
    """A stored line (a row with a JournalLine's columns) as the core's :class:`JournalLine`."""
    m = row._mapping
    values = {name: m[name] for name in _LINE_FIELDS}
    values["event"], values["role"] = Event(values["event"]), Role(values["role"])
    values["late"] = bool(values["late"])
    for name in ("line", "number", "version", "debit_minor", "credit_minor"):
        values[name] = int(values[name])
    return JournalLine(**values)


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
