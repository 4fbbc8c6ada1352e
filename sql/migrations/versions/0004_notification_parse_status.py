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

from recon.store.migrate_steps import (
    add_column_if_missing,
    create_index_if_missing,
    drop_column_if_present,
    drop_index_if_present,
)

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    add_column_if_missing(
        "notifications",
        sa.Column("parse_status", sa.String(16), nullable=False, server_default="parsed"),
    )
    add_column_if_missing("notifications", sa.Column("parse_problem", sa.Text))
    create_index_if_missing("ix_notifications_parse_status", "notifications", ["parse_status"])


def downgrade() -> None:
    drop_index_if_present("ix_notifications_parse_status", "notifications")
    drop_column_if_present("notifications", "parse_problem")
    drop_column_if_present("notifications", "parse_status")
