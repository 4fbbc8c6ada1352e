"""The ``recon`` command: parse, wire, call one function, map errors to exit codes.

No logic lives here. Each command loads the settings once and hands them to the capability it runs.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from recon.constants import ExitCode
from recon.errors import (
    ConfigError,
    InputError,
    LockHeld,
    MailError,
    ProviderError,
    ReconError,
    StoreError,
)
from recon.settings import Settings, load_settings

F = TypeVar("F", bound=Callable[..., Any])

_EXIT_FOR: list[tuple[type[ReconError], ExitCode]] = [
    (ConfigError, ExitCode.USAGE),
    (InputError, ExitCode.USAGE),
    (LockHeld, ExitCode.LOCKED),
    (MailError, ExitCode.MAIL_FAILED),
    (StoreError, ExitCode.FAILURE),
    (ProviderError, ExitCode.FAILURE),
    (ReconError, ExitCode.FAILURE),
]


def _fail(exc: ReconError) -> None:
    code = next(code for kind, code in _EXIT_FOR if isinstance(exc, kind))
    click.echo(f"recon: error: {exc}", err=True)
    sys.exit(int(code))


def settings_of(ctx: click.Context, **overrides: Any) -> Settings:
    """The settings for this invocation, loaded once (``--config`` or ``RECON_CONFIG``)."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    if "settings" not in root.obj:
        try:
            root.obj["settings"] = load_settings(root.params.get("config"), **overrides)
        except ConfigError as exc:
            _fail(exc)
    settings: Settings = root.obj["settings"]
    return settings


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML configuration file (default: $RECON_CONFIG). Environment variables RECON_* win.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.version_option(package_name="recon")
@click.pass_context
def main(ctx: click.Context, config: Path | None, verbose: int) -> None:
    """recon: reconcile instant payouts with the provider and report what needs a person."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ctx.ensure_object(dict)


def guarded(func: Callable[[], int | None]) -> None:
    """Run a command body, turning recon's errors into a message and the documented exit code."""
    try:
        code = func()
    except ReconError as exc:
        _fail(exc)
    else:
        sys.exit(int(code or ExitCode.OK))
