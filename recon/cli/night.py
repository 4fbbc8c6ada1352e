"""The night and its watch: ``recon run``, ``recon report``, ``recon runs``, ``recon status``."""

from __future__ import annotations

import gc
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from recon.cli.app import accounts_option, command, load_settings_once, main, said, say, scrubber
from recon.constants import MAX_NUMBER
from recon.errors import ConfigError, InputError, ReconError
from recon.night.progress import LogProgress, for_terminal
from recon.settings import Settings
from recon.signals import stopping_raises

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from recon.night.end import Hook, NightEnd


def _collect_less() -> None:
    """Fewer garbage collections for a run: the cyclic GC was a measurable part of a run's CPU, and
    these two lines take most of it back at no cost in memory (BENCHMARKS.md, "CPU per payout")."""
    # What is imported now lives as long as the process: keep it out of every collection, which
    # a run's millions of short-lived objects would otherwise trigger over pandas', SQLAlchemy's
    # and aiohttp's module objects again and again.
    gc.freeze()
    # Every answer allocates a few hundred container objects (aiohttp, pydantic, the sink's
    # rows) that die young: at the default threshold (700) the young generation is collected
    # ~20 times as often.
    gc.set_threshold(10_000, 10, 10)


@command(main, "run", times=("as_of",))
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
@click.option(
    "--account",
    "account_names",
    multiple=True,
    metavar="NAME",
    help="Only this provider account's night (repeatable; default: every configured account).",
)
def run_command(
    settings: Settings,
    out_dir: Path | None,
    as_of: datetime | None,
    no_email: bool,
    dry_run: bool,
    account_names: tuple[str, ...],
) -> int:
    """Poll every open payout, classify outcomes, flag exceptions, write reports, email them.

    Exit codes: 0 complete, 3 incomplete (some payouts could not be fetched; reports written),
    4 another run holds the lock, 2 bad configuration or option, 5 the email failed, 1 other
    errors. With several provider accounts, each account's night runs in turn, and one whose
    night failed makes the exit code 3, naming it. With RECON_HEARTBEAT_URL set (and not
    --dry-run), pings URL/start, then URL on exit code 0 or URL/fail on any other.
    """
    from recon.night.nights import run_nights
    from recon.night.run import RunOptions
    from recon.ops.heartbeat import HeartbeatPings
    from recon.ops.metrics import metrics_file, record_nights

    accounts = settings.select_accounts(account_names)
    several = bool(settings.accounts)  # accounts configured: a pack over them, named nights
    target = out_dir or (settings.out_dir / "dry-run" if dry_run else settings.out_dir)
    options = RunOptions(out_dir=target, as_of=as_of, email=not no_email, dry_run=dry_run)
    # The command's hooks, after the night's own, in order: its closing lines, the metrics file,
    # the heartbeat's last ping (which carries those lines). A dry run is not the nightly job:
    # its metrics and pings would tell the monitor that the job ran. Of several accounts, the
    # metrics and the last ping come once, after every night.
    hooks: list[Hook] = [_closing_lines]
    metrics = not dry_run and settings.metrics_file is not None
    if metrics and not several:
        assert settings.metrics_file is not None
        hooks.append(metrics_file(settings.metrics_file, settings.database_url))
    beat = None
    if not dry_run and settings.heartbeat_url is not None:
        beat = HeartbeatPings(
            settings.heartbeat_url.get_secret_value(), scrub=scrubber(), said=said
        )
        if not several:
            hooks.append(beat)
    # SIGTERM (systemd's deadline or stop, kill) raises inside: the run's row is closed as failed
    # and the heartbeat's /fail sent before the process ends by the signal as it would have.
    with stopping_raises():
        if beat is not None:
            beat.start()
        _collect_less()
        # JSON logs are for machines even on a terminal: log lines, never a bar between them.
        progress = LogProgress() if settings.log_format == "json" else for_terminal()
        try:
            nights = run_nights(settings, options, accounts, hooks=hooks, progress=progress)
        except BaseException as exc:  # a signal, or the pack over the accounts not written
            if several and beat is not None:
                beat(_stopped(exc, options.as_of))
            raise
    if several:
        for line in nights.lines:
            say(line)
        if metrics:
            assert settings.metrics_file is not None
            record_nights(settings.metrics_file, settings.database_url, nights.ends)
        if beat is not None:
            beat(_all_of(nights.ends, nights.exit_code))
    return nights.exit_code


def _stopped(exc: BaseException, as_of: datetime | None) -> NightEnd:
    """The nights of several accounts stopped by ``exc``, for the heartbeat's /fail."""
    from recon.night.end import NightEnd, Outcome, exit_code

    return NightEnd(
        outcome=Outcome.STOPPED if isinstance(exc, KeyboardInterrupt) else Outcome.FAILED,
        exit_code=exit_code(error=exc),
        run_id=None,
        as_of=as_of or datetime.now(UTC),
        seconds=0.0,
        error=exc,
    )


def _all_of(ends: tuple[NightEnd, ...], code: int) -> NightEnd:
    """The nights of several accounts as one end, for the heartbeat's last ping."""
    from recon.night.end import NightEnd, Outcome

    return NightEnd(
        outcome=Outcome.FINISHED,
        exit_code=code,
        run_id=None,
        as_of=max(e.as_of for e in ends),
        seconds=sum(e.seconds for e in ends),
    )


def _closing_lines(end: NightEnd) -> None:
    """What ``recon run`` says when its night finished: the summary, where the report is (a night
    that did not finish leaves with its error, the command's one line)."""
    if end.error is not None:
        return
    say(end.summary)
    if end.files is not None:
        say(f"recon: report {end.files.html.resolve()}")


