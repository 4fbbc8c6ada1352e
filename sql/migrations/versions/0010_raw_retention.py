"""Raw bodies expire: RECON_KEEP_RAW_DAYS drops them, keeping the parsed fields.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

- ``notifications.body`` may be NULL: a notification's raw body is dropped like an answer's
  ``observations.raw`` (already nullable) once it is older than the retention and no evidence.
  On SQLite this copies the table once (Alembic's batch mode); elsewhere it is one ALTER.
- ``observations(fetched_at, id)`` and ``notifications(received_at, id)``: retention walks the
  rows still holding a raw body, oldest first, in batches. On SQLite and PostgreSQL the indexes
  are partial (``raw``/``body IS NOT NULL``), so a night walks only the bodies it may drop and
  those kept as evidence, not every row ever stored (docs/scaling.md, "Retention").

Re-runnable: each step looks at the database first (a store upgraded by hand, or a branch that
already applied it under another revision number).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.types import LongText

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEXES = (
    ("ix_observations_fetched_at_id", "observations", ["fetched_at", "id"], "raw IS NOT NULL"),
    ("ix_notifications_received_at_id", "notifications", ["received_at", "id"], "body IS NOT NULL"),
)


def _index_names(table: str) -> set[str]:
    return {str(ix["name"]) for ix in sa.inspect(op.get_bind()).get_indexes(table)}


def _body_nullable() -> bool:
    columns = sa.inspect(op.get_bind()).get_columns("notifications")
    return bool(next(c for c in columns if c["name"] == "body")["nullable"])


def _resume_table_copy(table: str) -> None:
    """Finish or discard SQLite's table copy (batch mode) that an earlier upgrade left half-way:
    a copy beside the table is discarded (the table is whole); a copy without it (stopped between
    the drop and the rename) becomes the table, and its indexes are made again below."""
    tmp = f"_alembic_tmp_{table}"
    names = set(sa.inspect(op.get_bind()).get_table_names())
    if tmp in names and table in names:
        op.drop_table(tmp)
    elif tmp in names:
        op.rename_table(tmp, table)


def _ensure_table_indexes(table: str) -> None:
    """Every index recon's schema gives ``table`` (a copy renamed half-way has none)."""
    from recon.store.tables import metadata

    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}
    for index in metadata.tables[table].indexes:
        # An index on a column a later revision adds is that revision's to make.
        if not {c.name for c in index.columns} <= present:
            continue
        if index.name is not None and index.name not in _index_names(table):
            index.create(op.get_bind())


def upgrade() -> None:
    # The column first: SQLite's batch mode rebuilds the table, and the partial index after it.
    _resume_table_copy("notifications")
    if not _body_nullable():
        with op.batch_alter_table("notifications") as batch:
            batch.alter_column("body", existing_type=LongText, nullable=True)
    _ensure_table_indexes("notifications")
    for name, table, columns, where in _INDEXES:
        if name not in _index_names(table):
            op.create_index(
                name,
                table,
                columns,
                sqlite_where=sa.text(where),
                postgresql_where=sa.text(where),
            )


def downgrade() -> None:
    for name, table, _columns, _where in _INDEXES:
        if name in _index_names(table):
            op.drop_index(name, table)
    # A body dropped by retention cannot come back: those rows keep an empty body.
    notifications = sa.table("notifications", sa.column("body", LongText))
    op.execute(notifications.update().where(notifications.c.body.is_(None)).values(body=""))
    with op.batch_alter_table("notifications") as batch:
        batch.alter_column("body", existing_type=LongText, nullable=False)
