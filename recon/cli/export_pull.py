"""``recon provider-export pull``: the provider's export pulled and stored, per account and day."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import click

from recon.cli.app import accounts_option, command, say
from recon.cli.exports import days_in_order, provider_export_group
from recon.clitypes import DATE
from recon.constants import ExitCode
from recon.export_rows import days
from recon.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Engine


@command(
    provider_export_group, "pull", store="current", accounts=("accounts",), first=days_in_order
)
@click.option("--settled-from", type=DATE, help="The first settlement day to pull.")
@click.option("--settled-to", type=DATE, help="The last settlement day to pull (inclusive).")
@accounts_option("export")
def provider_export_pull(
    settings: Settings,
    engine: Engine,
    settled_from: date | None,
    settled_to: date | None,
    accounts: tuple[str, ...],
) -> int:
    """Ask the provider for its transaction export per account and settlement day, wait for each
    task, download each file and store it with its rows.

    Days are calendar days in RECON_TIMEZONE. Without --settled-from/--settled-to: the days
    since the last one pulled, with RECON_EXPORT_LOOKBACK_DAYS before it, through yesterday. A
    file of exactly RECON_EXPORT_ROW_CAP rows is split and pulled again. A task that fails or a
    file that expired leaves its day missing: the other days go on, and the days missing are
    named. Exit 0 when every day was pulled whole, 3 when a day is missing.
    """
    from recon.night.export_pull import pull

    asked = days(settled_from, settled_to) if settled_from and settled_to else None
    missing = 0
    for account in settings.select_accounts(accounts):
        result = pull(settings, engine, account, asked)
        for line in result.lines():
            say(line)
        missing += len(result.missing)
    if missing:
        say(f"recon: {missing} settlement day(s) missing: pull them again (exit 3)")
        return ExitCode.INCOMPLETE
    return ExitCode.OK
