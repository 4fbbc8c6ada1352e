"""The schema's migrations: Alembic on the bundled ``sql/migrations``.

Apart from :mod:`recon.store.db` because Alembic and its script directory cost a part of every
start-up (BENCHMARKS.md, "CPU per payout"), and a store whose schema is current, every night
but the first after an upgrade, needs none of it: :func:`recon.store.db.ensure_schema` reads the
version row itself and comes here only when there is something to migrate.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine

from recon.resources import sql_dir
from recon.store.tables import VERSION_TABLE


def alembic_config() -> Config:
    """Alembic's configuration, built in code from the bundled ``sql/migrations``."""
    config = Config()
    config.set_main_option("script_location", str(sql_dir() / "migrations"))
    config.set_main_option("path_separator", "os")
    config.attributes["version_table"] = VERSION_TABLE
    return config


def migrate(conn: Connection) -> None:
    """Upgrade the schema to the newest revision on ``conn`` (in the caller's transaction)."""
    config = alembic_config()
    config.attributes["connection"] = conn
    command.upgrade(config, "head")


def current_revision(engine: Engine) -> str | None:
    """The schema revision the database is at (``None``: empty)."""
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def head_revision() -> str | None:
    """The newest revision shipped with this version of recon."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def is_known_revision(revision: str) -> bool:
    """Whether ``revision`` is one of the migrations this recon ships."""
    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False
