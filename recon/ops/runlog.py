"""The run log as an operator reads it: ``recon runs``, ``recon status`` and ``recon report``'s
check of ``--as-of``. Pure functions of run records and "now"; the CLI reads the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum
from pathlib import Path
from zoneinfo import ZoneInfo

from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.durations import duration_text
from recon.errors import InputError
from recon.store.runs import RunRecord
from recon.words import local_time

UTC_ZONE = ZoneInfo("UTC")

RUNS_COLUMNS = (
    "run",
    "status",
    "started",
    "as of",
    "duration",
    "payouts",
    "exceptions",
    "not fetched",
    "cause",
)


def runs_rows(
    records: Sequence[RunRecord], zone: ZoneInfo, now: datetime, *, accounts: bool = False
) -> list[list[str]]:
    """One row per run (``RUNS_COLUMNS``), newest first as given; times in ``zone``.

    A run still going shows how long it has been running; one that never finished (it crashed and
    was closed by the next) shows no duration. A failed run's cause is the last column. With
    ``accounts``, each run's account comes after its number.
    """
    rows = []
    for r in records:
        if r.finished_at is not None:
            took = duration_text(r.finished_at - r.started_at)
        elif r.status in (RunStatus.RUNNING, RunStatus.APPLIED):
            took = f"{duration_text(now - r.started_at)} so far"
        else:
            took = "-"
        c = r.counts
        when = [local_time(r.started_at, zone), local_time(r.as_of, zone), took]
        numbers = [f"{c.payouts:,}", f"{c.exceptions:,}", f"{c.fetch_failed:,}"]
        whose = [r.account] if accounts else []
        rows.append([str(r.id), *whose, r.status.value, *when, *numbers, r.cause])
    return rows


def runs_table(records: Sequence[RunRecord], zone: ZoneInfo, now: datetime) -> str:
    """``recon runs``' output: an aligned plain-text table (numbers right-aligned), or a note."""
    if not records:
        return "no runs yet: `recon run` starts the first"
    # Runs of several provider accounts (or of one not the default) name their account.
    accounts = any(r.account != DEFAULT_ACCOUNT for r in records)
    header = list(RUNS_COLUMNS[:1]) + ["account"] * accounts + list(RUNS_COLUMNS[1:])
    rows = [header, *runs_rows(records, zone, now, accounts=accounts)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    numeric = {0, *(i + accounts for i in (5, 6, 7))}
    lines = [
        "  ".join(
            cell.rjust(w) if i in numeric else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    return "\n".join(lines)


class Health(IntEnum):
    """``recon status``' exit codes: the Nagios plugin convention, which Prometheus' script and
    blackbox-style checkers also read (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


@dataclass(frozen=True)
class Freshness:
    """The verdict of ``recon status`` and its one line (Nagios style, with performance data)."""

    health: Health
    line: str


def freshness(
    last_complete: RunRecord | None,
    latest: RunRecord | None,
    *,
    now: datetime,
    max_age: timedelta,
    zone: ZoneInfo = UTC_ZONE,
) -> Freshness:
    """Whether the last complete run finished within ``max_age`` of ``now``, and the latest run
    did not fail.

    Age counts from the run's end (from its start if its end was not recorded). A later run that
    did not complete is named, so the line says why the night is missing; a failed one (with its
    cause) makes the verdict CRITICAL however recent the last complete run.
    """
    limit = duration_text(max_age)
    if last_complete is None:
        line = f"RECON CRITICAL - no complete run yet (limit {limit})"
        if latest is not None and latest.status is RunStatus.FAILED:
            line += f"; latest run {latest.id} failed: {latest.cause or 'cause not recorded'}"
        return Freshness(Health.CRITICAL, line)
    ended = last_complete.finished_at or last_complete.started_at
    age = now - ended
    ok = age <= max_age
    verdict = "OK" if ok else "CRITICAL"
    line = (
        f"RECON {verdict} - last complete run {last_complete.id} finished "
        f"{duration_text(age)} ago at {local_time(ended, zone, seconds=True)} (limit {limit})"
    )
    failed = latest is not None and latest.status is RunStatus.FAILED
    if latest is not None and latest.id != last_complete.id:
        line += f"; latest run {latest.id} is {latest.status.value}"
        if failed and latest.cause:
            line += f": {latest.cause}"
    if failed:
        line = line.replace(f"RECON {verdict} ", "RECON CRITICAL ", 1)
    perf = f"age={int(age.total_seconds())}s;;{int(max_age.total_seconds())};0"
    return Freshness(Health.OK if ok and not failed else Health.CRITICAL, f"{line} | {perf}")


def over_accounts(verdicts: Mapping[str, Freshness]) -> Freshness:
    """Several accounts' verdicts as one: the worst health, each account named before its own
    line (the worst first, so the account that is late leads), and each one's age as
    performance data of its own (``age_NAME``). One account's verdict is itself."""
    if len(verdicts) == 1:
        return next(iter(verdicts.values()))
    order = sorted(verdicts, key=lambda name: (-_RANK[verdicts[name].health], name))
    worst = verdicts[order[0]].health
    parts, perfs = [], []
    for name in order:
        line, _bar, perf = verdicts[name].line.partition(" | ")
        parts.append(f"{name}: {line.split(' - ', 1)[-1]}")
        if perf:
            perfs.append(f"age_{name}={perf.removeprefix('age=')}")
    text = f"RECON {_WORDS[worst]} - " + "; ".join(parts)
    return Freshness(worst, f"{text} | {' '.join(perfs)}" if perfs else text)


_RANK = {Health.OK: 0, Health.WARNING: 1, Health.UNKNOWN: 2, Health.CRITICAL: 3}
_WORDS = {
    Health.OK: "OK",
    Health.WARNING: "WARNING",
    Health.CRITICAL: "CRITICAL",
    Health.UNKNOWN: "UNKNOWN",
}


# A file system may keep a file's time in whole seconds (FAT: two): a time older than the run's
# start by less may still be this run's write.
_MTIME_SLACK = timedelta(seconds=2)


def metrics_problem(
    path: Path,
    *,
    written_at: datetime | None,
    last: RunRecord | None,
    zone: ZoneInfo = UTC_ZONE,
) -> str | None:
    """What is wrong with the metrics file ``path`` (last written at ``written_at``; None: it does
    not exist) after ``last``, the latest run that ended. Every run rewrites it once it ends, so
    none, or one written before that run started, says the run could not write it. (Its start,
    not its end: the file is written a moment after the run's row is closed.)"""
    if last is None or last.finished_at is None:
        return None
    if written_at is None:
        return f"run {last.id} did not write the metrics file {path} (it does not exist)"
    if written_at + _MTIME_SLACK < last.started_at:
        return (
            f"run {last.id} did not write the metrics file {path} (last written "
            f"{local_time(written_at, zone, seconds=True)}, before the run started at "
            f"{local_time(last.started_at, zone, seconds=True)})"
        )
    return None


def with_problem(verdict: Freshness, problem: str | None) -> Freshness:
    """``verdict`` with ``problem`` said before its performance data; an OK verdict becomes a
    WARNING (the night ran, its monitoring did not), a worse one stays as it is."""
    if problem is None:
        return verdict
    line, bar, perf = verdict.line.partition(" | ")
    line = f"{line}; {problem}{bar}{perf}"
    if verdict.health is not Health.OK:
        return Freshness(verdict.health, line)
    return Freshness(Health.WARNING, line.replace("RECON OK ", "RECON WARNING ", 1))


def check_report_as_of(record: RunRecord, as_of: datetime, zone: ZoneInfo = UTC_ZONE) -> None:
    """Refuse a report titled "as of" a moment before the run asked the provider.

    The run's answers were fetched at its own as-of; a report dated earlier would show outcomes
    nobody knew then under that date. Naming the run (``--run``) says the operator means it.
    """
    if as_of >= record.as_of:
        return
    raise InputError(
        f"--as-of {local_time(as_of, zone, seconds=True)} is before the latest run "
        f"({record.id}, as of {local_time(record.as_of, zone, seconds=True)}): its answers came "
        "later, so the report would show them under an earlier date. Report the run made at that "
        "time with --run ID (`recon runs` lists each run's as-of), or name --run "
        f"{record.id} to age its payouts as of {local_time(as_of, zone, seconds=True)} anyway"
    )
