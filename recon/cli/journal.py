"""The books: ``recon journal export``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from recon.cli.app import command, main, say
from recon.constants import MAX_NUMBER
from recon.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

FORMATS = ("csv", "xero", "sie")


@main.group("journal")
def journal_group() -> None:
    """The journal: double-entry entries of the money recon proves, for the ledger."""


def _batch_alone(batch: int | None, fmt: str | None, account: str | None, **_: object) -> None:
    """--batch writes a batch as it was exported: its format and account are recorded."""
    if batch is not None and (fmt is not None or account is not None):
        raise click.UsageError(
            "--batch N writes batch N again as it was exported (its format and account are "
            "recorded): give it without --format and --account"
        )


@command(journal_group, "export", store="current", accounts=("account",), first=_batch_alone)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="csv (one row per line), xero (Xero's manual journal import), sie (SIE 4, the "
    "Swedish ledgers' import). Default: csv.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Directory to write the batch's files into (default: $RECON_OUT_DIR, else ./out).",
)
@click.option(
    "--account",
    metavar="NAME",
    help="Only this provider account's lines (default: every account's).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, MAX_NUMBER),
    metavar="N",
    help="Write batch N's files again, byte for byte, instead of exporting new lines.",
)
def journal_export(
    settings: Settings,
    engine: Engine,
    fmt: str | None,
    out_dir: Path | None,
    account: str | None,
    batch: int | None,
) -> None:
    """Export every journal line not exported yet as the next numbered batch.

    Each entry must balance per currency and each fee must credit the provider balance, or
    nothing is written (exit 3, lines starting journal_unbalanced:). A line is in one batch
    only: a second export writes only what is new. Beside the files, a manifest
    (journal-batch-N-manifest.json) gives the batch's totals per currency and each file's
    sha256.
    """
    from recon.report.journal_export import export_journal, rewrite_batch
    from recon.report.journal_files import JournalFormat

    target = out_dir or settings.out_dir
    mode = settings.report_mode
    if batch is not None:
        done = rewrite_batch(engine, target, batch, mode=mode)
        say(f"recon: journal batch {batch} ({done.format}) written again: {done.lines} lines")
    else:
        done = export_journal(
            settings, engine, target, fmt=JournalFormat(fmt or "csv"), account=account, mode=mode
        )
        if done.batch is None:
            whose = f"of account {account} " if account is not None else ""
            say(f"recon: journal: nothing to export (every line {whose}is in a batch)")
            return
        say(
            f"recon: journal batch {done.batch} ({done.format}): {done.lines} lines, "
            f"{done.entries} entries"
        )
    for path in done.paths:
        say(f"  {path.resolve()}")
