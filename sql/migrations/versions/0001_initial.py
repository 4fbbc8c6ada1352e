"""The initial schema: payouts, observations, notifications, runs, history, exceptions, returns,
run lock.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written out column by column (not ``metadata.create_all``) so that this revision keeps creating
the same schema after ``recon.store.tables`` moves on; later revisions alter it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import (
    create_index_if_missing,
    create_table_if_missing,
    drop_table_if_present,
)
from recon.store.types import Id, LongText, SerialKey, Sha256Hex, UTCDateTime

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}


def upgrade() -> None:
    create_table_if_missing(
        "runs",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("as_of", UTCDateTime, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("counts", LongText, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        **MYSQL,
    )
    create_table_if_missing(
        "payouts",
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("merchant_reference", Id, nullable=False),
        sa.Column("amount_minor", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.CHAR(3), nullable=False),
        sa.Column("bank_account_id", Id),
        sa.Column("customer_id", Id),
        sa.Column("country_id", sa.String(16)),
        sa.Column("created", UTCDateTime),
        sa.Column("eta", UTCDateTime),
        sa.Column("imported_at", UTCDateTime, nullable=False),
        sa.Column("outcome", sa.String(32)),
        sa.Column("state", sa.Integer),
        sa.Column("error_code", sa.String(255)),
        sa.Column("returned_minor", sa.BigInteger),
        sa.Column("exceptions", sa.Text),
        sa.Column("candidate_duplicates", sa.Text),
        sa.Column("outcome_since", UTCDateTime),
        sa.Column("ever_failed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("last_checked_at", UTCDateTime),
        sa.Column("last_run_id", SerialKey),
        sa.PrimaryKeyConstraint("transaction_id", name="pk_payouts"),
        sa.ForeignKeyConstraint(["last_run_id"], ["runs.id"], name="fk_payouts_last_run_id_runs"),
        **MYSQL,
    )
    create_index_if_missing("ix_payouts_outcome_outcome_since", "payouts", ["outcome", "outcome_since"])
    create_table_if_missing(
        "observations",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("fetched_at", UTCDateTime, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("state", sa.Integer),
        sa.Column("type", sa.Integer),
        sa.Column("error_code", sa.String(255)),
        sa.Column("amount", sa.Text),
        sa.Column("amount_minor", sa.BigInteger),
        sa.Column("currency", sa.CHAR(3)),
        sa.Column("related_transaction_id", Id),
        sa.Column("original_transaction_id", Id),
        sa.Column("error", sa.Text),
        sa.Column("raw", LongText),
        sa.PrimaryKeyConstraint("id", name="pk_observations"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_observations_run_id_runs"),
        **MYSQL,
    )
    create_index_if_missing(
        "ix_observations_transaction_id_fetched_at",
        "observations",
        ["transaction_id", "fetched_at"],
    )
    create_index_if_missing("ix_observations_run_id", "observations", ["run_id"])
    create_table_if_missing(
        "notifications",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("dedupe_key", Sha256Hex, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("merchant_id", Id),
        sa.Column("transaction_id", Id),
        sa.Column("original_transaction_id", Id),
        sa.Column("session_id", Id),
        sa.Column("state", sa.Integer),
        sa.Column("amount", sa.Text),
        sa.Column("country_id", sa.String(16)),
        sa.Column("body", LongText, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("received_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_notifications"),
        sa.UniqueConstraint("dedupe_key", name="uq_notifications_dedupe_key"),
        **MYSQL,
    )
    create_index_if_missing(
        "ix_notifications_original_transaction_id", "notifications", ["original_transaction_id"]
    )
    create_index_if_missing("ix_notifications_transaction_id", "notifications", ["transaction_id"])
    create_table_if_missing(
        "outcome_history",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("previous_outcome", sa.String(32)),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("state", sa.Integer),
        sa.Column("error_code", sa.String(255)),
        sa.Column("returned_minor", sa.BigInteger),
        sa.Column("exceptions", sa.Text),
        sa.Column("candidate_duplicates", sa.Text),
        sa.Column("outcome_since", UTCDateTime),
        sa.Column("changed_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_outcome_history"),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["payouts.transaction_id"],
            name="fk_outcome_history_transaction_id_payouts",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_outcome_history_run_id_runs"),
        **MYSQL,
    )
    create_index_if_missing("ix_outcome_history_transaction_id", "outcome_history", ["transaction_id"])
    create_index_if_missing("ix_outcome_history_run_id", "outcome_history", ["run_id"])
    create_table_if_missing(
        "run_exceptions",
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("item_kind", sa.String(16), nullable=False),
        sa.Column("item_id", Id, nullable=False),
        sa.Column("flag", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text),
        sa.PrimaryKeyConstraint("run_id", "item_kind", "item_id", "flag", name="pk_run_exceptions"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_exceptions_run_id_runs"),
        **MYSQL,
    )
    create_table_if_missing(
        "run_returns",
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("return_id", Id, nullable=False),
        sa.Column("original_id", Id),
        sa.Column("amount_minor", sa.BigInteger),
        sa.Column("currency", sa.String(8)),
        sa.Column("confirmed", sa.Boolean, nullable=False),
        sa.Column("matched", sa.Boolean, nullable=False),
        sa.Column("notified", sa.Boolean, nullable=False),
        sa.Column("claimed_original_id", Id),
        sa.Column("claimed_amount", sa.Text),
        sa.PrimaryKeyConstraint("run_id", "return_id", name="pk_run_returns"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_returns_run_id_runs"),
        **MYSQL,
    )
    create_table_if_missing(
        "run_lock",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("holder", sa.String(255), nullable=False),
        sa.Column("acquired_at", UTCDateTime, nullable=False),
        sa.Column("heartbeat_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_run_lock"),
        **MYSQL,
    )


def downgrade() -> None:
    for table in (
        "run_lock",
        "run_returns",
        "run_exceptions",
        "outcome_history",
        "notifications",
        "observations",
        "payouts",
        "runs",
    ):
        drop_table_if_present(table)
