"""The run's metrics for Prometheus (``RECON_METRICS_FILE``): one text file that node_exporter's
textfile collector reads, rewritten atomically at the end of every nightly run, failed or not.

Every value comes from the store (the last success too, so a failed run keeps it) and the run's
own exit code and duration; prometheus_client renders the text, and recon writes it through a
temporary file and a rename, so the collector never reads half a file. The file holds no secret
and node_exporter runs as another user: it is 0644 whatever the umask (the wrapper and the units
run with 077), and a directory recon makes for it is 0755.

Every metric carries the provider ``account`` label (``default`` without ``[accounts.…]``
tables): one series per account of the invocation that wrote the file.

All are gauges: the run's figures are the last run's (``recon_run_…``), not counters, which
would fall back every night; the store's are what it holds now.

- ``recon_run_last_success_timestamp_seconds``: when the last complete run finished
- ``recon_run_exit_code``, ``recon_run_duration_seconds``: the last run's
- ``recon_run_ids_asked{reason}``: ids the last run asked the provider about, by why
- ``recon_run_provider_retries``: requests the last run sent again (a failure, a 429)
- ``recon_payouts{currency,outcome}``: payouts in the store by currency and current outcome
  (``not_reconciled_yet``: imported, no run has asked about it yet)
- ``recon_findings_open{exception}``: findings that stand, and
  ``recon_findings_oldest_open_timestamp_seconds{exception}`` when the oldest of them opened
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.files import write_atomic
from recon.store.db import schema_engine
from recon.store.metrics_reads import payouts_by_currency_and_outcome, standing_findings
from recon.store.runs import last_run_with_status, latest_runs

if TYPE_CHECKING:
    from recon.night.end import NightEnd

log = logging.getLogger(__name__)
FILE_MODE = 0o644  # node_exporter reads it as another user; it holds no secret
DIR_MODE = 0o755


@dataclass(frozen=True)
class RunMetrics:
    """What the metrics file says about one account's night; read from the store by the caller."""

    exit_code: int
    duration_seconds: float
    last_success: datetime | None
    payouts: dict[tuple[str, str], int] = field(default_factory=dict)  # (currency, outcome)
    findings_open: dict[str, int] = field(default_factory=dict)
    findings_oldest: dict[str, datetime] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)  # per poll reason
    retries: int = 0
    account: str = DEFAULT_ACCOUNT  # the provider account: every metric's ``account`` label


def registry_of(data: RunMetrics | Sequence[RunMetrics]) -> CollectorRegistry:
    """The metrics of ``data`` (one account's night, or several's) in a registry of their own,
    every one labelled with its account."""
    nights = [data] if isinstance(data, RunMetrics) else list(data)
    registry = CollectorRegistry()

    def gauge(name: str, text: str, *labels: str) -> Gauge:
        return Gauge(name, text, ["account", *labels], registry=registry)

    success = gauge(
        "recon_run_last_success_timestamp_seconds",
        "When the last complete run finished (Unix time).",
    )
    exit_code = gauge("recon_run_exit_code", "The last run's exit code (0: complete).")
    duration = gauge("recon_run_duration_seconds", "How long the last run took.")
    payouts = gauge(
        "recon_payouts",
        "Payouts in the store by currency and current outcome.",
        "currency",
        "outcome",
    )
    open_ = gauge("recon_findings_open", "Findings that stand, by exception.", "exception")
    oldest = gauge(
        "recon_findings_oldest_open_timestamp_seconds",
        "When the oldest finding that stands opened (Unix time), by exception.",
        "exception",
    )
    asked = gauge(
        "recon_run_ids_asked",
        "Ids the last run asked the provider about, by why they were asked.",
        "reason",
    )
    retries = gauge(
        "recon_run_provider_retries", "Requests the last run sent to the provider again."
    )
    for one in sorted(nights, key=lambda n: n.account):
        account = one.account
        if one.last_success is not None:
            success.labels(account=account).set(one.last_success.timestamp())
        exit_code.labels(account=account).set(one.exit_code)
        duration.labels(account=account).set(one.duration_seconds)
        for (currency, outcome), value in sorted(one.payouts.items()):
            payouts.labels(account=account, currency=currency, outcome=outcome).set(value)
        for flag, value in sorted(one.findings_open.items()):
            open_.labels(account=account, exception=flag).set(value)
        for flag, when in sorted(one.findings_oldest.items()):
            oldest.labels(account=account, exception=flag).set(when.timestamp())
        for reason, value in sorted(one.requests.items()):
            asked.labels(account=account, reason=reason).set(value)
        retries.labels(account=account).set(one.retries)
    return registry


def write_metrics(path: Path, data: RunMetrics | Sequence[RunMetrics]) -> None:
    """Write the file atomically (a temporary file beside it, then a rename), mode 0644."""
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for directory in reversed(missing):
        directory.mkdir(exist_ok=True)
        os.chmod(directory, DIR_MODE)  # mkdir's mode is cut by the umask
    write_atomic(path, generate_latest(registry_of(data)), mode=FILE_MODE)


def collect_run_metrics(
    database_url: str,
    *,
    exit_code: int,
    duration_seconds: float,
    account: str = DEFAULT_ACCOUNT,
) -> RunMetrics:
    """``account``'s night's metrics from the store, with the night's exit code and duration."""
    with schema_engine(database_url) as engine, engine.connect() as conn:
        complete = last_run_with_status(conn, RunStatus.COMPLETE, account=account)
        latest = next(iter(latest_runs(conn, 1, account=account)), None)
        by_outcome = payouts_by_currency_and_outcome(conn, account=account)
        findings, oldest = standing_findings(conn, account=account)
    counts = latest.counts if latest is not None else None
    return RunMetrics(
        exit_code=exit_code,
        duration_seconds=duration_seconds,
        last_success=(complete.finished_at or complete.started_at) if complete else None,
        payouts=by_outcome,
        findings_open=findings,
        findings_oldest=oldest,
        requests=dict(counts.polls) if counts is not None else {},
        retries=counts.retries if counts is not None else 0,
        account=account,
    )


def record_nights(path: Path, database_url: str, ends: Sequence[NightEnd]) -> None:
    """Write the metrics file at the end of an invocation: each account's night with its exit
    code and duration. A store that cannot be read (the likely cause of the failure) leaves only
    the exit codes and durations; nothing here changes the run."""
    nights = []
    for end in ends:
        try:
            one = collect_run_metrics(
                database_url,
                exit_code=end.exit_code,
                duration_seconds=end.seconds,
                account=end.account,
            )
        except Exception as exc:
            log.warning(
                "metrics: the store could not be read (%s); writing the exit code and duration "
                "only",
                type(exc).__name__,
            )
            one = RunMetrics(
                exit_code=end.exit_code,
                duration_seconds=end.seconds,
                last_success=None,
                account=end.account,
            )
        nights.append(one)
    try:
        write_metrics(path, nights)
    except OSError as exc:
        log.error("metrics: cannot write %s: %s", path, exc.strerror or exc)


def metrics_file(path: Path, database_url: str) -> Callable[[NightEnd], None]:
    """The hook that writes the metrics file at a night's end, however it ended, with its exit
    code and duration."""

    def write(end: NightEnd) -> None:
        record_nights(path, database_url, [end])

    return write
