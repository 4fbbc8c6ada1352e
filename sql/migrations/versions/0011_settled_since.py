"""When a payout was first seen settled: ``payouts.settled_since``.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28

A payout settled (or returned) and later answered failed or aborted is
``reversed_after_settlement``; the finding names when recon first saw it settled and stands while
the payout stays failed, so that time is kept on the payout (NULL: never seen settled).

Filled from what the store already knows: a payout settled or returned now gets its
``outcome_since``; one failed or aborted now gets the earliest ``outcome_since`` of a settled or
returned row in its outcome history (so a reversal that happened before the upgrade is found by
the next run that decides the payout). Re-runnable: the column is added only where it is missing,
and each fill sets only what is still NULL.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.migrate_steps import add_column_if_missing, drop_column_if_present
from recon.store.types import UTCDateTime

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SETTLED = ("settled", "returned")
_FAILED = ("failed", "aborted")


def upgrade() -> None:
    add_column_if_missing("payouts", sa.Column("settled_since", UTCDateTime, nullable=True))
    payouts = sa.table(
        "payouts",
        sa.column("transaction_id"),
        sa.column("outcome"),
        sa.column("outcome_since"),
        sa.column("settled_since"),
    )
    history = sa.table(
        "outcome_history",
        sa.column("transaction_id"),
        sa.column("outcome"),
        sa.column("outcome_since"),
    )
    p, h = payouts.c, history.c
    op.execute(
        sa.update(payouts)
        .where(p.outcome.in_(_SETTLED), p.settled_since.is_(None))
        .values(settled_since=p.outcome_since)
    )
    first_settled = (
        sa.select(sa.func.min(h.outcome_since))
        .where(h.transaction_id == p.transaction_id, h.outcome.in_(_SETTLED))
        .scalar_subquery()
    )
    op.execute(
        sa.update(payouts)
        .where(p.outcome.in_(_FAILED), p.settled_since.is_(None))
        .values(settled_since=first_settled)
    )


def downgrade() -> None:
    drop_column_if_present("payouts", "settled_since")
