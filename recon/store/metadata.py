"""The schema's one ``MetaData``, with predictable constraint names (:mod:`recon.store.tables`)."""

from __future__ import annotations

from sqlalchemy import MetaData

# Predictable constraint names, so later migrations can drop or alter them on every database.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)
