"""Answer fields checked against the record: merchant_reference, to_bank_account_id, created,
eta, and an undocumented state name as sent.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from recon.store.migrate_steps import add_column_if_missing, drop_column_if_present
from recon.store.types import AnswerText, UTCDateTime

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    ("merchant_reference", lambda: AnswerText),
    ("to_bank_account_id", lambda: AnswerText),
    ("created", UTCDateTime),
    ("eta", UTCDateTime),
    ("state_raw", lambda: sa.String(255)),
)


def upgrade() -> None:
    for name, kind in _COLUMNS:
        add_column_if_missing("observations", sa.Column(name, kind(), nullable=True))


def downgrade() -> None:
    for name, _kind in reversed(_COLUMNS):
        drop_column_if_present("observations", name)
