"""The schema's one ``MetaData``, with predictable constraint names, and what every table module
shares (:mod:`recon.store.tables`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import MetaData

# Predictable constraint names, so later migrations can drop or alter them on every database.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

# Every table's options on MySQL/MariaDB: transactions, and text that holds any character.
MYSQL_OPTS: dict[str, Any] = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}

# The provider account a row belongs to (0018): every key holding a provider id starts with it.
ACCOUNT_COLUMN = "provider_account"
