"""The journal's reads for the report: the lines one run made, by the run's index.

A run's lines are the rows of ``journal_lines`` with its ``run_id``, read in the account's order
(entry ``number``, then ``line``). They are never changed after the run but for the ``batch`` an
export stamps on them, which :func:`run_journal_batches` reads beside them.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, Row, select

from recon.reconcile.journal import JournalLine
from recon.store.journal import line_from_row
from recon.store.journal_tables import journal_lines

_L = journal_lines.c
_ORDER = (_L.number, _L.line)


def _rows(
    bind: Engine | Connection, run_id: int, provider_account: str
) -> list[Row[tuple[object, ...]]]:
    query = (
        select(*(c for c in journal_lines.c if c.name != "run_id"))
        .where(_L.run_id == run_id, _L.provider_account == provider_account)
        .order_by(*_ORDER)
    )
    if isinstance(bind, Connection):
        return list(bind.execute(query))
    with bind.connect() as conn:
        return list(conn.execute(query))


def run_journal(bind: Engine | Connection, run_id: int, provider_account: str) -> list[JournalLine]:
    """The lines run ``run_id`` made in ``provider_account``'s journal, by entry number and
    line (none: the run made no entry, or a dry run)."""
    return [line_from_row(row) for row in _rows(bind, run_id, provider_account)]


def run_journal_batches(
    bind: Engine | Connection, run_id: int, provider_account: str
) -> tuple[list[JournalLine], list[int | None]]:
    """:func:`run_journal`, and beside each line the export batch it went out in (None: not
    exported yet)."""
    rows = _rows(bind, run_id, provider_account)
    batches = [None if r._mapping["batch"] is None else int(r._mapping["batch"]) for r in rows]
    return [line_from_row(row) for row in rows], batches
