"""The provider's stand-in: ``recon sandbox serve``, ``recon sandbox pay`` and ``recon demo``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from recon.cli.app import command, main
from recon.settings import SANDBOX_PORT

if TYPE_CHECKING:
    from recon.sandbox.config import FeeSchedule, Merchant

F = TypeVar("F", bound=Callable[..., Any])
SINGLE_MERCHANT = ("merchant_id", "public_key", "secret")


class AccountType(click.ParamType["Merchant"]):
    """``NAME:PUBLIC_KEY:SECRET``: one account of the sandbox (the secret is never echoed)."""

    name = "NAME:PUBLIC_KEY:SECRET"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Merchant:
        from recon.sandbox.config import parse_account

        try:
            return parse_account(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class FeeType(click.ParamType["FeeSchedule"]):
    """``FIXED,PERCENT``: the sandbox's fee schedule (``0.25,0.50``)."""

    name = "FIXED,PERCENT"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> FeeSchedule:
        from recon.sandbox.config import FeeSchedule, parse_fee

        if isinstance(value, FeeSchedule):
            return value
        try:
            return parse_fee(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _distinct_accounts(
    ctx: click.Context, param: click.Parameter, accounts: tuple[Merchant, ...]
) -> tuple[Merchant, ...]:
    names: set[str] = set()
    keys: dict[str, str] = {}
    for account in accounts:
        if account.merchant_id in names:
            raise click.BadParameter(
                f"two accounts have the name {account.merchant_id!r}", ctx, param
            )
        if account.public_key in keys:
            raise click.BadParameter(
                f"two accounts ({keys[account.public_key]!r} and {account.merchant_id!r})"
                " have one public key",
                ctx,
                param,
            )
        names.add(account.merchant_id)
        keys[account.public_key] = account.merchant_id
    return accounts


def _accounts_or_one_merchant(**options: Any) -> None:
    """``--account`` replaces the one merchant: giving both ways is a usage error."""
    ctx = click.get_current_context()
    given = [
        f"--{name.replace('_', '-')}"
        for name in SINGLE_MERCHANT
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    ]
    if options.get("accounts") and given:
        raise click.BadParameter(
            f"cannot be combined with {', '.join(given)} (the accounts replace the one merchant"
            " those options describe)",
            ctx,
            param_hint="'--account'",
        )


def _sandbox_keys(func: F) -> F:
    """The sandbox merchant's API key and secret options (serve and pay take the same)."""
    func = click.option(
        "--secret",
        default="sandbox-secret",
        envvar="RECON_SANDBOX_SECRET",
        show_default=False,
        help="API secret (default: the demo secret; or $RECON_SANDBOX_SECRET).",
    )(func)
    return click.option(
        "--public-key", default="sandbox-public-key", show_default=True, help="API key."
    )(func)


@main.group()
def sandbox() -> None:
    """The local simulator of the payout provider (offline demo, CI, integration tests)."""


@command(sandbox, "serve", settings=False, first=_accounts_or_one_merchant)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (only this).")
@click.option(
    "--port", default=SANDBOX_PORT, show_default=True, type=click.IntRange(0, 65535), help="Port."
)
@click.option("--latency-ms", default=0.0, type=click.FloatRange(min=0), help="Added latency, ms.")
@click.option(
    "--error-rate", default=0.0, type=click.FloatRange(0, 1), help="Share of 5xx answers (0-1)."
)
@click.option(
    "--rate-429", default=0.0, type=click.FloatRange(0, 1), help="Share of 429 answers (0-1)."
)
@click.option(
    "--rate-limit",
    type=click.FloatRange(min=0, min_open=True),
    help="Requests per second; above it answer 429 with Retry-After.",
)
@click.option(
    "--token-lifetime",
    type=click.FloatRange(min=0, min_open=True),
    help="Access token lifetime in seconds (default 6 h).",
)
@click.option(
    "--settle-after",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds an ordinary payout stays completed (4) before it settles (6).",
)
@click.option(
    "--returned-funds-url",
    help="Back-office url receiving returned-funds notifications ({account}: the account's name).",
)
@click.option(
    "--callback-url",
    help="Where POST /sandbox/transactions/{id}/notify sends when the payout subscribed no url"
    " ({account}: the account's name).",
)
@click.option("--merchant-id", default="sandbox-merchant", show_default=True, help="Merchant id.")
@_sandbox_keys
@click.option(
    "--account",
    "accounts",
    multiple=True,
    type=AccountType(),
    callback=_distinct_accounts,
    help="An account (repeatable): its name (the merchant_id), public key and secret; replaces"
    " the one merchant of --merchant-id, --public-key and --secret.",
)
@click.option(
    "--fee",
    type=FeeType(),
    default="0.25,0.50",
    show_default=True,
    help="Fee on every payout: a fixed amount plus a percent, in the payout's currency.",
)
@click.option(
    "--export-cap",
    type=click.IntRange(min=1),
    help="Most rows in one export file (default 100000, the provider's cap); a window with more"
    " rows gives a file cut to exactly this many.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the fault draws.")
@click.option("--no-admin", is_flag=True, help="Disable the /sandbox/* admin routes.")
def sandbox_serve(host: str, port: int, no_admin: bool, **options: Any) -> None:
    """Serve the sandbox over HTTP (uvicorn) until interrupted."""
    from recon.sandbox.serve import build_config, serve

    serve(build_config(host=host, port=port, admin=not no_admin, **options), host, port)


@command(sandbox, "pay", settings=False)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--url",
    default=f"http://127.0.0.1:{SANDBOX_PORT}",
    envvar="RECON_SANDBOX_URL",
    show_default=True,
    help="The running sandbox (recon sandbox serve; or $RECON_SANDBOX_URL).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV to write for recon import payouts (default: FILE.sandbox.csv next to FILE).",
)
@click.option(
    "--callback-url",
    help="Subscribe each payout's states 2, 3, 4 and 6 to this url (e.g. recon's receiver).",
)
@_sandbox_keys
def sandbox_pay(
    file: Path, url: str, out: Path | None, callback_url: str | None, public_key: str, secret: str
) -> None:
    """Create FILE's payouts in a running sandbox; write the CSV to import (the sandbox's ids).

    FILE has the columns of recon import payouts (transaction_id optional). The whole file is
    checked first: one bad row and nothing is created (exit 2).
    """
    from recon.sandbox.pay import pay_file

    result = pay_file(
        file, out, base_url=url, public_key=public_key, secret=secret, callback_url=callback_url
    )
    click.echo(result.summary())


@command(main, "demo", settings=False)
@click.option(
    "--dir",
    "work_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-out"),
    show_default=True,
    help="Working directory: the demo's SQLite database, its CSV and the reports.",
)
@click.option(
    "--payouts",
    default=300,
    show_default=True,
    type=click.IntRange(40, 5000),
    help="How many payouts the first brand pays out (at least 40: every sandbox amount four"
    " times, and the ordinary payouts the night's story returns and re-pays); the second a tenth"
    " as many.",
)
def demo_command(work_dir: Path, payouts: int) -> int:
    """A whole night offline: sandbox, receiver, payouts, two runs, the report (loopback only)."""
    from recon.demo import show_demo

    return int(show_demo(work_dir, payouts=payouts))
