"""The run log as the operator reads it: `recon runs`' table, `recon status`' verdict and the
report's --as-of check (pure: run records and "now" in, text and verdicts out)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.durations import duration_text
from recon.errors import InputError
from recon.ops.heartbeat import Ping, ping_url
from recon.ops.runlog import (
    Freshness,
    Health,
    check_report_as_of,
    freshness,
    metrics_problem,
    over_accounts,
    runs_table,
    with_problem,
)
from recon.store.runs import RunRecord

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def record(
    run_id: int,
    *,
    started: datetime,
    took: timedelta | None = timedelta(seconds=95),
    status: RunStatus = RunStatus.COMPLETE,
    counts: RunCounts | None = None,
    cause: str = "",
) -> RunRecord:
    return RunRecord(
        id=run_id,
        started_at=started,
        finished_at=started + took if took is not None else None,
        as_of=started,
        status=status,
        counts=counts or RunCounts(),
        host="batch-1",
        pid=4242,
        cause=cause,
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (42, "42 s"),
        (185, "3 min 5 s"),
        (7620, "2 h 7 min"),
        (86400, "1 day"),
        (3 * 86400 + 4 * 3600, "3 days 4 h"),
    ],
)
def test_durations_are_short_and_exact_enough(seconds: int, text: str) -> None:
    """A run log shows 3 min 5 s, not 185.27 seconds; 1 day, not 1d 0h."""
    assert duration_text(timedelta(seconds=seconds)) == text


def test_the_runs_table_shows_local_times_counts_and_a_running_run() -> None:
    """Newest first as given, times with their zone; a run in progress says how long so far;
    numbers grouped."""
    counts = RunCounts(payouts=12_345, exceptions=7, flags={"fetch_failed": 2})
    records = [
        record(3, started=NOW - timedelta(minutes=5), took=None, status=RunStatus.RUNNING),
        record(2, started=NOW - timedelta(days=1), counts=counts, status=RunStatus.INCOMPLETE),
    ]
    lines = runs_table(records, ZoneInfo("Europe/Helsinki"), NOW).splitlines()
    assert lines[0].split() == ["run", "status", "started", "as", "of", "duration", "payouts",
                                "exceptions", "not", "fetched", "cause"]  # fmt: skip
    assert lines[1].split() == ["3", "running", "2026-11-23", "10:55", "EET", "2026-11-23",
                                "10:55", "EET", "5", "min", "so", "far",
                                "0", "0", "0"]  # fmt: skip
    assert lines[2].split() == ["2", "incomplete", "2026-11-22", "11:00", "EET", "2026-11-22",
                                "11:00", "EET", "1", "min", "35", "s",
                                "12,345", "7", "2"]  # fmt: skip


def test_the_runs_table_names_each_runs_account_when_there_are_several() -> None:
    """Two accounts' nights: an account column after the run's number; one account's log keeps
    the table as it was (no column)."""
    records = [
        replace(record(5, started=NOW), account="brand_b"),
        replace(record(4, started=NOW - timedelta(minutes=9)), account="default"),
    ]
    lines = runs_table(records, ZoneInfo("UTC"), NOW).splitlines()
    assert lines[0].split()[:3] == ["run", "account", "status"]
    assert [line.split()[:3] for line in lines[1:]] == [
        ["5", "brand_b", "complete"],
        ["4", "default", "complete"],
    ]
    alone = runs_table(records[1:], ZoneInfo("UTC"), NOW).splitlines()
    assert alone[0].split()[:2] == ["run", "status"]


def test_a_recent_complete_run_is_ok() -> None:
    """Finished 3 h ago with a 26 h limit: OK, with the age as Nagios performance data."""
    last = record(9, started=NOW - timedelta(hours=3, seconds=95))
    verdict = freshness(last, last, now=NOW, max_age=timedelta(hours=26))
    assert verdict.health is Health.OK
    assert verdict.line.startswith("RECON OK - last complete run 9 finished 3 h ago")
    assert verdict.line.endswith("| age=10800s;;93600;0")


def test_a_missed_night_is_critical_and_names_the_run_that_did_not_complete() -> None:
    """The last complete run is 2 days old and the latest one failed: CRITICAL, saying so."""
    last = record(7, started=NOW - timedelta(days=2))
    failed = record(8, started=NOW - timedelta(hours=6), status=RunStatus.FAILED)
    verdict = freshness(last, failed, now=NOW, max_age=timedelta(hours=26))
    assert verdict.health is Health.CRITICAL
    assert "RECON CRITICAL - last complete run 7" in verdict.line
    assert "latest run 8 is failed" in verdict.line


def test_a_failed_latest_run_is_critical_with_its_cause_even_after_a_recent_complete_one() -> None:
    """Last night complete 20 h ago, tonight's run failed: CRITICAL (exit 2), naming the cause."""
    last = record(7, started=NOW - timedelta(hours=20))
    failed = record(
        8,
        started=NOW - timedelta(hours=1),
        status=RunStatus.FAILED,
        cause="cannot reach the provider (merchant.authorize)",
    )
    verdict = freshness(last, failed, now=NOW, max_age=timedelta(hours=26))
    assert verdict.health is Health.CRITICAL
    assert verdict.line.startswith("RECON CRITICAL - last complete run 7 finished")
    assert "latest run 8 is failed: cannot reach the provider (merchant.authorize)" in verdict.line


def test_a_first_run_that_failed_is_critical_with_its_cause() -> None:
    """No complete run yet and the only one failed: the line says why."""
    failed = record(1, started=NOW, status=RunStatus.FAILED, cause="the database failed: gone")
    verdict = freshness(None, failed, now=NOW, max_age=timedelta(hours=26))
    assert verdict.health is Health.CRITICAL
    assert verdict.line.endswith("; latest run 1 failed: the database failed: gone")


