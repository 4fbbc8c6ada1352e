"""The ``recon`` command: parse, wire, call one function, map errors to exit codes.

No logic lives here. Each command loads the settings once and hands them to the capability it runs.
Every error line and log record passes through the invocation's scrubber (:mod:`recon.redact`):
the settings' secrets and any URL given as an option.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from recon.clitypes import DATE
from recon.constants import ExitCode, Flag
from recon.errors import (
    ConfigError,
    InputError,
    LockHeld,
    LockLost,
    MailError,
    ProviderError,
    ReconError,
    StoreError,
)
from recon.logformat import TEXT_FORMAT, json_line, use_log_format
from recon.redact import Scrubber, ScrubLogs, scrubber_for
from recon.settings import RECEIVER_PORT, SANDBOX_PORT, Settings, load_settings
from recon.textsafe import terminal_lines

F = TypeVar("F", bound=Callable[..., Any])

_EXIT_FOR: list[tuple[type[ReconError], ExitCode]] = [
    (ConfigError, ExitCode.USAGE),
    (InputError, ExitCode.USAGE),
    (LockLost, ExitCode.LOCKED),  # a LockHeld too: named for the reader
    (LockHeld, ExitCode.LOCKED),
    (MailError, ExitCode.MAIL_FAILED),
    (StoreError, ExitCode.FAILURE),
    (ProviderError, ExitCode.FAILURE),
    (ReconError, ExitCode.FAILURE),
]


def _fail(exc: ReconError) -> None:
    code = next(code for kind, code in _EXIT_FOR if isinstance(exc, kind))
    say(f"recon: error: {scrubber()(str(exc))}", err=True)
    sys.exit(int(code))


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


def settings_of(ctx: click.Context, **overrides: Any) -> Settings:
    """The settings for this invocation, loaded once (``--config`` or ``RECON_CONFIG``)."""
    try:
        return load_settings_once(ctx, **overrides)
    except ConfigError as exc:
        _fail(exc)
        raise  # pragma: no cover - _fail exits


def load_settings_once(ctx: click.Context, **overrides: Any) -> Settings:
    """:func:`settings_of` without the exit: ``ConfigError`` is the caller's to report."""
    obj = _root_obj()
    if "settings" not in obj:
        settings = load_settings(ctx.find_root().params.get("config"), **overrides)
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


def guarded(func: Callable[[], int | None]) -> None:
    """Run a command body, turning recon's errors into a message and the documented exit code."""
    try:
        code = func()
    except ReconError as exc:
        _fail(exc)
    else:
        sys.exit(int(code or ExitCode.OK))


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


@sandbox.command("serve")
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
    "--returned-funds-url", help="Back-office url receiving returned-funds notifications."
)
@click.option(
    "--callback-url",
    help="Where POST /sandbox/transactions/{id}/notify sends when the payout subscribed no url.",
)
@click.option("--merchant-id", default="sandbox-merchant", show_default=True, help="Merchant id.")
@_sandbox_keys
@click.option("--seed", default=0, show_default=True, help="Seed of the fault draws.")
@click.option("--no-admin", is_flag=True, help="Disable the /sandbox/* admin routes.")
def sandbox_serve(host: str, port: int, no_admin: bool, **options: Any) -> None:
    """Serve the sandbox over HTTP (uvicorn) until interrupted."""
    from recon.sandbox.serve import build_config, serve

    def run() -> None:
        serve(build_config(host=host, port=port, admin=not no_admin, **options), host, port)

    guarded(run)


@sandbox.command("pay")
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

    def run() -> None:
        result = pay_file(
            file,
            out,
            base_url=url,
            public_key=public_key,
            secret=secret,
            callback_url=callback_url,
        )
        click.echo(result.summary())

    guarded(run)


@main.group("db")
def db_group() -> None:
    """recon's own database (RECON_DATABASE_URL)."""


