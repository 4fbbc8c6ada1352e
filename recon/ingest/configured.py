"""The payouts import a nightly run starts with: ``RECON_IMPORT_FILE``, or ``RECON_IMPORT_SQL``
run against ``RECON_IMPORT_SOURCE_URL``, done as ``recon import payouts`` does it.

All or nothing, like every import: a bad row, a missing file or a source that cannot be read
leaves the store as it was, and fails the night (:class:`~recon.errors.ImportFailed`) before the
provider is asked, so it is named, stored, mailed and counted like any other failed night.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from recon.errors import ImportFailed, ReconError
from recon.settings import Settings

if TYPE_CHECKING:
    from recon.ingest.payouts import ImportResult

# The night's progress logger: its lines are always shown, so the cron log says what came in.
log = logging.getLogger("recon.progress")


def import_configured(settings: Settings, engine: Engine) -> ImportResult | None:
    """Import what the settings name into ``engine``'s store; None when they name nothing."""
    if settings.import_file is None and settings.import_sql is None:
        return None
    try:
        result = _import(settings, engine)
    except ReconError as exc:
        raise ImportFailed(f"the payouts import failed and changed nothing: {exc}") from exc
    log.info("%s", result.summary())
    return result


def _import(settings: Settings, engine: Engine) -> ImportResult:
    # The importers (CSV, workbook and SQL readers) load only on a night that imports.
    from recon.ingest.accounts import ImportAccounts
    from recon.ingest.payouts import import_payouts_csv, import_payouts_sql, read_query

    # Several accounts' records come in one input: each row names its account.
    accounts = ImportAccounts.of(settings)
    if settings.import_sql is None:
        assert settings.import_file is not None
        return import_payouts_csv(
            engine, settings.import_file, zone=settings.zone, accounts=accounts
        )
    query = read_query(settings.import_sql)
    return import_payouts_sql(
        engine, query, settings.import_source_url or "", zone=settings.zone, accounts=accounts
    )