def test_the_runs_table_shows_a_failed_runs_cause_in_its_last_column() -> None:
    """`recon runs`: the failed run's row ends with its cause."""
    failed = record(4, started=NOW, status=RunStatus.FAILED, cause="stopped by SIGTERM")
    lines = runs_table([failed], ZoneInfo("UTC"), NOW).splitlines()
    assert lines[1].split()[1] == "failed"
    assert lines[1].endswith("stopped by SIGTERM")


def test_no_complete_run_at_all_is_critical() -> None:
    """A job that never ran is exactly what the check is for."""
    verdict = freshness(None, None, now=NOW, max_age=timedelta(hours=26))
    assert (verdict.health, verdict.line) == (
        Health.CRITICAL,
        "RECON CRITICAL - no complete run yet (limit 1 day 2 h)",
    )


def test_a_report_as_of_before_the_runs_own_as_of_is_refused() -> None:
    """The issue's case: a run made three days after the --as-of asked for."""
    run = record(5, started=NOW)
    with pytest.raises(InputError, match=r"the latest run \(5, as of 2026-11-23 09:00:00 UTC"):
        check_report_as_of(run, NOW - timedelta(days=3))
    check_report_as_of(run, NOW)  # the run's own moment and later are what --as-of is for
    check_report_as_of(run, NOW + timedelta(days=1))


@pytest.mark.parametrize(
    ("base", "event", "url"),
    [
        ("https://hc-ping.com/uuid", Ping.START, "https://hc-ping.com/uuid/start"),
        ("https://hc-ping.com/uuid/", Ping.FAIL, "https://hc-ping.com/uuid/fail"),
        ("https://hc-ping.com/uuid", Ping.SUCCESS, "https://hc-ping.com/uuid"),
    ],
)
def test_heartbeat_urls_follow_the_healthchecks_convention(
    base: str, event: Ping, url: str
) -> None:
    """/start, /fail, and the URL itself for success; a trailing slash is not doubled."""
    assert ping_url(base, event) == url


PROM = Path("/var/lib/node_exporter/textfile_collector/recon.prom")


def test_a_metrics_file_written_after_the_last_run_keeps_the_verdict() -> None:
    """The run ended, then wrote the file: nothing to say."""
    last = record(412, started=NOW - timedelta(hours=5))
    assert last.finished_at is not None
    assert (
        metrics_problem(PROM, written_at=last.finished_at + timedelta(seconds=1), last=last) is None
    )


def test_a_metrics_file_older_than_the_last_run_turns_ok_into_warning() -> None:
    """The last run could not write it (an unwritable path): WARNING, exit 1, naming the file."""
    last = record(412, started=NOW - timedelta(hours=5))
    problem = metrics_problem(PROM, written_at=NOW - timedelta(days=3), last=last)
    assert problem is not None
    verdict = with_problem(freshness(last, last, now=NOW, max_age=timedelta(hours=26)), problem)
    assert verdict.health == Health.WARNING == 1
    assert verdict.line.startswith("RECON WARNING - last complete run 412 finished")
    assert f"run 412 did not write the metrics file {PROM}" in verdict.line
    assert verdict.line.endswith(";;93600;0")  # the performance data stays last


def test_no_metrics_file_after_a_run_is_a_warning() -> None:
    """Never written at all (a directory the unit may not write, say)."""
    last = record(412, started=NOW - timedelta(hours=5))
    problem = metrics_problem(PROM, written_at=None, last=last)
    assert problem == f"run 412 did not write the metrics file {PROM} (it does not exist)"


def test_no_run_yet_expects_no_metrics_file() -> None:
    """Before the first run there is nothing the file should say."""
    assert metrics_problem(PROM, written_at=None, last=None) is None


def test_a_critical_verdict_stays_critical_and_names_the_metrics_file_too() -> None:
    """A missed night and an unwritten file: CRITICAL (exit 2), both said."""
    last = record(410, started=NOW - timedelta(days=2))
    problem = metrics_problem(PROM, written_at=None, last=last)
    assert problem is not None
    verdict = with_problem(freshness(last, last, now=NOW, max_age=timedelta(hours=26)), problem)
    assert verdict.health == Health.CRITICAL
    assert verdict.line.startswith("RECON CRITICAL - ")
    assert "did not write the metrics file" in verdict.line


def test_of_several_accounts_the_late_one_makes_it_critical_and_is_named_first() -> None:
    """Of several accounts the late one makes it critical and is named first."""
    fine = Freshness(
        Health.OK, "RECON OK - last complete run 7 finished 2h ago | age=7200s;;93600;0"
    )
    late = Freshness(
        Health.CRITICAL,
        "RECON CRITICAL - last complete run 3 finished 3d ago | age=259200s;;93600;0",
    )
    verdict = over_accounts({"brand_a": fine, "brand_b": late})
    assert verdict.health is Health.CRITICAL
    assert verdict.line.startswith("RECON CRITICAL - brand_b: last complete run 3 finished 3d ago")
    assert "; brand_a: last complete run 7" in verdict.line
    assert verdict.line.endswith("| age_brand_b=259200s;;93600;0 age_brand_a=7200s;;93600;0")


def test_of_one_account_the_verdict_is_its_own() -> None:
    """Of one account the verdict is its own."""
    fine = Freshness(
        Health.OK, "RECON OK - last complete run 7 finished 2h ago | age=7200s;;93600;0"
    )
    assert over_accounts({"default": fine}) == fine
