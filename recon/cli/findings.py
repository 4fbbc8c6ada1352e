"""A person's side: ``recon exceptions`` (the queue and its actions) and ``recon show``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import click

from recon.cli.app import accounts_option, command, main, say
from recon.clitypes import DATE, KindChoice
from recon.constants import CaseAction, CaseState
from recon.settings import Settings


@main.group("exceptions")
def exceptions_group() -> None:
    """Work the exception queue: list, acknowledge, resolve, snooze, reopen, apply a file.

    Every exception has an id (E12-3: found by run 12) that stays while its finding stands.
    A person's actions are recorded with who, when, what and the note, and never rewritten.
    """


@command(exceptions_group, "list")
@click.option(
    "--status",
    "states",
    multiple=True,
    type=click.Choice([s.value for s in CaseState]),
    help="Only these (repeatable). Default: open, acknowledged and snoozed.",
)
@click.option(
    "--exception",
    "flags",
    multiple=True,
    type=KindChoice(),
    help="Only this exception name (repeatable).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@accounts_option("exceptions")
def exceptions_list(
    settings: Settings,
    states: tuple[str, ...],
    flags: tuple[str, ...],
    fmt: str,
    accounts: tuple[str, ...],
) -> None:
    """The exceptions, newest first."""
    from recon.ops.findings import list_text

    asked = {a.name for a in settings.select_accounts(accounts)} if accounts else None
    url, zone = settings.database_url, settings.zone
    click.echo(list_text(url, states=states, flags=flags, fmt=fmt, zone=zone, accounts=asked))


def _act_command(name: str, action: CaseAction, summary: str) -> None:
    @command(exceptions_group, name, help=summary)
    @click.argument("ids", nargs=-1, required=True)
    @click.option("--note", required=action != CaseAction.REOPEN, help="Why (kept in the history).")
    @click.option("--by", help="Who (default: the operating-system user).")
    @click.option(
        "--until",
        type=DATE,
        required=action == CaseAction.SNOOZE,
        help="The date it comes back to Needs action (snooze only), in RECON_TIMEZONE.",
    )
    def act(
        settings: Settings,
        ids: tuple[str, ...],
        note: str | None,
        by: str | None,
        until: date | None,
    ) -> None:
        from recon.decision import ActionRequest
        from recon.ops.findings import applied_lines, default_by, perform, until_of

        who = by or default_by()
        end = until_of(until, settings.zone) if until is not None else None
        requests = [ActionRequest(i, action, note, who, end) for i in ids]
        applied = perform(
            settings.database_url, requests, now=datetime.now(UTC), source="command line"
        )
        for line in applied_lines(applied):
            say(f"recon: {line}")


_act_command(
    "ack", CaseAction.ACKNOWLEDGE, "Acknowledge: someone owns it; not counted as needing action."
)
_act_command(
    "resolve",
    CaseAction.RESOLVE,
    "Resolve: closed by a person, with a reason; gone from the report.",
)
_act_command("snooze", CaseAction.SNOOZE, "Snooze until a date: back in Needs action on that date.")
_act_command("reopen", CaseAction.REOPEN, "Reopen: back in Needs action.")


@command(exceptions_group, "apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--by", help="Who runs it (default: the OS user); a `by` column is kept as who decided."
)
def exceptions_apply(settings: Settings, file: Path, by: str | None) -> None:
    """Apply the resolutions filled in a CSV or workbook (exception_id, resolution, note, by,
    until; other columns ignored): report.xlsx or exceptions.csv as mailed. All rows or none."""
    from recon.ops.findings import applied_lines, default_by, perform, requests_from_file

    now = datetime.now(UTC)
    requests = requests_from_file(
        file,
        by=by or default_by(),
        zone=settings.zone,
        today=now.astimezone(settings.zone).date(),
        max_bytes=settings.apply_max_bytes,
    )
    if not requests:
        say(f"recon: {file}: no row has a resolution; nothing to apply")
        return
    applied = perform(settings.database_url, requests, now=now, source=str(file.name))
    for line in applied_lines(applied):
        say(f"recon: {line}")


@command(exceptions_group, "history")
@click.argument("exception_id")
def exceptions_history(settings: Settings, exception_id: str) -> None:
    """One exception: each run that reported it and every action on it."""
    from recon.ops.findings import history_text

    click.echo(history_text(settings.database_url, exception_id, zone=settings.zone))


# An id is opaque: one that starts with "-" is an id, not an option ("--" works too).
@command(main, "show", context_settings={"ignore_unknown_options": True})
@click.argument("payout_id", metavar="ID_OR_REFERENCE")
def show_command(settings: Settings, payout_id: str) -> None:
    """One payout by transaction id, merchant_reference or return id: record, answers, changes.

    Looked up in every provider account; with several, the account it is in is named."""
    from recon.ops.show import show_text

    accounts = [a.name for a in settings.provider_accounts]
    click.echo(show_text(settings.database_url, payout_id, zone=settings.zone, accounts=accounts))


@command(main, "fees")
@click.option("--month", required=True, help="The month, YYYY-MM (payouts created in it).")
@accounts_option("fees")
def fees_command(settings: Settings, month: str, accounts: tuple[str, ...]) -> None:
    """What the month's payouts cost: fees charged and agreed, per account and currency."""
    from recon.ops.fees import fees_text

    names = [a.name for a in settings.select_accounts(accounts)]
    click.echo(fees_text(settings.database_url, month, accounts=names, zone=settings.zone))