@db_group.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Create the schema or upgrade it to this version of recon; a second run changes nothing."""
    settings = settings_of(ctx)

    def run() -> None:
        from recon.store.db import make_engine, safe_url, upgrade
        from recon.store.migrate import current_revision

        engine = make_engine(settings.database_url)
        upgrade(engine)
        click.echo(f"{safe_url(engine.url)}: schema at revision {current_revision(engine)}")

    guarded(run)


@db_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Say what a prune would drop; change nothing.")
@click.pass_context
def db_prune(ctx: click.Context, dry_run: bool) -> None:
    """Drop raw provider answers and notification bodies older than RECON_KEEP_RAW_DAYS.

    Kept: evidence of a finding still open or of a return, and every parsed field. Each nightly
    run does the same at its end; this command takes the run lock (exit 4 while a run holds it).
    """
    settings = settings_of(ctx)

    def run() -> None:
        from datetime import UTC

        from recon.reconcile.prune import prune_store

        click.echo(
            prune_store(
                settings.database_url,
                now=datetime.now(UTC),
                keep_days=settings.keep_raw_days,
                dry_run=dry_run,
            )
        )

    guarded(run)


@main.group("import")
def import_group() -> None:
    """Import the merchant's records into recon's database (all rows of an input, or none)."""


@import_group.command("payouts")
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
@click.pass_context
def import_payouts(
    ctx: click.Context, file: Path | None, sql_file: Path | None, source_url: str | None
) -> None:
    """Import payouts from FILE (CSV with a header line) or from a query (--sql, --source-url).

    Columns: transaction_id, merchant_reference, amount, currency (required); bank_account_id,
    customer_id, country_id, created, eta (optional). Existing payouts are updated by
    transaction_id. Any bad row rejects the whole input (exit code 2) with every problem listed.
    """
    if (file is None) == (sql_file is None):
        raise click.UsageError("give either FILE or --sql QUERY.sql (with --source-url)")
    if sql_file is not None and not source_url:
        raise click.UsageError("--sql needs --source-url (or $RECON_SOURCE_URL)")
    settings = settings_of(ctx)
    scrubber().add_url(source_url)

    def run() -> None:
        from recon.ingest.payouts import import_payouts_csv, import_payouts_sql
        from recon.store.db import make_engine

        engine = make_engine(settings.database_url)
        try:
            if sql_file is not None:
                query = sql_file.read_text(encoding="utf-8")
                result = import_payouts_sql(engine, query, source_url or "", zone=settings.zone)
            else:
                assert file is not None
                result = import_payouts_csv(engine, file, zone=settings.zone)
        finally:
            engine.dispose()
        if result.ignored_columns:
            names = ", ".join(result.ignored_columns)
            click.echo(f"recon: note: ignoring columns recon does not use: {names}", err=True)
        click.echo(result.summary())

    guarded(run)


def _as_of(value: str | None, settings: Settings) -> datetime | None:
    """``--as-of``: ISO 8601 (without an offset: in ``RECON_TIMEZONE``) or epoch seconds."""
    if value is None:
        return None
    from recon.timeparse import parse_timestamp

    try:
        return parse_timestamp(value, settings.zone)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--as-of") from None


@main.command("run")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for the reports (default: $RECON_OUT_DIR, else ./out; with --dry-run its "
    "dry-run subdirectory).",
)
@click.option(
    "--as-of",
    help="'Now' for every time rule: ISO 8601 (no offset: in RECON_TIMEZONE) or epoch seconds "
    "(default: now).",
)
@click.option("--no-email", is_flag=True, help="Write the reports but do not send the email.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Fetch and classify, store nothing, send nothing; reports named dry-run-*, by default "
    "in OUT_DIR/dry-run.",
)
@click.pass_context
def run_command(
    ctx: click.Context, out_dir: Path | None, as_of: str | None, no_email: bool, dry_run: bool
) -> None:
    """Poll every open payout, classify outcomes, flag exceptions, write reports, email them.

    Exit codes: 0 complete, 3 incomplete (some payouts could not be fetched; reports written),
    4 another run holds the lock, 2 bad configuration or option, 5 the email failed, 1 other
    errors. With RECON_HEARTBEAT_URL set (and not --dry-run), pings URL/start, then URL on exit
    code 0 or URL/fail on any other.
    """
    settings = settings_of(ctx)
    moment = _as_of(as_of, settings)
    target = out_dir or (settings.out_dir / "dry-run" if dry_run else settings.out_dir)
    # A dry run is not the nightly job: its pings would tell the monitor that the job ran.
    beat = None if dry_run or settings.heartbeat_url is None else settings.heartbeat_url

    def body() -> int:
        from recon.reconcile.progress import LogProgress, for_terminal
        from recon.reconcile.run import RunOptions, run_reconciliation

        # What is imported now lives as long as the process: keep it out of every garbage
        # collection, which a run's millions of short-lived objects would otherwise trigger over
        # pandas', SQLAlchemy's and aiohttp's module objects again and again.
        gc.freeze()
        # Every answer allocates a few hundred container objects (aiohttp, pydantic, the sink's
        # rows) that die young; at the default threshold (700) the young generation was collected
        # ~1,000 times per 20,000 answers, 0.7-1.0 CPU s of a 12-14 s run. At 10,000, ~45 times
        # and 0.15 s (BENCHMARKS.md, "CPU per payout"); memory is unchanged within 1 MB.
        gc.set_threshold(10_000, 10, 10)
        options = RunOptions(out_dir=target, as_of=moment, email=not no_email, dry_run=dry_run)
        # JSON logs are for machines even on a terminal: log lines, never a bar between them.
        progress = LogProgress() if settings.log_format == "json" else for_terminal()
        result = run_reconciliation(settings, options, progress=progress)
        say(result.summary)
        if result.files is not None:
            say(f"recon: report {result.files.html.resolve()}")
        return int(result.exit_code)

    from recon.signals import stopping_raises

    # SIGTERM (systemd's deadline or stop, kill) raises inside: the run's row is closed as failed
    # and the heartbeat's /fail sent before the process ends by the signal as it would have.
    metrics = None if dry_run else settings.metrics_file
    with stopping_raises():
        from recon.ops.metrics import with_metrics

        measured = with_metrics(metrics, settings.database_url, body, _exit_code)
        from recon.ops.heartbeat import with_heartbeat

        url = beat.get_secret_value() if beat else None
        said = lambda: _root_obj().get("said", [])  # noqa: E731 - read when the last ping goes
        guarded(with_heartbeat(url, measured, scrub=lambda text: scrubber()(text), said=said))


def _exit_code(exc: ReconError) -> int:
    return int(next(code for kind, code in _EXIT_FOR if isinstance(exc, kind)))


@main.command("report")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for the reports (default: $RECON_OUT_DIR, else ./out).",
)
@click.option(
    "--run", "run_id", type=click.IntRange(min=1), help="Report this run (default: latest)."
)
@click.option(
    "--as-of",
    help="'Now' for aging in the report: ISO 8601 (no offset: in RECON_TIMEZONE) or epoch seconds; "
    "not before the run's own as-of unless --run names the run.",
)
@click.option("--email", is_flag=True, help="Also send the report email.")
@click.pass_context
def report_command(
    ctx: click.Context, out_dir: Path | None, run_id: int | None, as_of: str | None, email: bool
) -> None:
    """Rebuild every report file from stored data, without calling the provider."""
    settings = settings_of(ctx)
    moment = _as_of(as_of, settings)

    def body() -> int:
        from recon.ops.status import refuse_as_of_before_latest_run
        from recon.report.build import from_store
        from recon.report.csvpack import DIALECTS
        from recon.report.pack import write_reports
        from recon.store.db import ensure_schema, make_engine

        engine = make_engine(settings.database_url)
        ensure_schema(engine)
        if moment is not None and run_id is None:
            refuse_as_of_before_latest_run(engine, moment)
        data = from_store(
            engine,
            timezone=settings.timezone,
            run_id=run_id,
            as_of=moment,
            window_days=settings.report_days,
        )
        files = write_reports(
            out_dir or settings.out_dir,
            data,
            row_cap=settings.report_row_cap,
            mode=settings.report_mode,
            max_gap=settings.max_run_age,
            dialect=DIALECTS[settings.csv_dialect],
            workbook=settings.report_workbook,
        )
        say(f"recon: report of run {data.run.run_id}: {files.html.resolve()}")
        if email:
            from recon.report.mail import send_report

            send_report(settings, files, data)
            click.echo(f"recon: mailed to {', '.join(settings.mail_to + settings.mail_cc)}")
        return int(ExitCode.OK)

    guarded(body)


@main.group("export")
def export_group() -> None:
    """Export stored data in full (the reports cover the night and RECON_REPORT_DAYS)."""


@export_group.command("payouts")
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
@click.pass_context
def export_payouts_command(ctx: click.Context, since: str, fmt: str, out_file: Path | None) -> None:
    """Every reconciled payout since --since, with payouts.csv's columns, in constant memory."""
    settings = settings_of(ctx)
    from recon.timeparse import parse_timestamp

    try:
        start = parse_timestamp(since, settings.zone)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None

    def body() -> int:
        from recon.report.export import ExportFormat, export_payouts
        from recon.store.db import ensure_schema, make_engine

        engine = make_engine(settings.database_url)
        ensure_schema(engine)
        day = start.astimezone(settings.zone).strftime("%Y-%m-%d")
        path = out_file or settings.out_dir / f"payouts-since-{day}.{fmt}"
        export_payouts(
            engine,
            path,
            since=start,
            timezone=settings.timezone,
            fmt=ExportFormat(fmt),
            mode=settings.report_mode,
        )
        say(f"recon: payouts since {start.isoformat()}: {path.resolve()}")
        return int(ExitCode.OK)

    guarded(body)


