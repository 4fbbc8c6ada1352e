"""The watch schedule: when a watched payout (failed, aborted, unknown; settled for returns) is
due to be checked again.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

Existing rows start with NULL: the first run after the upgrade computes each payout's next check
from its outcome and ``outcome_since``, and the run after that polls the ones due.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import (
    add_column_if_missing,
    create_index_if_missing,
    drop_column_if_present,
    drop_index_if_present,
)
from recon.store.types import UTCDateTime

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    add_column_if_missing("payouts", sa.Column("next_check_at", UTCDateTime, nullable=True))
    create_index_if_missing("ix_payouts_next_check_at", "payouts", ["next_check_at"])


def downgrade() -> None:
    drop_index_if_present("ix_payouts_next_check_at", "payouts")
    drop_column_if_present("payouts", "next_check_at")
