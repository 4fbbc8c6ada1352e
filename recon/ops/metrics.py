"""The run's metrics for Prometheus (``RECON_METRICS_FILE``): one text file that node_exporter's
textfile collector reads, rewritten atomically at the end of every nightly run, failed or not.

Every value comes from the store (the last success too, so a failed run keeps it) and the run's
own exit code and duration; prometheus_client renders the text, and recon writes it through a
temporary file and a rename, so the collector never reads half a file. The file holds no secret
and node_exporter runs as another user: it is 0644 whatever the umask (the wrapper and the units
run with 077), and a directory recon makes for it is 0755.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from recon.constants import RunStatus
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
    """What the metrics file says about the night; read from the store by the caller."""

    exit_code: int
    duration_seconds: float
    last_success: datetime | None
    payouts: dict[tuple[str, str], int] = field(default_factory=dict)  # (currency, outcome)
    findings_open: dict[str, int] = field(default_factory=dict)
    findings_oldest: dict[str, datetime] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)  # per poll reason
    retries: int = 0


def registry_of(data: RunMetrics) -> CollectorRegistry:
    """The metrics of ``data`` in a registry of their own."""
    registry = CollectorRegistry()
    if data.last_success is not None:
        Gauge(
            "recon_run_last_success_timestamp_seconds",
            "When the last complete run finished (Unix time).",
            registry=registry,
        ).set(data.last_success.timestamp())
    Gauge("recon_run_exit_code", "The last run's exit code (0: complete).", registry=registry).set(
        data.exit_code
    )
    Gauge("recon_run_duration_seconds", "How long the last run took.", registry=registry).set(
        data.duration_seconds
    )
    payouts = Gauge(
        "recon_payouts",
        "Payouts in the store by currency and current outcome.",
        ["currency", "outcome"],
        registry=registry,
    )
    for (currency, outcome), value in sorted(data.payouts.items()):
        payouts.labels(currency=currency, outcome=outcome).set(value)
    open_ = Gauge(
        "recon_findings_open",
        "Findings that stand, by exception.",
        ["exception"],
        registry=registry,
    )
    for flag, value in sorted(data.findings_open.items()):
        open_.labels(exception=flag).set(value)
    oldest = Gauge(
        "recon_findings_oldest_open_timestamp_seconds",
        "When the oldest finding that stands opened (Unix time), by exception.",
        ["exception"],
        registry=registry,
    )
    for flag, when in sorted(data.findings_oldest.items()):
        oldest.labels(exception=flag).set(when.timestamp())
    asked = Gauge(
        "recon_run_ids_asked",
        "Ids the last run asked the provider about, by why they were asked.",
        ["reason"],
        registry=registry,
    )
    for reason, value in sorted(data.requests.items()):
        asked.labels(reason=reason).set(value)
    Gauge(
        "recon_run_provider_retries",
        "Requests the last run sent to the provider again.",
        registry=registry,
    ).set(data.retries)
    return registry


def write_metrics(path: Path, data: RunMetrics) -> None:
    """Write the file atomically (a temporary file beside it, then a rename), mode 0644."""
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for directory in reversed(missing):
        directory.mkdir(exist_ok=True)
        os.chmod(directory, DIR_MODE)  # mkdir's mode is cut by the umask
    write_atomic(path, generate_latest(registry_of(data)), mode=FILE_MODE)


def collect_run_metrics(
    database_url: str, *, exit_code: int, duration_seconds: float
) -> RunMetrics:
    """The night's metrics from the store, with the run's exit code and duration."""
    with schema_engine(database_url) as engine, engine.connect() as conn:
        complete = last_run_with_status(conn, RunStatus.COMPLETE)
        latest = next(iter(latest_runs(conn, 1)), None)
        by_outcome = payouts_by_currency_and_outcome(conn)
        findings, oldest = standing_findings(conn)
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
    )


def record_run(path: Path, database_url: str, *, exit_code: int, duration_seconds: float) -> None:
    """Write the metrics file at the end of a run. A store that cannot be read (the likely cause
    of the failure) leaves only the exit code and duration; nothing here changes the run."""
    try:
        data = collect_run_metrics(
            database_url, exit_code=exit_code, duration_seconds=duration_seconds
        )
    except Exception as exc:
        log.warning(
            "metrics: the store could not be read (%s); writing the exit code and duration only",
            type(exc).__name__,
        )
        data = RunMetrics(exit_code=exit_code, duration_seconds=duration_seconds, last_success=None)
    try:
        write_metrics(path, data)
    except OSError as exc:
        log.error("metrics: cannot write %s: %s", path, exc.strerror or exc)


def metrics_file(path: Path, database_url: str) -> Callable[[NightEnd], None]:
    """The hook that writes the metrics file at a night's end, however it ended, with its exit
    code and duration."""

    def write(end: NightEnd) -> None:
        record_run(path, database_url, exit_code=end.exit_code, duration_seconds=end.seconds)

    return write
