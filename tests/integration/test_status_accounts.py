"""`recon status` over several provider accounts, from a real run log: the late account makes it
CRITICAL and is named first; every account recent is OK."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.ops.runlog import Health
from recon.ops.status import run_freshness
from recon.store.runs import finish_run, start_run

NOW = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
DAY = timedelta(hours=26)


def _night(engine: Engine, account: str, ended: datetime) -> int:
    with engine.begin() as conn:
        run_id = start_run(
            conn, as_of=ended, started_at=ended - timedelta(minutes=5), host="h", pid=1,
            account=account,
        )  # fmt: skip
        finish_run(conn, run_id, status=RunStatus.COMPLETE, finished_at=ended, counts=RunCounts())
    return run_id


def test_one_account_late_is_critical_naming_it(engine: Engine) -> None:
    """brand_b's last complete night 3 days old: CRITICAL naming brand_b first; OK once it runs."""
    url = engine.url.render_as_string(hide_password=False)
    _night(engine, "brand_a", NOW - timedelta(hours=2))
    late = _night(engine, "brand_b", NOW - timedelta(days=3))
    verdict = run_freshness(url, now=NOW, max_age=DAY, accounts=["brand_a", "brand_b"])
    assert verdict.health is Health.CRITICAL
    assert verdict.line.startswith(f"RECON CRITICAL - brand_b: last complete run {late} finished")
    assert "brand_a: last complete run" in verdict.line

    _night(engine, "brand_b", NOW - timedelta(hours=1))
    fresh = run_freshness(url, now=NOW, max_age=DAY, accounts=["brand_a", "brand_b"])
    assert fresh.health is Health.OK, fresh.line


def test_an_account_without_a_night_is_critical(engine: Engine) -> None:
    """A configured account with no complete night yet makes the status CRITICAL, naming it."""
    url = engine.url.render_as_string(hide_password=False)
    _night(engine, "brand_a", NOW - timedelta(hours=2))
    verdict = run_freshness(url, now=NOW, max_age=DAY, accounts=["brand_a", "brand_c"])
    assert verdict.health is Health.CRITICAL
    assert verdict.line.startswith("RECON CRITICAL - brand_c: no complete run yet")


def test_each_hosts_metrics_file_is_judged_by_its_own_accounts_nights(
    engine: Engine, tmp_path: Path
) -> None:
    """Host A runs brand_a, host B brand_b (docs/scaling.md), each writing its own file: B's
    later night does not make A's file look unwritten; A's own late file still warns."""
    url = engine.url.render_as_string(hide_password=False)
    _night(engine, "brand_a", NOW - timedelta(hours=2))
    host_a = tmp_path / "a.prom"
    host_a.write_text('recon_run_exit_code{account="brand_a"} 0.0\n', encoding="utf-8")
    stamp = (NOW - timedelta(hours=2)).timestamp()
    os.utime(host_a, (stamp, stamp))
    _night(engine, "brand_b", NOW - timedelta(hours=1))  # host B's, with its own file
    both = ["brand_a", "brand_b"]
    verdict = run_freshness(url, now=NOW, max_age=DAY, metrics_file=host_a, accounts=both)
    assert verdict.health is Health.OK, verdict.line

    _night(engine, "brand_a", NOW - timedelta(minutes=30))  # host A's night, its file not written
    late = run_freshness(url, now=NOW, max_age=DAY, metrics_file=host_a, accounts=both)
    assert late.health is Health.WARNING
    assert "did not write the metrics file" in late.line
