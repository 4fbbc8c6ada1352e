"""Indexes that keep a night's reads bounded by its work as history grows.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

- ``payouts(outcome, next_check_at, outcome_since)``: the watch selection (``outcome IN (...)
  AND next_check_at <= as_of``) and the unscheduled-watch read (``next_check_at IS NULL`` inside
  a window) each search a range of it. With only ``(outcome, outcome_since)`` they walked every
  settled payout ever stored (BENCHMARKS.md, "Steady state, second round").
- ``payouts(bank_account_id, amount_minor, created)`` and ``(customer_id, amount_minor,
  created)`` replace the two-column indexes of 0006: a late settlement's candidate duplicates
  are the *later* payouts of the same party and amount, so the read is a range from the late
  payout's ``created`` on, not every payout of that party and amount ever stored.
- ``observations(type)``: the returns read (type-13 answers) searches it instead of scanning
  every answer ever stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from recon.store.migrate_steps import create_index_if_missing, drop_index_if_present

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    create_index_if_missing(
        "ix_payouts_outcome_next_check_at_outcome_since",
        "payouts",
        ["outcome", "next_check_at", "outcome_since"],
    )
    create_index_if_missing(
        "ix_payouts_bank_account_id_amount_minor_created",
        "payouts",
        ["bank_account_id", "amount_minor", "created"],
    )
    create_index_if_missing(
        "ix_payouts_customer_id_amount_minor_created",
        "payouts",
        ["customer_id", "amount_minor", "created"],
    )
    drop_index_if_present("ix_payouts_customer_id_amount_minor", "payouts")
    drop_index_if_present("ix_payouts_bank_account_id_amount_minor", "payouts")
    create_index_if_missing("ix_observations_type", "observations", ["type"])


def downgrade() -> None:
    drop_index_if_present("ix_observations_type", "observations")
    create_index_if_missing("ix_payouts_customer_id_amount_minor", "payouts", ["customer_id", "amount_minor"])
    create_index_if_missing(
        "ix_payouts_bank_account_id_amount_minor", "payouts", ["bank_account_id", "amount_minor"]
    )
    drop_index_if_present("ix_payouts_customer_id_amount_minor_created", "payouts")
    drop_index_if_present("ix_payouts_bank_account_id_amount_minor_created", "payouts")
    drop_index_if_present("ix_payouts_outcome_next_check_at_outcome_since", "payouts")
