"""The provider's side: ids the provider named that the record lacks, creates without
a transaction id.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25

- ``provider_items``: one row per id a notification or an answer named that no recorded payout
  has, with the provider's latest answer about it.
- ``creation_attempts``: imported rows with a reference and an amount but no transaction id.
- ``notifications(received_at)``: the ids named since the previous run. (The recorded payouts an
  unrecorded one or a create may repeat are read by ``payouts(merchant_reference)``, from 0013.)
- Ids named by notifications stored before this revision become items (not yet asked), so the
  first night after the upgrade asks about them.

Re-runnable: each step looks at the database first, and the backfill inserts only ids not yet
there.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.migrate_steps import (
    create_index_if_missing,
    create_table_if_missing,
    drop_index_if_present,
    drop_table_if_present,
)
from recon.store.types import AnswerText, Id, SerialKey, UTCDateTime

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MYSQL_OPTS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}

# Who named each id: (notification kind, id column, named_by).
_NAMINGS = (
    ("transaction", "transaction_id", "callback"),
    ("returned_funds", "transaction_id", "claim"),
    ("returned_funds", "original_transaction_id", "return"),
)


def upgrade() -> None:
    create_table_if_missing(
        "provider_items",
        sa.Column("transaction_id", Id, primary_key=True),
        sa.Column("first_named_at", UTCDateTime, nullable=False),
        sa.Column("named_by", sa.String(16), nullable=False),
        sa.Column("last_asked_run_id", SerialKey),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("type", sa.Integer),
        sa.Column("state", sa.Integer),
        sa.Column("amount_minor", sa.BigInteger),
        sa.Column("currency", sa.String(8)),
        sa.Column("merchant_reference", AnswerText),
        sa.Column("to_bank_account_id", AnswerText),
        sa.Column("customer_id", AnswerText),
        sa.Column("created", UTCDateTime),
        sa.Column("answered_at", UTCDateTime),
        sa.PrimaryKeyConstraint("transaction_id", name="pk_provider_items"),
        sa.ForeignKeyConstraint(
            ["last_asked_run_id"], ["runs.id"], name="fk_provider_items_last_asked_run_id_runs"
        ),
        **_MYSQL_OPTS,
    )
    create_index_if_missing("ix_provider_items_status", "provider_items", ["status"])
    create_table_if_missing(
        "creation_attempts",
        sa.Column("id", SerialKey, primary_key=True, autoincrement=True),
        sa.Column("merchant_reference", Id, nullable=False),
        sa.Column("amount_minor", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.CHAR(3), nullable=False),
        sa.Column("bank_account_id", Id),
        sa.Column("customer_id", Id),
        sa.Column("created", UTCDateTime),
        sa.Column("imported_at", UTCDateTime, nullable=False),
        sa.Column("matched_transaction_id", Id),
        sa.Column("matched_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_creation_attempts"),
        **_MYSQL_OPTS,
    )
    create_index_if_missing(
        "ix_creation_attempts_merchant_reference", "creation_attempts", ["merchant_reference"]
    )
    create_index_if_missing("ix_creation_attempts_matched_at", "creation_attempts", ["matched_at"])
    create_index_if_missing("ix_notifications_received_at", "notifications", ["received_at"])
    bind = op.get_bind()
    for kind, column, named_by in _NAMINGS:
        bind.execute(
            sa.text(
                "INSERT INTO provider_items (transaction_id, first_named_at, named_by, status)"
                f" SELECT n.{column}, MIN(n.received_at), :named_by, 'unasked'"
                " FROM notifications n"
                f" WHERE n.kind = :kind AND n.{column} IS NOT NULL"
                f" AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.transaction_id = n.{column})"
                " AND NOT EXISTS (SELECT 1 FROM provider_items i"
                f"  WHERE i.transaction_id = n.{column})"
                f" GROUP BY n.{column}"
            ),
            {"kind": kind, "named_by": named_by},
        )


def downgrade() -> None:
    drop_index_if_present("ix_notifications_received_at", "notifications")
    drop_table_if_present("creation_attempts")
    drop_table_if_present("provider_items")
