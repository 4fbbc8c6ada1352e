"""The journal's mark: the last run that brought each provider account's journal up to date.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

- ``journal_marks``: per provider account, the run whose journal step last ran (recon.store.
  journal_tables). A night then reads only the payouts written since (``payouts.last_run_id``
  after it) and those an import changed (``record_changes``); an account without a mark (every
  store before this revision) is read whole once, and marked.

Re-runnable: every step skips what is already there (recon.store.migrate_steps).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import create_table_if_missing, drop_table_if_present
from recon.store.types import SerialKey

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    create_table_if_missing(
        "journal_marks",
        sa.Column("provider_account", sa.String(32), nullable=False),
        sa.Column("run_id", SerialKey, nullable=False),
        sa.PrimaryKeyConstraint("provider_account", name="pk_journal_marks"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_journal_marks_run_id_runs"),
        mysql_engine="InnoDB",
        mysql_charset="utf8mb4",
    )


def downgrade() -> None:
    drop_table_if_present("journal_marks")
