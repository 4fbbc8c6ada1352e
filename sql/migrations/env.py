"""Alembic environment for recon: online only, on the connection ``recon.store.db.upgrade`` opened.

recon builds Alembic's configuration in code (``recon.store.migrate.alembic_config``), so this
runs the same from a checkout and from an installed wheel. Use ``recon db upgrade``, not the
alembic command.
"""

from __future__ import annotations

from alembic import context

from recon.store.tables import metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None or context.is_offline_mode():
    raise RuntimeError("recon's migrations run through `recon db upgrade` (recon.store.db.upgrade)")

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=config.attributes.get("version_table", "recon_alembic_version"),
    # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
