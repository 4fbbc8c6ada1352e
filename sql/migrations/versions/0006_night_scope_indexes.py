"""Indexes for a night that reads only the payouts it decides (issue 16).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23

A run reads the payouts it asked about (primary key), the flagged ones (``exceptions``,
``candidate_duplicates``: non-empty text), and the later payouts a late settlement may repeat
(same bank account or customer, same amount). Without these, each of those reads is a scan of
every payout ever stored (docs/scaling.md, "Indexes").
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # MariaDB indexes a prefix of a TEXT column (255 characters), the others the whole value.
    op.create_index("ix_payouts_exceptions", "payouts", ["exceptions"], mysql_length=255)
    op.create_index(
        "ix_payouts_candidate_duplicates", "payouts", ["candidate_duplicates"], mysql_length=255
    )
    op.create_index(
        "ix_payouts_bank_account_id_amount_minor", "payouts", ["bank_account_id", "amount_minor"]
    )
    op.create_index("ix_payouts_customer_id_amount_minor", "payouts", ["customer_id", "amount_minor"])


def downgrade() -> None:
    op.drop_index("ix_payouts_customer_id_amount_minor", "payouts")
    op.drop_index("ix_payouts_bank_account_id_amount_minor", "payouts")
    op.drop_index("ix_payouts_candidate_duplicates", "payouts")
    op.drop_index("ix_payouts_exceptions", "payouts")
