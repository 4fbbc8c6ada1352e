"""The ``recon`` group and what every command shares: settings, the store, output, exit codes.

A command is declared with :func:`command`: its options, then a function of the settings (and an
engine, when it asks for the store) that calls one capability. The decorator loads the settings
once, opens the store through :func:`open_store`, and turns recon's errors into their line and
exit code (:data:`recon.errors.EXIT_FOR`). Every error line and log record passes through the
invocation's scrubber (:mod:`recon.redact`): the settings' secrets and any URL given as an option.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from recon.constants import FIRST_DAY, LAST_DAY, ExitCode
from recon.errors import ReconError, exit_code_of
from recon.logformat import TEXT_FORMAT, json_line, use_log_format
from recon.redact import Scrubber, ScrubLogs, scrubber_for
from recon.settings import Settings, load_settings
from recon.textsafe import terminal_lines
from recon.timeparse import parse_timestamp

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def _fail(exc: ReconError) -> None:
    say(f"recon: error: {scrubber()(str(exc))}", err=True)
    sys.exit(exit_code_of(exc))


def say(line: str, *, err: bool = False) -> None:
    """A command's result line: plain text, or with ``RECON_LOG_FORMAT=json`` one JSON object (so
    a log shipper reading the job's output reads every line). Control characters in it are
    shown as escapes (:func:`recon.textsafe.terminal_lines`): it may quote what others wrote."""
    line = terminal_lines(line)
    obj = _root_obj()
    obj.setdefault("said", []).append(line)  # what the heartbeat's last ping carries
    if obj.get("log_format") == "json":
        line = json_line(line, level="ERROR" if err else "INFO", logger="recon.cli")
    click.echo(line, err=err)


def said() -> list[str]:
    """The lines :func:`say` has written in this invocation."""
    lines: list[str] = _root_obj().get("said", [])
    return lines


def _root_obj() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    if ctx is None:  # called outside a command (tests calling a body directly)
        return {}
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    obj: dict[str, Any] = root.obj
    return obj


def scrubber() -> Scrubber:
    """The scrubber of this invocation: every secret it knows so far (URLs hidden in any case)."""
    scrub: Scrubber = _root_obj().setdefault("scrubber", Scrubber())
    return scrub


def config_file() -> Path | None:
    """The ``--config`` file of this invocation, if one was given."""
    path: Path | None = click.get_current_context().find_root().params.get("config")
    return path


def load_settings_once() -> Settings:
    """The settings for this invocation, loaded once (``--config`` or ``RECON_CONFIG``); a bad
    configuration raises ``ConfigError``."""
    obj = _root_obj()
    if "settings" not in obj:
        settings = load_settings(config_file())
        scrubber_for(settings, scrubber())
        if settings.heartbeat_url is not None:
            scrubber().add(settings.heartbeat_url)  # the check's id is what lets anyone ping it
        use_log_format(settings.log_format)
        obj["settings"], obj["log_format"] = settings, settings.log_format
    loaded: Settings = obj["settings"]
    return loaded


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
    logging.basicConfig(level=level, format=TEXT_FORMAT)
    use_log_format("text")  # until the settings say otherwise (an earlier invocation in tests)
    # Progress lines are what a cron log is for: always shown. httpx logs every request at INFO,
    # which would flood a night's log: only with -vv.
    logging.getLogger("recon.progress").setLevel(min(level, logging.INFO))
    logging.getLogger("httpx").setLevel(level if verbose >= 2 else logging.WARNING)
    ctx.ensure_object(dict)
    for handler in logging.getLogger().handlers:
        for old in [f for f in handler.filters if isinstance(f, ScrubLogs)]:
            handler.removeFilter(old)  # an earlier invocation in the same process (tests)
        handler.addFilter(ScrubLogs(scrubber()))
    if ctx.invoked_subcommand != "config":  # `recon config check` reports them itself, and fails
        warn_unknown_variables(os.environ)


def warn_unknown_variables(environ: Mapping[str, str]) -> None:
    """Name each ``RECON_`` variable nothing reads on standard error, with the name it misspells:
    a setting the operator meant is not in effect (in text: the log format is not known yet)."""
    from recon.env_names import unknown_variables

    for unknown in unknown_variables(environ):
        click.echo(f"recon: warning: {terminal_lines(unknown.message())}", err=True)


def guarded(func: Callable[[], int | None]) -> None:
    """Run a command body, turning recon's errors into a message and the documented exit code."""
    try:
        code = func()
    except ReconError as exc:
        _fail(exc)
    else:
        sys.exit(int(code or ExitCode.OK))


