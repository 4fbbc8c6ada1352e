"""Migration steps that can run again: each looks at the schema before it changes it.

MariaDB commits every schema change at once (an implicit commit before and after each ``CREATE``,
``ALTER`` and ``DROP``), so an upgrade killed part-way (a deploy restart, the OOM killer) keeps
the changes made so far but not the version stamp of the revision they belong to. The next
``recon db upgrade`` then runs that revision again from its first step. Every step of every
migration in ``sql/migrations/versions`` is therefore one of these helpers, which skip what is
already there, or a data change written to be run twice (an ``UPDATE`` that sets a value, an
``INSERT`` of only the rows not yet there). On PostgreSQL and SQLite schema changes are
transactional and a kill leaves nothing half-done; the helpers cost one catalogue query a step.

Use them inside a migration's ``upgrade()`` (or ``downgrade()``), instead of ``op.create_table``,
``op.add_column``, ``op.create_index`` and their ``drop_`` counterparts::

    from recon.store.migrate_steps import add_column_if_missing, create_index_if_missing

    def upgrade() -> None:
        add_column_if_missing("payouts", sa.Column("next_check_at", UTCDateTime))
        create_index_if_missing("ix_payouts_next_check_at", "payouts", ["next_check_at"])

A step that finds something in its way that it did not make (a table without the columns it
would have created, an index of its name on other columns) stops the upgrade with
:class:`~recon.errors.SchemaConflict`, naming it and what to do: a kill never leaves that (each
``CREATE TABLE`` and ``CREATE INDEX`` is atomic), so it is someone else's, and not recon's to drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine.reflection import Inspector

from recon.errors import SchemaConflict

__all__ = [
    "add_column_if_missing",
    "create_index_if_missing",
    "create_table_if_missing",
    "drop_column_if_present",
    "drop_index_if_present",
    "drop_table_if_present",
]


def _inspector() -> Inspector:
    # A new inspector per step: one kept across steps would answer from its cache.
    return sa.inspect(op.get_bind())


def create_table_if_missing(name: str, *items: sa.schema.SchemaItem, **kwargs: Any) -> bool:
    """``op.create_table(name, *items, **kwargs)`` unless the table exists; whether it created it.

    An existing table must have every column listed here (it may have more, added by later
    revisions); otherwise :class:`~recon.errors.SchemaConflict`. Indexes are separate steps
    (:func:`create_index_if_missing`), so that each can be skipped on its own.
    """
    inspector = _inspector()
    if not inspector.has_table(name):
        op.create_table(name, *items, **kwargs)
        return True
    wanted = [item.name for item in items if isinstance(item, sa.Column)]
    present = {column["name"] for column in inspector.get_columns(name)}
    missing = [column for column in wanted if column not in present]
    if missing:
        raise SchemaConflict(
            f"table {name} is in the way of recon's schema upgrade: it exists but lacks the"
            f" column{'s' if len(missing) > 1 else ''} {', '.join(missing)} that recon creates"
            " it with, so recon did not make it (a table recon creates is created whole even"
            " when the upgrade is killed), and left it as it is. If it is an older copy of"
            f" recon's own {name}, or a table of another program in recon's database, rename it"
            " (or save its rows and drop it), then run `recon db upgrade` again."
        )
    return False


def add_column_if_missing(table: str, column: sa.Column[Any]) -> bool:
    """``op.add_column(table, column)`` unless the table has a column of that name; whether it
    added it. (SQLite adds a column in place: no batch copy of the table.)"""
    present = {c["name"] for c in _inspector().get_columns(table)}
    if column.name in present:
        return False
    op.add_column(table, column)
    return True


def create_index_if_missing(name: str, table: str, columns: Sequence[str], **kwargs: Any) -> bool:
    """``op.create_index(name, table, columns, **kwargs)`` unless the index exists; whether it
    created it. An index of that name on other columns is a :class:`~recon.errors.SchemaConflict`
    (it is not recon's: recon never renames an index)."""
    found = _index(table, name)
    if found is None:
        op.create_index(name, table, list(columns), **kwargs)
        return True
    if list(found["column_names"]) != list(columns):
        have = ", ".join(str(c) for c in found["column_names"])
        raise SchemaConflict(
            f"index {name} on {table} is in the way of recon's schema upgrade: it is on"
            f" ({have}) where recon creates it on ({', '.join(columns)}), so recon did not make"
            " it, and left it as it is. Drop that index (it holds no data; recon creates its own"
            " in its place), then run `recon db upgrade` again."
        )
    return False


def drop_index_if_present(name: str, table: str) -> bool:
    """``op.drop_index(name, table)`` if the index exists; whether it dropped it."""
    if _index(table, name) is None:
        return False
    op.drop_index(name, table)
    return True


def drop_column_if_present(table: str, column: str) -> bool:
    """Drop ``column`` from ``table`` if it is there (in batch mode, which SQLite needs); whether
    it dropped it."""
    if column not in {c["name"] for c in _inspector().get_columns(table)}:
        return False
    with op.batch_alter_table(table) as batch:
        batch.drop_column(column)
    return True


def drop_table_if_present(name: str) -> bool:
    """``op.drop_table(name)`` if the table exists; whether it dropped it."""
    if not _inspector().has_table(name):
        return False
    op.drop_table(name)
    return True


def _index(table: str, name: str) -> Any:
    return next((ix for ix in _inspector().get_indexes(table) if ix["name"] == name), None)
