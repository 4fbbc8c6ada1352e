"""Who decided an action, beside who ran it: ``exception_actions.decided_by``.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

``recon exceptions apply`` recorded the file's ``by`` column as ``by``, so whoever filled in the
workbook replaced who ran ``apply``. Now ``by`` is who ran it (the OS user or ``--by``) and
``decided_by`` what the file says (NULL for actions from the command line and from runs).

Re-runnable: the column is added only where it is missing, and dropped only where it is there
(a store upgraded by hand, or a migration run twice, does not fail).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLE = "exception_actions"
_COLUMN = "decided_by"


def _has_column() -> bool:
    columns = sa.inspect(op.get_bind()).get_columns(_TABLE)
    return any(column["name"] == _COLUMN for column in columns)


def upgrade() -> None:
    if not _has_column():
        op.add_column(_TABLE, sa.Column(_COLUMN, sa.String(255)))


def downgrade() -> None:
    if _has_column():
        op.drop_column(_TABLE, _COLUMN)