@command(main, "report", store="current", times=("as_of",), accounts=("account_names",))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for the reports (default: $RECON_OUT_DIR, else ./out).",
)
@click.option(
    "--run", "run_id", type=click.IntRange(1, MAX_NUMBER), help="Report this run (default: latest)."
)
@click.option(
    "--as-of",
    help="'Now' for aging in the report: ISO 8601 (no offset: in RECON_TIMEZONE) or epoch seconds; "
    "not before the run's own as-of unless --run names the run.",
)
@click.option("--email", is_flag=True, help="Also send the report email.")
@click.option(
    "--account",
    "account_names",
    multiple=True,
    metavar="NAME",
    help="Only this provider account's night (repeatable; default: every configured account).",
)
def report_command(
    settings: Settings,
    engine: Engine,
    out_dir: Path | None,
    run_id: int | None,
    as_of: datetime | None,
    email: bool,
    account_names: tuple[str, ...],
) -> None:
    """Rebuild every report file from stored data, without calling the provider.

    Without --run: the latest night of every account (or of each --account), in one report."""
    from recon.ops.status import accounts_with_nights, refuse_as_of_before_latest_run
    from recon.report.accounts import combine, only
    from recon.report.build import from_store
    from recon.report.mail import send_report
    from recon.report.pack import write_configured

    accounts = settings.select_accounts(account_names)
    labels = settings.labels
    if run_id is not None:
        data = from_store(
            engine,
            timezone=settings.timezone,
            run_id=run_id,
            as_of=as_of,
            window_days=settings.report_days,
            journal=settings.journal is not None,
        )
        if account_names:
            try:
                data = only(data, [a.name for a in accounts])
            except ValueError as exc:
                raise InputError(f"{exc} (run {run_id})") from None
        data = combine([data], labels=labels)
    else:
        nights = []
        # An account without a night yet (a brand just added) is left out; none with one: the
        # error says so, as for one account.
        names = [a.name for a in accounts]
        ready = accounts_with_nights(engine, names) if len(names) > 1 else names
        for account in [a for a in accounts if a.name in (ready or names[:1])]:
            if as_of is not None:
                refuse_as_of_before_latest_run(engine, as_of, settings.zone, account=account.name)
            nights.append(
                from_store(
                    engine,
                    timezone=settings.timezone,
                    as_of=as_of,
                    window_days=settings.report_days,
                    standing=True,
                    account=account.name,
                    journal=settings.journal is not None,
                )
            )
        data = combine(nights, labels=labels)
    files = write_configured(settings, out_dir or settings.out_dir, data)
    if data.several:
        runs = ", ".join(f"{n.provider_account} {n.run_id}" for n in data.nights)
        say(f"recon: report of runs {runs}: {files.html.resolve()}")
    else:
        say(f"recon: report of run {data.run.run_id}: {files.html.resolve()}")
    if email:
        send_report(settings, files, data)
        click.echo(f"recon: mailed to {', '.join(settings.mail_to + settings.mail_cc)}")


@command(main, "runs", accounts=("accounts",))
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, MAX_NUMBER),
    help="How many runs.",
)
@accounts_option("runs")
def runs_command(settings: Settings, limit: int, accounts: tuple[str, ...]) -> None:
    """The most recent runs, newest first: status, start, as-of, duration and counts.

    Times are in RECON_TIMEZONE. "not fetched" counts payouts the provider could not be asked
    about (an incomplete run). With several accounts, each run names its account.
    """
    from recon.ops.runlog import runs_table
    from recon.ops.status import recent_runs

    records = recent_runs(settings.database_url, limit, accounts=accounts)
    click.echo(runs_table(records, settings.zone, datetime.now(UTC)))


# Not a :func:`command`: a Nagios check has its own exit codes, and "cannot tell" is one of them.
@main.command("status")
def status_command() -> None:
    """Whether the last complete run is recent enough (RECON_MAX_RUN_AGE): for Nagios and friends.

    Prints one line in the Nagios plugin format, with the age as performance data. Exit codes (the
    Nagios plugin convention): 0 the last complete run finished within RECON_MAX_RUN_AGE,
    1 it did, but the last run did not write RECON_METRICS_FILE, 2 it is older, or there is none,
    or the latest run failed, 3 it cannot be told (bad configuration, database unavailable).
    """
    from recon.ops.runlog import Health
    from recon.ops.status import run_freshness

    def unknown(message: str) -> None:
        click.echo(f"RECON UNKNOWN - {scrubber()(message)}")
        sys.exit(int(Health.UNKNOWN))

    try:
        settings = load_settings_once()
    except ConfigError as exc:
        unknown(" ".join(str(exc).split()))
        return  # pragma: no cover - unknown exits
    try:
        verdict = run_freshness(
            settings.database_url,
            now=datetime.now(UTC),
            max_age=settings.max_run_age,
            metrics_file=settings.metrics_file,
            zone=settings.zone,
            accounts=[a.name for a in settings.provider_accounts],
        )
    except ReconError as exc:
        unknown(str(exc))
        return  # pragma: no cover - unknown exits
    except Exception as exc:  # e.g. a database without recon's tables: the check cannot tell
        unknown(f"cannot read the run log: {type(exc).__name__}: {exc}".splitlines()[0])
        return  # pragma: no cover - unknown exits
    click.echo(verdict.line)
    sys.exit(int(verdict.health))
