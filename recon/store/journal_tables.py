"""The journal's tables, in the schema's one metadata (:mod:`recon.store.tables` lists them with
the others).

``journal_lines``: every line of every journal entry a run made, never updated but for the
``batch`` an export stamps on it, never deleted. An entry is its lines with one ``journal_id``;
a reversal is a new entry whose ``reverses`` names the one it takes back. ``number`` is the
entry's place in its provider account's journal (1, 2, …: SIE's ``#VER`` number).
``journal_batches``: each export, with what it needs to write the same bytes again.
``journal_marks``: per provider account, the run whose journal step last ran.
"""

from __future__ import annotations

from sqlalchemy import (
    CHAR,
    BigInteger,
    Boolean,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
)

from recon.store.metadata import ACCOUNT_COLUMN, MYSQL_OPTS, metadata
from recon.store.types import Id, LongText, SerialKey, UTCDateTime

journal_lines = Table(
    "journal_lines",
    metadata,
    Column(ACCOUNT_COLUMN, String(32), nullable=False),
    Column("journal_id", String(32), nullable=False),
    Column("line", Integer, nullable=False),
    Column("number", BigInteger, nullable=False),
    Column("event", String(32), nullable=False),  # recon.reconcile.journal.Event
    Column("transaction_id", Id, nullable=False),  # the payout the entry is about
    Column("merchant_reference", Id),
    Column("version", Integer, nullable=False),
    Column("event_date", Date, nullable=False),
    Column("posting_date", Date, nullable=False),
    Column("late", Boolean, nullable=False),
    Column("reverses", String(32)),  # the journal_id a reversal takes back
    Column("role", String(32), nullable=False),  # recon.reconcile.journal.Role
    Column("account", String(64), nullable=False),  # the ledger's account code
    Column("debit_minor", BigInteger, nullable=False),
    Column("credit_minor", BigInteger, nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("batch", BigInteger, ForeignKey("journal_batches.batch")),  # NULL: not exported
    PrimaryKeyConstraint("journal_id", "line"),
    Index(None, ACCOUNT_COLUMN, "transaction_id"),
    Index(None, ACCOUNT_COLUMN, "batch"),
    Index(None, "run_id"),
    **MYSQL_OPTS,
)

journal_batches = Table(
    "journal_batches",
    metadata,
    Column("batch", BigInteger, primary_key=True, autoincrement=False),
    Column("format", String(8), nullable=False),  # csv / xero / sie
    Column(ACCOUNT_COLUMN, String(32)),  # NULL: every account's lines
    Column("created_at", UTCDateTime, nullable=False),
    Column("lines", BigInteger, nullable=False),
    Column("options", LongText, nullable=False),  # JSON: what the files were written with
    Column("files", LongText, nullable=False),  # JSON: [{"name", "sha256", "bytes"}], manifest last
    **MYSQL_OPTS,
)

# Per provider account, the run whose journal step last ran (its lines, if any, written in the
# same transaction): the facts of every payout no run has written since are booked as they are.
journal_marks = Table(
    "journal_marks",
    metadata,
    Column(ACCOUNT_COLUMN, String(32), primary_key=True),
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    **MYSQL_OPTS,
)
