"""The provider's transaction export and its balance: files, rows by version, recorded closings.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

- ``provider_export_files``: each export file given to recon (pulled or imported), once per
  account, sha256 and settlement window, with its row count, headers and whether it hit the cap.
- ``provider_export_rows``: each row's content by version (a changed row is the next version).
- ``balance_records``: closing balances read from the provider's back office, never overwritten.

Re-runnable: every step skips what is already there (recon.store.migrate_steps).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import (
    create_index_if_missing,
    create_table_if_missing,
    drop_index_if_present,
    drop_table_if_present,
)
from recon.store.types import AnswerText, Id, LongText, SerialKey, Sha256Hex, UTCDateTime

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MYSQL_OPTS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}
_INDEXES = (
    (
        "ix_provider_export_files_window",
        "provider_export_files",
        ["provider_account", "settled_from", "settled_to"],
    ),
    (
        "ix_provider_export_rows_provider_account_settled",
        "provider_export_rows",
        ["provider_account", "settled"],
    ),
    ("ix_provider_export_rows_file_id", "provider_export_rows", ["file_id"]),
    (
        "ix_balance_records_provider_account_currency_day",
        "balance_records",
        ["provider_account", "currency", "day"],
    ),
)


def upgrade() -> None:
    create_table_if_missing(
        "provider_export_files",
        sa.Column("id", SerialKey, nullable=False, autoincrement=True),
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("sha256", Sha256Hex, nullable=False),
        sa.Column("settled_from", UTCDateTime, nullable=False),
        sa.Column("settled_to", UTCDateTime, nullable=False),
        sa.Column("rows", sa.BigInteger, nullable=False),
        sa.Column("capped", sa.Boolean, nullable=False),
        sa.Column("headers", LongText, nullable=False),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("name", sa.Text),
        sa.Column("stored_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_provider_export_files"),
        sa.UniqueConstraint(
            "provider_account",
            "sha256",
            "settled_from",
            "settled_to",
            name="uq_provider_export_files_identity",
        ),
        **_MYSQL_OPTS,
    )
    create_table_if_missing(
        "provider_export_rows",
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("file_id", SerialKey, nullable=False),
        sa.Column("line", sa.BigInteger, nullable=False),
        sa.Column("digest", Sha256Hex, nullable=False),
        sa.Column("type_raw", AnswerText, nullable=False),
        sa.Column("state", sa.Integer),
        sa.Column("state_raw", AnswerText, nullable=False),
        sa.Column("amount_minor", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.CHAR(3), nullable=False),
        sa.Column("merchant_reference", AnswerText),
        sa.Column("settled", UTCDateTime),
        sa.Column("created", UTCDateTime),
        sa.Column("fee_amount_minor", sa.BigInteger),
        sa.Column("fee_id", Id),
        sa.Column("related_transaction_id", Id),
        sa.Column("extra", LongText),
        sa.PrimaryKeyConstraint(
            "provider_account", "kind", "transaction_id", "version",
            name="pk_provider_export_rows",
        ),  # fmt: skip
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["provider_export_files.id"],
            name="fk_provider_export_rows_file_id_provider_export_files",
        ),
        **_MYSQL_OPTS,
    )
    create_table_if_missing(
        "balance_records",
        sa.Column("id", SerialKey, nullable=False, autoincrement=True),
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("currency", sa.CHAR(3), nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("closing_minor", sa.BigInteger, nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("recorded_at", UTCDateTime, nullable=False),
        sa.Column("recorded_by", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_balance_records"),
        **_MYSQL_OPTS,
    )
    for name, table, columns in _INDEXES:
        create_index_if_missing(name, table, columns)


def downgrade() -> None:
    for name, table, _ in reversed(_INDEXES):
        drop_index_if_present(name, table)
    for table in ("balance_records", "provider_export_rows", "provider_export_files"):
        drop_table_if_present(table)
