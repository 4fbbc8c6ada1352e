"""Data in and out of recon's database: ``recon db``, ``recon import``, ``recon export``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from recon.cli.app import accounts_option, command, main, say, scrubber
from recon.cli.exports import days_in_order
from recon.clitypes import DATE
from recon.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


@main.group("db")
def db_group() -> None:
    """recon's own database (RECON_DATABASE_URL)."""


@command(db_group, "upgrade", store="as is")
def db_upgrade(settings: Settings, engine: Engine) -> None:
    """Create the schema or upgrade it to this version of recon; a second run changes nothing."""
    from recon.store.db import safe_url, upgrade
    from recon.store.migrate import current_revision

    upgrade(engine)
    click.echo(f"{safe_url(engine.url)}: schema at revision {current_revision(engine)}")


@command(db_group, "prune")
@click.option("--dry-run", is_flag=True, help="Say what a prune would drop; change nothing.")
def db_prune(settings: Settings, dry_run: bool) -> None:
    """Drop raw provider answers and notification bodies older than RECON_KEEP_RAW_DAYS.

    Kept: evidence of a finding still open or of a return, and every parsed field. Each nightly
    run does the same at its end; this command takes the run lock (exit 4 while a run holds it).
    """
    from recon.night.prune import prune_store

    now = datetime.now(UTC)
    click.echo(
        prune_store(
            settings.database_url, now=now, keep_days=settings.keep_raw_days, dry_run=dry_run
        )
    )


@main.group("import")
def import_group() -> None:
    """Import the merchant's records into recon's database (all rows of an input, or none)."""


def _one_source(
    file: Path | None, sql_file: Path | None, source_url: str | None, **_others: object
) -> None:
    """FILE or --sql, not both; --sql with its --source-url (usage errors, before the settings)."""
    if (file is None) == (sql_file is None):
        raise click.UsageError("give either FILE or --sql QUERY.sql (with --source-url)")
    if sql_file is not None and not source_url:
        raise click.UsageError("--sql needs --source-url (or $RECON_SOURCE_URL)")


@command(import_group, "payouts", store="as is", accounts=("account",), first=_one_source)
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--sql",
    "sql_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="File holding one SELECT to run read-only against --source-url, instead of FILE.",
)
@click.option(
    "--source-url",
    envvar="RECON_SOURCE_URL",
    help="SQLAlchemy URL of the merchant's database for --sql (or $RECON_SOURCE_URL, which "
    "keeps a password out of the process list).",
)
@click.option(
    "--account",
    metavar="NAME",
    help="The provider account of rows without a provider_account column or cell (default: the "
    "one account, when only one is configured).",
)
def import_payouts(
    settings: Settings,
    engine: Engine,
    file: Path | None,
    sql_file: Path | None,
    source_url: str | None,
    account: str | None,
) -> None:
    """Import payouts from FILE (CSV with a header line) or from a query (--sql, --source-url).

    Columns: transaction_id, merchant_reference, amount, currency (required); bank_account_id,
    customer_id, country_id, created, eta, provider_account (optional). Existing payouts are
    updated by provider_account and transaction_id. With several accounts configured, each row
    names its account (provider_account) or --account names the file's. Any bad row rejects the
    whole input (exit code 2) with every problem listed.
    """
    from recon.ingest.accounts import ImportAccounts
    from recon.ingest.payouts import import_payouts_csv, import_payouts_sql, read_query

    scrubber().add_url(source_url)
    accounts = ImportAccounts.of(settings, account)
    if sql_file is not None:
        query = read_query(sql_file)
        result = import_payouts_sql(
            engine, query, source_url or "", zone=settings.zone, accounts=accounts
        )
    else:
        assert file is not None
        result = import_payouts_csv(engine, file, zone=settings.zone, accounts=accounts)
    if result.ignored_columns:
        names = ", ".join(result.ignored_columns)
        click.echo(f"recon: note: ignoring columns recon does not use: {names}", err=True)
    click.echo(result.summary())


