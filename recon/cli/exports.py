"""The provider's transaction export: ``recon provider-export check``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from recon.cli.app import command, main, say
from recon.constants import ExitCode
from recon.settings import Settings


def days_in_order(settled_from: date | None, settled_to: date | None, **_others: object) -> None:
    """--settled-from and --settled-to both or neither, the first on or before the second (a
    usage error, before the settings and the store)."""
    if (settled_from is None) != (settled_to is None):
        raise click.UsageError(
            "--settled-from and --settled-to go together (or neither: the default)"
        )
    if settled_from is not None and settled_to is not None and settled_from > settled_to:
        raise click.UsageError(
            f"--settled-from {settled_from:%Y-%m-%d} is after --settled-to {settled_to:%Y-%m-%d}"
        )


@main.group("provider-export")
def provider_export_group() -> None:
    """The provider's transaction export: its files, read through the [export] mapping."""


@command(provider_export_group, "check")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--account",
    metavar="NAME",
    help="The provider account the file is of (checked to be configured; default: any).",
)
def provider_export_check(settings: Settings, file: Path, account: str | None) -> int:
    """Show what the [export] mapping makes of FILE, storing nothing.

    Prints the headers matched and those left over, the count and sum per type and currency,
    the rows it cannot read with their line and reason, and the first rows as read. Exit 0 when
    every row reads; 2 when the file is refused (shaped unlike the mapping) or has rows it
    cannot read.
    """
    from recon.ingest.provider_export import check_lines, read_export
    from recon.ingest.sentfile import open_regular

    if account is not None:
        settings.select_accounts([account])
    with open_regular(file) as handle:
        data = handle.read()
    export = read_export(data, settings.export, source=str(file))
    whose = f" (account {account})" if account is not None else ""
    say(f"recon: provider-export check {file}{whose}: {len(export.headers)} headers")
    for line in check_lines(export):
        say(line)
    if export.problems:
        say(
            f"recon: {len(export.problems)} row(s) cannot be read: an import would refuse "
            "this file (exit 2)"
        )
        return ExitCode.USAGE
    say(f"recon: every row reads ({len(export.rows)} rows)")
    return ExitCode.OK