@main.command("runs")
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="How many runs."
)
@click.pass_context
def runs_command(ctx: click.Context, limit: int) -> None:
    """The most recent runs, newest first: status, start, as-of, duration and counts.

    Times are in RECON_TIMEZONE. "not fetched" counts payouts the provider could not be asked
    about (an incomplete run).
    """
    settings = settings_of(ctx)

    def body() -> None:
        from datetime import UTC

        from recon.ops.runlog import runs_table
        from recon.ops.status import recent_runs

        records = recent_runs(settings.database_url, limit)
        click.echo(runs_table(records, settings.zone, datetime.now(UTC)))

    guarded(body)


@main.command("status")
@click.pass_context
def status_command(ctx: click.Context) -> None:
    """Whether the last complete run is recent enough (RECON_MAX_RUN_AGE): for Nagios and friends.

    Prints one line in the Nagios plugin format, with the age as performance data. Exit codes (the
    Nagios plugin convention): 0 the last complete run finished within RECON_MAX_RUN_AGE,
    2 it is older, or there is none, 3 it cannot be told (bad configuration, database unavailable).
    """
    from recon.ops.runlog import Health

    def unknown(message: str) -> None:
        click.echo(f"RECON UNKNOWN - {scrubber()(message)}")
        sys.exit(int(Health.UNKNOWN))

    try:
        settings = load_settings_once(ctx)
    except ConfigError as exc:
        unknown(" ".join(str(exc).split()))
        return  # pragma: no cover - unknown exits

    from datetime import UTC

    from recon.ops.status import run_freshness

    try:
        verdict = run_freshness(
            settings.database_url, now=datetime.now(UTC), max_age=settings.max_run_age
        )
    except ReconError as exc:
        unknown(str(exc))
        return  # pragma: no cover - unknown exits
    except Exception as exc:  # e.g. a database without recon's tables: the check cannot tell
        unknown(f"cannot read the run log: {type(exc).__name__}: {exc}".splitlines()[0])
        return  # pragma: no cover - unknown exits
    click.echo(verdict.line)
    sys.exit(int(verdict.health))


