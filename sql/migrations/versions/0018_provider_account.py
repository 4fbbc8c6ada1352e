"""The provider account on every key: one store holds several merchants' accounts.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28

- ``provider_account`` (``String(32)``, NOT NULL, default ``'default'``) on every table holding
  the provider's or a run's data: runs, payouts, observations, notifications, outcome_history,
  record_changes, run_exceptions, exception_cases, run_returns, provider_items and
  creation_attempts. Every row already stored is the ``default`` account's.
- Every key holding a provider id is composite with it, the account first: the primary keys of
  payouts and provider_items ``(provider_account, transaction_id)``, of run_exceptions
  ``(run_id, provider_account, item_kind, item_id, flag)`` and of run_returns
  ``(run_id, provider_account, return_id)``; notifications' unique ``(provider_account,
  dedupe_key)``; the foreign keys of outcome_history and record_changes to payouts; and the
  indexes the lookups by id use. The same transaction id under two accounts is two payouts.

PostgreSQL and MariaDB change the keys in place (a foreign key to payouts is dropped before its
primary key changes, and made again after). SQLite cannot change a key in place: the seven tables
whose keys change are renamed aside, made again as recon.store.tables describes them, filled from
the renamed ones and the renamed ones dropped, parents before children so that every foreign key
holds at every statement (SQLite keeps its foreign keys on in a transaction).

Re-runnable: every step looks at the schema first; SQLite's copy resumes from where a stop left it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.migrate_steps import (
    add_column_if_missing,
    create_index_if_missing,
    drop_column_if_present,
    drop_index_if_present,
)

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACCOUNT = "provider_account"

_TABLES = (
    "runs",
    "payouts",
    "observations",
    "notifications",
    "outcome_history",
    "record_changes",
    "run_exceptions",
    "exception_cases",
    "run_returns",
    "provider_items",
    "creation_attempts",
)

# Primary keys that become composite: (table, columns before, columns after).
_PRIMARY_KEYS = (
    ("payouts", ("transaction_id",), (ACCOUNT, "transaction_id")),
    ("provider_items", ("transaction_id",), (ACCOUNT, "transaction_id")),
    (
        "run_exceptions",
        ("run_id", "item_kind", "item_id", "flag"),
        ("run_id", ACCOUNT, "item_kind", "item_id", "flag"),
    ),
    ("run_returns", ("run_id", "return_id"), ("run_id", ACCOUNT, "return_id")),
)

# The foreign keys to a payout: (table, name before, name after).
_PAYOUT_KEYS = (
    (
        "outcome_history",
        "fk_outcome_history_transaction_id_payouts",
        "fk_outcome_history_provider_account_payouts",
    ),
    (
        "record_changes",
        "fk_record_changes_transaction_id_payouts",
        "fk_record_changes_provider_account_payouts",
    ),
)

_UNIQUE = (
    "notifications",
    "uq_notifications_dedupe_key",
    "uq_notifications_provider_account_dedupe_key",
    (ACCOUNT, "dedupe_key"),
)

# Lookup indexes by id: (table, name before, columns before, name after).
_INDEXES = (
    ("payouts", "ix_payouts_merchant_reference", ("merchant_reference",)),
    ("observations", "ix_observations_transaction_id_fetched_at", ("transaction_id", "fetched_at")),
    ("notifications", "ix_notifications_original_transaction_id", ("original_transaction_id",)),
    ("notifications", "ix_notifications_transaction_id", ("transaction_id",)),
    ("outcome_history", "ix_outcome_history_transaction_id", ("transaction_id",)),
    ("record_changes", "ix_record_changes_transaction_id", ("transaction_id",)),
    (
        "exception_cases",
        "ix_exception_cases_item_kind_item_id_flag",
        ("item_kind", "item_id", "flag"),
    ),
    ("creation_attempts", "ix_creation_attempts_merchant_reference", ("merchant_reference",)),
)

# SQLite copies these (their keys change), parents first.
_SQLITE_COPIED = (
    "payouts",
    "outcome_history",
    "record_changes",
    "notifications",
    "run_exceptions",
    "run_returns",
    "provider_items",
)


def _composite_name(table: str, columns: Sequence[str]) -> str:
    return f"ix_{table}_{ACCOUNT}_{'_'.join(columns)}"


def _account_column() -> sa.Column[str]:
    return sa.Column(ACCOUNT, sa.String(32), nullable=False, server_default="default")


def _inspector() -> sa.engine.reflection.Inspector:
    return sa.inspect(op.get_bind())


def upgrade() -> None:
    names = set(_inspector().get_table_names())
    for table in _TABLES:
        if table in names:  # else SQLite's copy of it was stopped: its old rows have the column
            add_column_if_missing(table, _account_column())
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_copy_tables()
    else:
        _rekey_in_place()
    for table, old, columns in _INDEXES:
        create_index_if_missing(_composite_name(table, columns), table, [ACCOUNT, *columns])
        drop_index_if_present(old, table)
    if op.get_bind().dialect.name != "sqlite":
        for table, _old, new in _PAYOUT_KEYS:
            if new not in {fk["name"] for fk in _inspector().get_foreign_keys(table)}:
                op.create_foreign_key(
                    new,
                    table,
                    "payouts",
                    [ACCOUNT, "transaction_id"],
                    [ACCOUNT, "transaction_id"],
                )


def _rekey_in_place() -> None:
    """PostgreSQL and MariaDB: each key changes in one ``ALTER TABLE``."""
    for table, old, _new in _PAYOUT_KEYS:  # a primary key a foreign key uses cannot change
        if old in {fk["name"] for fk in _inspector().get_foreign_keys(table)}:
            op.drop_constraint(old, table, type_="foreignkey")
        drop_index_if_present(old, table)  # the index MariaDB made for it, if it did
    mysql = op.get_bind().dialect.name in ("mysql", "mariadb")
    for table, _before, after in _PRIMARY_KEYS:
        have = _inspector().get_pk_constraint(table)["constrained_columns"]
        if list(have) == list(after):
            continue
        drop = "DROP PRIMARY KEY" if mysql else f"DROP CONSTRAINT pk_{table}"
        # One statement, so a stop never leaves the table without its key.
        op.execute(
            f"ALTER TABLE {table} {drop}, ADD CONSTRAINT pk_{table} PRIMARY KEY"
            f" ({', '.join(after)})"
        )
    table, old, new, columns = _UNIQUE
    uniques = {uq["name"] for uq in _inspector().get_unique_constraints(table)}
    if new not in uniques:
        op.create_unique_constraint(new, table, list(columns))
    if old in uniques:
        op.drop_constraint(old, table, type_="unique")


def _has_account_key(table: str) -> bool:
    inspector = _inspector()
    if table in ("outcome_history", "record_changes"):
        return any(ACCOUNT in fk["constrained_columns"] for fk in inspector.get_foreign_keys(table))
    if table == "notifications":
        return any(
            ACCOUNT in uq["column_names"] for uq in inspector.get_unique_constraints(table)
        )
    return ACCOUNT in inspector.get_pk_constraint(table)["constrained_columns"]


def _sqlite_copy_tables() -> None:
    """Each table renamed to ``_old_<name>``, made again as recon.store.tables has it, filled,
    and the old one dropped once every copy is filled (children first). Resumes from any stop:
    a copy begun but not finished (an ``_old_`` table of every copied one still there) is made
    again; once an ``_old_`` table is gone, only the dropping of the others is left."""
    from recon.store.tables import metadata

    bind = op.get_bind()
    names = set(_inspector().get_table_names())
    olds = [t for t in _SQLITE_COPIED if f"_old_{t}" in names]
    dropping = bool(olds) and len(olds) < len(_SQLITE_COPIED) and all(
        t in olds or _has_account_key(t) for t in _SQLITE_COPIED
    )
    if not dropping:
        for table in reversed(_SQLITE_COPIED):  # a copy begun: made again from the old rows
            if table in olds and table in names:
                op.drop_table(table)
        for table in _SQLITE_COPIED:
            if table in olds or _has_account_key(table):
                continue
            op.rename_table(table, f"_old_{table}")
        for table in _SQLITE_COPIED:
            if f"_old_{table}" not in set(_inspector().get_table_names()):
                continue
            for index in _inspector().get_indexes(f"_old_{table}"):  # their names are the copy's
                op.drop_index(str(index["name"]), f"_old_{table}")
            new = metadata.tables[table]
            new.create(bind)
            old_columns = {c["name"] for c in _inspector().get_columns(f"_old_{table}")}
            columns = ", ".join(c.name for c in new.columns if c.name in old_columns)
            op.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _old_{table}")
    for table in reversed(_SQLITE_COPIED):
        if f"_old_{table}" in set(_inspector().get_table_names()):
            op.drop_table(f"_old_{table}")


def downgrade() -> None:
    # Only a store holding the default account alone can go back: keys of one id per account.
    if op.get_bind().dialect.name == "sqlite":
        raise NotImplementedError("revision 0018 is not undone on SQLite: restore a backup")
    for table, _old, new in _PAYOUT_KEYS:
        if new in {fk["name"] for fk in _inspector().get_foreign_keys(table)}:
            op.drop_constraint(new, table, type_="foreignkey")
    for table, old, columns in _INDEXES:
        create_index_if_missing(old, table, list(columns))
        drop_index_if_present(_composite_name(table, columns), table)
    mysql = op.get_bind().dialect.name in ("mysql", "mariadb")
    for table, before, _after in _PRIMARY_KEYS:
        drop = "DROP PRIMARY KEY" if mysql else f"DROP CONSTRAINT pk_{table}"
        op.execute(
            f"ALTER TABLE {table} {drop}, ADD CONSTRAINT pk_{table} PRIMARY KEY"
            f" ({', '.join(before)})"
        )
    table, old, new, columns = _UNIQUE
    op.create_unique_constraint(old, table, list(columns[1:]))
    op.drop_constraint(new, table, type_="unique")
    for table, old, _new in _PAYOUT_KEYS:
        op.create_foreign_key(old, table, "payouts", ["transaction_id"], ["transaction_id"])
    for table in reversed(_TABLES):
        drop_column_if_present(table, ACCOUNT)
