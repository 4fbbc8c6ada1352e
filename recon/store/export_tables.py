"""The provider's side as it lists it, in the schema's one metadata (:mod:`recon.store.tables`
lists them with the others).

``provider_export_files``: every export file recon was given (pulled or imported by hand), kept
once per account, sha256 and settlement window (``settled_to`` exclusive), row count,
headers and whether it was cut at the cap. ``provider_export_rows``: each row's content, one
version per change: a row seen again unchanged adds nothing, a row whose content changed (a later
state, another amount) is the next version, and the history keeps both. ``balance_records``: the
closing balances read from the provider's back office, never overwritten (a second figure for the
same account, currency and day restates the first).
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
    Text,
    UniqueConstraint,
)

from recon.store.metadata import ACCOUNT_COLUMN, MYSQL_OPTS, metadata
from recon.store.types import AnswerText, Id, LongText, SerialKey, Sha256Hex, UTCDateTime

provider_export_files = Table(
    "provider_export_files",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column(ACCOUNT_COLUMN, String(32), nullable=False),
    Column("sha256", Sha256Hex, nullable=False),
    Column("settled_from", UTCDateTime, nullable=False),
    Column("settled_to", UTCDateTime, nullable=False),  # exclusive
    Column("rows", BigInteger, nullable=False),
    Column("capped", Boolean, nullable=False),  # exactly the row cap: never taken as complete
    Column("headers", LongText, nullable=False),  # JSON list, as the file has them
    Column("source", String(8), nullable=False),  # api / file
    Column("name", Text),  # the file's name, or where it was pulled from (no credential)
    Column("stored_at", UTCDateTime, nullable=False),
    # A file is a claim about its window: the same bytes for another window (two empty days)
    # are another file.
    UniqueConstraint(
        ACCOUNT_COLUMN,
        "sha256",
        "settled_from",
        "settled_to",
        name="uq_provider_export_files_identity",
    ),
    Index("ix_provider_export_files_window", ACCOUNT_COLUMN, "settled_from", "settled_to"),
    **MYSQL_OPTS,
)

provider_export_rows = Table(
    "provider_export_rows",
    metadata,
    Column(ACCOUNT_COLUMN, String(32), nullable=False),
    Column("kind", String(32), nullable=False),  # recon.export_rows.ExportKind
    Column("transaction_id", Id, nullable=False),
    Column("version", Integer, nullable=False),
    Column("file_id", SerialKey, ForeignKey("provider_export_files.id"), nullable=False),
    Column("line", BigInteger, nullable=False),
    Column("digest", Sha256Hex, nullable=False),  # of the row's content: unchanged or a version
    Column("type_raw", AnswerText, nullable=False),
    Column("state", Integer),
    Column("state_raw", AnswerText, nullable=False),
    Column("amount_minor", BigInteger, nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column("merchant_reference", AnswerText),
    Column("settled", UTCDateTime),
    Column("created", UTCDateTime),
    Column("fee_amount_minor", BigInteger),
    Column("fee_id", Id),
    Column("related_transaction_id", Id),
    Column("extra", LongText),  # JSON object: the columns the mapping does not name
    PrimaryKeyConstraint(ACCOUNT_COLUMN, "kind", "transaction_id", "version"),
    Index(None, ACCOUNT_COLUMN, "settled"),
    Index(None, "file_id"),
    **MYSQL_OPTS,
)

balance_records = Table(
    "balance_records",
    metadata,
    Column("id", SerialKey, primary_key=True, autoincrement=True),
    Column(ACCOUNT_COLUMN, String(32), nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column("day", Date, nullable=False),  # the closing balance at the end of this day
    Column("closing_minor", BigInteger, nullable=False),
    Column("note", Text),
    Column("recorded_at", UTCDateTime, nullable=False),
    Column("recorded_by", String(255), nullable=False),
    Index(None, ACCOUNT_COLUMN, "currency", "day"),
    **MYSQL_OPTS,
)
