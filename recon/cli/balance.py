"""The provider's balance: ``recon balance record`` and ``recon balance show``."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import click

from recon.cli.app import command, main, open_store, say
from recon.clitypes import DATE
from recon.errors import InputError
from recon.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


@main.group("balance")
def balance_group() -> None:
    """The provider balance: closings read from its back office, and the statement between them."""


def _account(settings: Settings, account: str | None) -> str:
    """The account named (it must be configured); none named: the only one there is."""
    accounts = settings.select_accounts([account] if account is not None else [])
    if account is None and len(accounts) > 1:
        names = ", ".join(a.name for a in accounts)
        raise InputError(f"--account NAME is needed: there are several accounts ({names})")
    return accounts[0].name


def _amount(currency: str, closing: str) -> tuple[str, int]:
    """The currency's code and the closing in its minor units; a usage error (exit 2) when the
    code is not ISO 4217 or the amount not exact in its digits."""
    from recon.money import normalise_currency, parse_decimal, to_minor

    try:
        code = normalise_currency(currency)
        return code, to_minor(parse_decimal(closing), code)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--closing/--currency") from None


def _checked(currency: str, closing: str, **_: object) -> None:
    _amount(currency, closing)  # before the store opens: a bad figure changes nothing


@command(balance_group, "record", first=_checked)
@click.option(
    "--date",
    "day",
    type=DATE,
    required=True,
    help="The day the balance closes (the back office's balance at the end of that day).",
)
@click.option("--currency", required=True, metavar="CUR", help="ISO 4217 code (EUR).")
@click.option(
    "--closing",
    required=True,
    metavar="AMOUNT",
    help="The closing balance, exactly in the currency's decimals (12345.67).",
)
@click.option(
    "--account",
    metavar="NAME",
    help="The provider account (default: the only one configured).",
)
@click.option("--note", metavar="TEXT", help="Where the figure was read, or why it is restated.")
def balance_record(
    settings: Settings,
    day: date,
    currency: str,
    closing: str,
    account: str | None,
    note: str | None,
) -> None:
    """Keep a closing balance read from the provider's back office.

    Never overwrites: a second figure for the same account, currency and date is kept, and
    the first is shown as restated.
    """
    from recon.money import format_minor
    from recon.ops.findings import default_by
    from recon.store.balance import record_closing

    code, minor = _amount(currency, closing)
    name = _account(settings, account)  # before the store opens: a wrong account makes none
    with open_store(settings, current=True) as engine:
        record, earlier = record_closing(
            engine,
            account=name,
            currency=code,
            day=day,
            closing_minor=minor,
            note=note,
            by=default_by(),
        )
    say(
        f"recon: balance: {name} {code} closing {day.isoformat()}: "
        f"{format_minor(minor, code)} {code} (record {record.record_id})"
    )
    for old in earlier:
        say(
            f"  restates record {old.record_id}: {format_minor(old.closing_minor, code)} {code}"
            f"{f' ({old.note})' if old.note else ''}"
        )


@command(balance_group, "show", store="current", accounts=("account",))
@click.option(
    "--account",
    metavar="NAME",
    help="Only this provider account's statements (default: every account's).",
)
def balance_show(settings: Settings, engine: Engine, account: str | None) -> None:
    """Print each balance statement: per account and currency, between two recorded closings,
    opening + top-ups + returned funds - payouts settled - fees - merchant withdrawals =
    computed closing, against the recorded closing; tied, break or incomplete."""
    from recon.report.balance import statement_text
    from recon.store.balance import balance_statements

    with engine.connect() as conn:
        found, records = balance_statements(conn, settings.zone, account)
    for line in statement_text(found, records):
        say(line)
