"""The provider's fee on each payout: every answer's, and the latest a run saw.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27

- ``observations.fee_amount_minor`` and ``observations.fee_id``: the fee each answer carried (in
  minor units of the payout's currency), so a fee that changes between answers shows as a change.
- ``payouts.fee_minor`` and ``payouts.fee_id``: the fee as the latest answer said it (a run keeps
  it while the payout is not fetched); the reports and the fee checks read it.
- ``payouts.fee_expected_minor`` and ``payouts.fee_entry``: the agreed fee, and the ``[[fees]]``
  entry that priced it (its valid_from, currency and account), as the latest run priced it.
- the same four columns in ``outcome_history``: as each run saw them.

Nothing is copied: answers stored before carry no fee (NULL), as the provider's answers did not
matter to recon then.

Re-runnable: every step skips what is already there (recon.store.migrate_steps).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import add_column_if_missing, drop_column_if_present
from recon.store.types import Id

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS: tuple[tuple[str, str, sa.types.TypeEngine[object] | type], ...] = (
    ("observations", "fee_amount_minor", sa.BigInteger),
    ("observations", "fee_id", Id),
    ("payouts", "fee_minor", sa.BigInteger),
    ("payouts", "fee_id", Id),
    ("payouts", "fee_expected_minor", sa.BigInteger),
    ("payouts", "fee_entry", sa.String(255)),
    ("outcome_history", "fee_minor", sa.BigInteger),
    ("outcome_history", "fee_id", Id),
    ("outcome_history", "fee_expected_minor", sa.BigInteger),
    ("outcome_history", "fee_entry", sa.String(255)),
)


def upgrade() -> None:
    for table, name, kind in _COLUMNS:
        add_column_if_missing(table, sa.Column(name, kind))


def downgrade() -> None:
    for table, name, _ in reversed(_COLUMNS):
        drop_column_if_present(table, name)
