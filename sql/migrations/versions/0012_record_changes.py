"""The record is evidence too: ``record_changes``, and the record in each history row.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26

An import that changes a payout a run already reconciled keeps each changed field's value before
and after in ``record_changes``: the next run asks the provider about it again and reports
``record_changed`` until a person resolves it. Each ``outcome_history`` row keeps the record as
its run saw it, so ``recon report --run N`` rebuilds run N's figures whatever was imported later.
Rows written before this revision have no copy (``amount_minor`` NULL): their reports read the
payout's record, as before. Nothing is copied here: a store of a year of history would be
rewritten for reports of nights already sent.

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
from recon.store.types import Id, SerialKey, UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SNAPSHOT: tuple[tuple[str, sa.types.TypeEngine[object] | type], ...] = (
    ("merchant_reference", Id),
    ("amount_minor", sa.BigInteger),
    ("currency", sa.CHAR(3)),
    ("bank_account_id", Id),
    ("customer_id", Id),
    ("created", UTCDateTime),
    ("eta", UTCDateTime),
)


def upgrade() -> None:
    for name, kind in _SNAPSHOT:
        add_column_if_missing("outcome_history", sa.Column(name, kind))
    create_table_if_missing(
        "record_changes",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("field", sa.String(32), nullable=False),
        sa.Column("before", sa.Text),
        sa.Column("after", sa.Text),
        sa.Column("imported_at", UTCDateTime, nullable=False),
        sa.Column("answered_run_id", SerialKey),
        sa.Column("closed_run_id", SerialKey),
        sa.PrimaryKeyConstraint("id", name="pk_record_changes"),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["payouts.transaction_id"],
            name="fk_record_changes_transaction_id_payouts",
        ),
        sa.ForeignKeyConstraint(
            ["answered_run_id"], ["runs.id"], name="fk_record_changes_answered_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["closed_run_id"], ["runs.id"], name="fk_record_changes_closed_run_id_runs"
        ),
        mysql_engine="InnoDB",
        mysql_charset="utf8mb4",
    )
    create_index_if_missing(
        "ix_record_changes_transaction_id", "record_changes", ["transaction_id"]
    )
    create_index_if_missing("ix_record_changes_closed_run_id", "record_changes", ["closed_run_id"])


def downgrade() -> None:
    drop_index_if_present("ix_record_changes_closed_run_id", "record_changes")
    drop_index_if_present("ix_record_changes_transaction_id", "record_changes")
    drop_table_if_present("record_changes")
    for name, _ in reversed(_SNAPSHOT):
        drop_column_if_present("outcome_history", name)
