"""The night's journal: the entries the core makes from the money facts the decision stored.

With ``[journal]`` configured, a nightly run books, in the transaction that writes its decision,
what the record now proves and the journal does not hold yet (:func:`book`): the store reads the
account's money facts and lines, the core (:func:`recon.reconcile.journal.journal_entries`)
names the lines to add, the store adds them; after the first such night the store reads only the
payouts written or changed since the last (:mod:`recon.store.journal`). The core adds a line only
where the facts differ from what is booked, so a night run again, resumed, or rebuilt by ``recon
report`` adds none.
A code missing for an entry that is due (``ConfigError``) rolls the whole decision back: the
night ends with exit 2 and the store as it was. A closed period that ends after the run's day
is refused before the night writes anything (:func:`check_journal`). A dry run books nothing.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection

from recon.journal_settings import account_books
from recon.night.lifecycle import Run
from recon.reconcile.journal import JournalParams, booked_entries, journal_entries, run_day
from recon.settings import Settings
from recon.store.journal import read_books, read_mark, write_lines, write_mark

log = logging.getLogger(__name__)


def journal_params(settings: Settings, run: Run) -> JournalParams | None:
    """What the night's journal is made with; None without ``[journal]`` (no entries)."""
    own = next((a.journal for a in settings.provider_accounts if a.name == run.account), None)
    books = account_books(settings.journal, run.account, own)
    if books is None:
        return None
    return JournalParams(
        provider_account=run.account,
        codes=books.codes,
        zone=settings.zone,
        as_of=run.as_of,
        locked_through=settings.journal_locked_through,
        setting=books.setting,
    )


def check_journal(params: JournalParams | None) -> None:
    """Refuse (``InputError``, exit 2) a closed period that ends after the run's own day, before
    the night writes anything."""
    if params is not None:
        run_day(params)


def book(conn: Connection, run: Run, params: JournalParams | None) -> int:
    """Add the run's entries to the journal on ``conn`` (the run's fenced transaction); returns
    how many entries it added (0 without ``[journal]``).

    Only the payouts written or changed since the account's mark are read (all of them where
    there is none, the first night with ``[journal]``); then the mark names this run.
    """
    if params is None:
        return 0
    books = read_books(conn, run.account, since=read_mark(conn, run.account))
    lines = journal_entries(
        books.payouts, booked_entries(books.lines), params, next_number=books.next_number
    )
    write_lines(conn, run.stored_id, lines)
    write_mark(conn, run.account, run.stored_id)
    entries = len({line.journal_id for line in lines})
    if entries:
        log.info("%s: %d journal entries (%d lines)", run.label, entries, len(lines))
    return entries