@main.group("exceptions")
def exceptions_group() -> None:
    """Work the exception queue: list, acknowledge, resolve, snooze, reopen, apply a file.

    Every exception has an id (E12-3: found by run 12) that stays while its finding stands.
    A person's actions are recorded with who, when, what and the note, and never rewritten.
    """


_STATES = ("open", "acknowledged", "snoozed", "resolved", "cleared")


@exceptions_group.command("list")
@click.option(
    "--status",
    "states",
    multiple=True,
    type=click.Choice(_STATES),
    help="Only these (repeatable). Default: open, acknowledged and snoozed.",
)
@click.option(
    "--exception",
    "flags",
    multiple=True,
    type=click.Choice([f.value for f in Flag]),
    help="Only this exception name (repeatable).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
    show_default=True, help="Output format.",
)  # fmt: skip
@click.pass_context
def exceptions_list(
    ctx: click.Context, states: tuple[str, ...], flags: tuple[str, ...], fmt: str
) -> None:
    """The exceptions, newest first."""
    settings = settings_of(ctx)

    def body() -> None:
        from recon.ops.findings import list_text

        click.echo(
            list_text(settings.database_url, states=states, flags=flags, fmt=fmt,
                      zone=settings.zone)
        )  # fmt: skip

    guarded(body)


def _act_command(name: str, action: str, summary: str) -> None:
    @exceptions_group.command(name, help=summary)
    @click.argument("ids", nargs=-1, required=True)
    @click.option("--note", required=action != "reopen", help="Why (kept in the history).")
    @click.option("--by", help="Who (default: the operating-system user).")
    @click.option(
        "--until",
        type=DATE,
        required=action == "snooze",
        help="The date it comes back to Needs action (snooze only), in RECON_TIMEZONE.",
    )
    @click.pass_context
    def command(
        ctx: click.Context,
        ids: tuple[str, ...],
        note: str | None,
        by: str | None,
        until: date | None,
    ) -> None:
        settings = settings_of(ctx)

        def body() -> None:
            from recon.constants import CaseAction
            from recon.decision import ActionRequest
            from recon.ops.findings import applied_lines, default_by, perform, until_of

            who = by or default_by()
            end = until_of(until, settings.zone) if until is not None else None
            requests = [ActionRequest(i, CaseAction(action), note, who, end) for i in ids]
            applied = perform(
                settings.database_url, requests, now=datetime.now(UTC), source="command line"
            )
            for line in applied_lines(applied):
                say(f"recon: {line}")

        guarded(body)


