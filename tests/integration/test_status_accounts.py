"""`recon status` over several provider accounts, from a real run log: the late account makes it
CRITICAL and is named first; every account recent is OK."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
    url = engine.url.render_as_string(hide_password=False)
    _night(engine, "brand_a", NOW - timedelta(hours=2))
    verdict = run_freshness(url, now=NOW, max_age=DAY, accounts=["brand_a", "brand_c"])
    assert verdict.health is Health.CRITICAL
    assert verdict.line.startswith("RECON CRITICAL - brand_c: no complete run yet")
