"""Indexes for a night that reads only the payouts it decides.

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

from recon.store.migrate_steps import create_index_if_missing, drop_index_if_present

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # MariaDB indexes a prefix of a TEXT column (255 characters), the others the whole value.
    create_index_if_missing("ix_payouts_exceptions", "payouts", ["exceptions"], mysql_length=255)
    create_index_if_missing(
        "ix_payouts_candidate_duplicates", "payouts", ["candidate_duplicates"], mysql_length=255
    )
    create_index_if_missing(
        "ix_payouts_bank_account_id_amount_minor", "payouts", ["bank_account_id", "amount_minor"]
    )
    create_index_if_missing("ix_payouts_customer_id_amount_minor", "payouts", ["customer_id", "amount_minor"])


def downgrade() -> None:
    drop_index_if_present("ix_payouts_customer_id_amount_minor", "payouts")
    drop_index_if_present("ix_payouts_bank_account_id_amount_minor", "payouts")
    drop_index_if_present("ix_payouts_candidate_duplicates", "payouts")
    drop_index_if_present("ix_payouts_exceptions", "payouts")
