"""The roll-forward: each run's lines, and where each run's roll-forward started.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26

- ``rollforward_lines``: per run, currency, outcome and line, a count and an amount; the next run's
  ``previous`` is read from here.
- ``rollforward_runs``: per run, the run its roll-forward started from and the last case action
  it counted.
- ``payouts(currency, outcome, amount_minor)``: the position per currency and outcome from the
  index alone; ``exception_cases(opened_run_id)``: the findings opened since a run.

A store from before this revision has no lines: its next run starts the roll-forward from the
latest finished run and says so. Re-runnable: each step looks at the database first.
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
from recon.store.types import SerialKey

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MYSQL_OPTS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}


def upgrade() -> None:
    create_table_if_missing(
        "rollforward_lines",
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("line", sa.String(16), nullable=False),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.Column("amount_minor", sa.BigInteger),
        sa.PrimaryKeyConstraint(
            "run_id", "currency", "outcome", "line", name="pk_rollforward_lines"
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_rollforward_lines_run_id_runs"),
        **_MYSQL_OPTS,
    )
    create_table_if_missing(
        "rollforward_runs",
        sa.Column("run_id", SerialKey, nullable=False),
        sa.Column("previous_run_id", SerialKey),
        sa.Column("started", sa.Boolean, nullable=False),
        sa.Column("actions_after", sa.BigInteger, nullable=False),
        sa.Column("actions_through", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_rollforward_runs"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_rollforward_runs_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["previous_run_id"], ["runs.id"], name="fk_rollforward_runs_previous_run_id_runs"
        ),
        **_MYSQL_OPTS,
    )
    create_index_if_missing(
        "ix_payouts_currency_outcome_amount_minor",
        "payouts",
        ["currency", "outcome", "amount_minor"],
    )
    create_index_if_missing(
        "ix_exception_cases_opened_run_id", "exception_cases", ["opened_run_id"]
    )


def downgrade() -> None:
    drop_index_if_present("ix_exception_cases_opened_run_id", "exception_cases")
    drop_index_if_present("ix_payouts_currency_outcome_amount_minor", "payouts")
    drop_table_if_present("rollforward_runs")
    drop_table_if_present("rollforward_lines")