@command(import_group, "notifications", store="as is", accounts=("account",))
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--account",
    metavar="NAME",
    help="The provider account whose callbacks the file holds (needed when several are "
    "configured).",
)
def import_notifications(
    settings: Settings, engine: Engine, file: Path, account: str | None
) -> None:
    """Import provider notification bodies from FILE (JSON Lines: one body per line).

    Blank lines are ignored. Bodies are read as the receiver reads them: a JSON object recon cannot
    read as a notification is stored with its reason. A line that is not a JSON object rejects the
    whole file (exit code 2) with every such line listed. A body already stored, or repeated in
    the file, is stored once and counted as a duplicate. Each is stored under the account
    --account names (or the only one configured).
    """
    from recon.ingest.accounts import ImportAccounts
    from recon.ingest.notification_file import import_notifications as import_file

    owner = ImportAccounts.of(settings, account).of_file(str(file))
    click.echo(import_file(engine, file, account=owner).summary(file))


@command(
    import_group, "provider-export", store="current", accounts=("account",), first=days_in_order
)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--account",
    metavar="NAME",
    help="The provider account whose export FILE is (needed when several are configured).",
)
@click.option(
    "--settled-from",
    required=True,
    type=DATE,
    help="The first settlement day the file covers (a day in RECON_TIMEZONE).",
)
@click.option(
    "--settled-to",
    required=True,
    type=DATE,
    help="The last settlement day the file covers, included (a day in RECON_TIMEZONE).",
)
def import_provider_export(
    settings: Settings,
    engine: Engine,
    file: Path,
    account: str | None,
    settled_from: date,
    settled_to: date,
) -> None:
    """Store FILE, the provider's transaction export downloaded by hand, read through [export].

    The file is kept once (a file already stored for the account changes nothing) with its
    settlement window, from the start of --settled-from to the end of --settled-to; a row
    already stored with the same content changes nothing, a row whose content changed is
    stored as its next version. A file of exactly RECON_EXPORT_ROW_CAP rows is kept but never
    taken as complete. A file shaped unlike the mapping, or with any row that cannot be read,
    is refused with each line and reason and nothing is stored (exit code 2).
    """
    from recon.ingest.accounts import ImportAccounts
    from recon.ingest.export_import import import_export
    from recon.ingest.sentfile import open_regular
    from recon.store.export_rows import day_window

    owner = ImportAccounts.of(settings, account).of_file(str(file))
    start, end = day_window(settled_from, settled_to, settings.zone)
    with open_regular(file) as handle:
        data = handle.read()
    stored = import_export(
        engine,
        data,
        settings.export,
        account=owner,
        settled_from=start,
        settled_to=end,
        source="file",
        name=str(file),
        row_cap=settings.export_row_cap,
    )
    say(f"recon: {file}: {stored.summary(owner)}")


@main.group("export")
def export_group() -> None:
    """Export stored data in full (the reports cover the night and RECON_REPORT_DAYS)."""


@command(export_group, "payouts", store="current", times=("since",), accounts=("accounts",))
@click.option(
    "--since",
    required=True,
    help="Payouts created on or after this date or time: ISO 8601 (no offset: in RECON_TIMEZONE) "
    "or epoch seconds.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "xlsx"]),
    default="csv",
    show_default=True,
    help="File format.",
)
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: payouts-since-DATE.csv|xlsx in $RECON_OUT_DIR, else ./out).",
)
@accounts_option("payouts")
def export_payouts_command(
    settings: Settings,
    engine: Engine,
    since: datetime,
    fmt: str,
    out_file: Path | None,
    accounts: tuple[str, ...],
) -> None:
    """Every reconciled payout since --since, with payouts.csv's columns, in constant memory."""
    from recon.report.export import ExportFormat, export_payouts

    asked = {a.name for a in settings.select_accounts(accounts)} if accounts else None
    day = since.astimezone(settings.zone).strftime("%Y-%m-%d")
    path = out_file or settings.out_dir / f"payouts-since-{day}.{fmt}"
    export_payouts(
        engine,
        path,
        since=since,
        timezone=settings.timezone,
        fmt=ExportFormat(fmt),
        mode=settings.report_mode,
        accounts=asked,
    )
    say(f"recon: payouts since {since.isoformat()}: {path.resolve()}")
