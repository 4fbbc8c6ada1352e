"""An index on payouts.merchant_reference: a night reads a possible duplicate's members.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01

A night reads, beside the payouts it decides, every payout of the same ``merchant_reference``
(:func:`recon.reconcile.scope.related_reads`): without an index each reference is a scan of every
payout ever stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from recon.store.migrate_steps import create_index_if_missing, drop_index_if_present

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    create_index_if_missing("ix_payouts_merchant_reference", "payouts", ["merchant_reference"])


def downgrade() -> None:
    drop_index_if_present("ix_payouts_merchant_reference", "payouts")