_act_command("ack", "acknowledge", "Acknowledge: someone owns it; not counted as needing action.")
_act_command(
    "resolve", "resolve", "Resolve: closed by a person, with a reason; gone from the report."
)
_act_command("snooze", "snooze", "Snooze until a date: back in Needs action on that date.")
_act_command("reopen", "reopen", "Reopen: back in Needs action.")


@exceptions_group.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--by", help="Who runs it (default: the OS user); a `by` column is kept as who decided."
)
@click.pass_context
def exceptions_apply(ctx: click.Context, file: Path, by: str | None) -> None:
    """Apply the resolutions filled in a CSV or workbook (exception_id, resolution, note, by,
    until; other columns ignored): report.xlsx or exceptions.csv as mailed. All rows or none."""
    settings = settings_of(ctx)

    def body() -> None:
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

    guarded(body)


@exceptions_group.command("history")
@click.argument("exception_id")
@click.pass_context
def exceptions_history(ctx: click.Context, exception_id: str) -> None:
    """One exception: each run that reported it and every action on it."""
    settings = settings_of(ctx)

    def body() -> None:
        from recon.ops.findings import history_text

        click.echo(history_text(settings.database_url, exception_id, zone=settings.zone))

    guarded(body)


@main.command("show")
@click.argument("payout_id", metavar="ID_OR_REFERENCE")
@click.pass_context
def show_command(ctx: click.Context, payout_id: str) -> None:
    """One payout by transaction id, merchant_reference or return id: record, answers, changes."""
    settings = settings_of(ctx)

    def body() -> None:
        from recon.ops.show import show_text

        click.echo(show_text(settings.database_url, payout_id, zone=settings.zone))

    guarded(body)


@import_group.command("notifications")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def import_notifications(ctx: click.Context, file: Path) -> None:
    """Import provider notification bodies from FILE (JSON Lines: one body per line).

    Blank lines are ignored. Bodies are read as the receiver reads them: a JSON object recon cannot
    read as a notification is stored with its reason. A line that is not a JSON object rejects the
    whole file (exit code 2) with every such line listed. A body already stored, or repeated in
    the file, is stored once and counted as a duplicate.
    """
    settings = settings_of(ctx)

    def run() -> None:
        from recon.ingest.notification_file import import_notifications
        from recon.store.db import make_engine

        engine = make_engine(settings.database_url)
        try:
            counts = import_notifications(engine, file)
        finally:
            engine.dispose()
        click.echo(counts.summary(file))

    guarded(run)


@main.group("serve")
def serve_group() -> None:
    """Long-running servers of recon."""


@serve_group.command("callbacks")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    default=RECEIVER_PORT,
    envvar="RECON_RECEIVER_PORT",
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (or $RECON_RECEIVER_PORT).",
)
@click.pass_context
def serve_callbacks(ctx: click.Context, host: str, port: int) -> None:
    """Receive the provider's notifications on POST /callbacks and store each once.

    Answers 200 only after a body is committed, 503 while the database cannot commit (the provider
    retries), 4xx for bodies that are not JSON objects. GET /health checks that the database
    accepts writes.
    """
    settings = settings_of(ctx)

    def run() -> None:
        from recon.ingest.receiver import serve_callbacks as serve_receiver

        serve_receiver(settings, host, port)

    guarded(run)


@main.command("demo")
@click.option(
    "--dir",
    "work_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-out"),
    show_default=True,
    help="Working directory: the demo's SQLite database, its CSV and the reports.",
)
@click.option("--payouts", default=300, show_default=True, type=click.IntRange(30, 5000),
              help="How many payouts the demo night pays out.")  # fmt: skip
def demo_command(work_dir: Path, payouts: int) -> None:
    """A whole night offline: sandbox, receiver, payouts, two runs, the report (loopback only)."""

    def body() -> int:
        from recon.demo import show_demo

        return int(show_demo(work_dir, payouts=payouts))

    guarded(body)


@main.group("config")
def config_group() -> None:
    """recon's configuration: RECON_* environment variables and the optional TOML file."""


@config_group.command("check")
@click.pass_context
def config_check_command(ctx: click.Context) -> None:
    """Print every setting (secrets masked) and its source; test the database, provider, SMTP.

    Nothing is written and no mail is sent. Exit codes: 0 every configured connection works,
    1 one does not, 2 the configuration itself is invalid (one line per wrong value).
    """
    settings = settings_of(ctx)
    config_file: Path | None = ctx.find_root().params.get("config")

    def body() -> int:
        from recon.config_check import check_configuration

        return int(check_configuration(settings, config_file, echo=click.echo))

    guarded(body)
