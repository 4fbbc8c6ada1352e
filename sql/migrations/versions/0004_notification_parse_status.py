"""Notifications keep how far they were parsed: parse_status and parse_problem.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

Every JSON object the receiver is sent is now stored, also when recon cannot read it as a
notification; these columns say so and why. Rows stored before were all fully parsed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.add_column(
            sa.Column("parse_status", sa.String(16), nullable=False, server_default="parsed")
        )
        batch.add_column(sa.Column("parse_problem", sa.Text))
        batch.create_index("ix_notifications_parse_status", ["parse_status"])


def downgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.drop_index("ix_notifications_parse_status")
        batch.drop_column("parse_problem")
        batch.drop_column("parse_status")