@contextmanager
def open_store(settings: Settings, *, current: bool) -> Iterator[Engine]:
    """An engine on recon's database, disposed of at the end; with ``current`` its schema is
    brought up to date first (the commands that write it or migrate it themselves take it as is).
    """
    from recon.store.db import make_engine, schema_engine  # SQLAlchemy: see recon/cli/__init__.py

    if current:
        with schema_engine(settings.database_url) as engine:
            yield engine
        return
    engine = make_engine(settings.database_url)
    try:
        yield engine
    finally:
        engine.dispose()


def as_moment(value: str | None, settings: Settings, option: str) -> datetime | None:
    """A time option: ISO 8601 (without an offset: in ``RECON_TIMEZONE``) or epoch seconds."""
    if value is None:
        return None
    try:
        moment = parse_timestamp(value, settings.zone)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None
    if not FIRST_MOMENT <= moment < LAST_MOMENT:  # no night, payout or report outside them
        raise click.BadParameter(
            f"expected a time from {FIRST_DAY} to {LAST_DAY}, got {value[:40]!r}",
            param_hint=option,
        )
    return moment


FIRST_MOMENT = datetime.combine(FIRST_DAY, time(), UTC)
LAST_MOMENT = datetime.combine(LAST_DAY + timedelta(days=1), time(), UTC)


def accounts_option(whose: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The repeatable ``--account NAME`` of a command that reads ``whose`` (``"runs"``) of some
    provider accounts: the names go to ``accounts`` (none: every account), checked by
    ``accounts=("accounts",)`` of :func:`command` or ``Settings.select_accounts``."""
    return click.option(
        "--account",
        "accounts",
        multiple=True,
        metavar="NAME",
        help=f"Only this provider account's {whose} (repeatable; default: every account's).",
    )


Store = Literal["as is", "current"]


def command(
    group: click.Group,
    name: str,
    *,
    settings: bool = True,
    store: Store | None = None,
    times: tuple[str, ...] = (),
    accounts: tuple[str, ...] = (),
    first: Callable[..., None] | None = None,
    **attrs: Any,
) -> Callable[[Callable[..., int | None]], click.Command]:
    """Declare ``group``'s command ``name``: the decorated function is called with the settings
    (unless ``settings=False``), an engine when ``store`` is given (:func:`open_store`, its schema
    brought up to date when ``"current"``), then its options. Once the settings are known and
    before the store opens, the options named in ``times`` are parsed as moments
    (:func:`as_moment`) and those named in ``accounts`` must name configured accounts (a name
    that is not one exits 2 with no store made or changed); ``first`` checks the options before
    anything is loaded. The function's return value is the exit code (None: 0); recon's errors
    become their line and exit code (:func:`guarded`).
    """

    def decorate(func: Callable[..., int | None]) -> click.Command:
        @functools.wraps(func)
        def invoke(**options: Any) -> None:
            if first is not None:
                first(**options)
            guarded(
                lambda: _call(
                    func, options, settings=settings, store=store, times=times, accounts=accounts
                )
            )

        return group.command(name, **attrs)(invoke)

    return decorate


def _call(
    func: Callable[..., int | None],
    options: dict[str, Any],
    *,
    settings: bool,
    store: Store | None,
    times: tuple[str, ...],
    accounts: tuple[str, ...],
) -> int | None:
    if not settings:
        return func(**options)
    loaded = load_settings_once()
    for name in times:
        options[name] = as_moment(options[name], loaded, "--" + name.replace("_", "-"))
    for name in accounts:
        given = options[name]
        loaded.select_accounts([given] if isinstance(given, str) else given or ())
    if store is None:
        return func(loaded, **options)
    with open_store(loaded, current=store == "current") as engine:
        return func(loaded, engine, **options)
