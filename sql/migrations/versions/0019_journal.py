"""The journal: each run's entries, the exports, and the provider's settled time they date from.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

- ``journal_lines``: every line of every entry a run made (recon.store.journal_tables); a line is
  never changed but for the batch an export stamps on it.
- ``journal_batches``: each export, with the options and file digests to write it again.
- ``journal_marks``: per provider account, the run whose journal step last ran (the next night
  reads only what changed since).
- ``observations.settled``: the settled time each answer carried; ``payouts.settled_at``: the
  latest answer's. Answers stored before carry none (NULL): the journal then dates a settlement
  by the run that first saw it settled.

Re-runnable: every step skips what is already there (recon.store.migrate_steps).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import (
    add_column_if_missing,
    create_index_if_missing,
    create_table_if_missing,
    drop_column_if_present,
    drop_index_if_present,
    drop_table_if_present,
)
from recon.store.types import Id, LongText, SerialKey, UTCDateTime

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MYSQL_OPTS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}
_COLUMNS = (("observations", "settled"), ("payouts", "settled_at"))
_INDEXES = (
    ("ix_journal_lines_provider_account_transaction_id", ["provider_account", "transaction_id"]),
    ("ix_journal_lines_provider_account_batch", ["provider_account", "batch"]),
    ("ix_journal_lines_run_id", ["run_id"]),
)


def upgrade() -> None:
    for table, name in _COLUMNS:
        add_column_if_missing(table, sa.Column(name, UTCDateTime))
    create_table_if_missing(
        "journal_batches",
        sa.Column("batch", sa.BigInteger, nullable=False, autoincrement=False),
        sa.Column("format", sa.String(8), nullable=False),
        sa.Column("provider_account", sa.String(32)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("lines", sa.BigInteger, nullable=False),
        sa.Column("options", LongText, nullable=False),
        sa.Column("files", LongText, nullable=False),
        sa.PrimaryKeyConstraint("batch", name="pk_journal_batches"),
        **_MYSQL_OPTS,
    )
    create_table_if_missing(
        "journal_lines",
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("journal_id", sa.String(32), nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("number", sa.BigInteger, nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("merchant_reference", Id),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("event_date", sa.Date, nullable=False),
        sa.Column("posting_date", sa.Date, nullable=False),
        sa.Column("late", sa.Boolean, nullable=False),
        sa.Column("reverses", sa.String(32)),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("debit_minor", sa.BigInteger, nullable=False),
        sa.Column("credit_minor", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.CHAR(3), nullable=False),
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("batch", sa.BigInteger),
        sa.PrimaryKeyConstraint("journal_id", "line", name="pk_journal_lines"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_journal_lines_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["batch"], ["journal_batches.batch"], name="fk_journal_lines_batch_journal_batches"
        ),
        **_MYSQL_OPTS,
    )
    for name, columns in _INDEXES:
        create_index_if_missing(name, "journal_lines", columns)
    create_table_if_missing(
        "journal_marks",
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("run_id", SerialKey, nullable=False),
        sa.PrimaryKeyConstraint("provider_account", name="pk_journal_marks"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_journal_marks_run_id_runs"),
        **_MYSQL_OPTS,
    )


def downgrade() -> None:
    drop_table_if_present("journal_marks")
    for name, _ in reversed(_INDEXES):
        drop_index_if_present(name, "journal_lines")
    drop_table_if_present("journal_lines")
    drop_table_if_present("journal_batches")
    for table, name in reversed(_COLUMNS):
        drop_column_if_present(table, name)
