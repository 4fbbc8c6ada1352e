"""What the operator's commands read from the run log: ``recon runs``, ``recon status`` and the
``--as-of`` check of ``recon report``. The judging is :mod:`recon.ops.runlog`'s (pure)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.ops.runlog import (
    UTC_ZONE,
    Freshness,
    check_report_as_of,
    freshness,
    metrics_problem,
    over_accounts,
    with_problem,
)
from recon.store.db import make_engine, schema_engine
from recon.store.runs import (
    RunRecord,
    last_run_with_status,
    latest_runs,
    previous_finished_run,
    run_record,
)


def recent_runs(database_url: str, limit: int, *, accounts: Sequence[str] = ()) -> list[RunRecord]:
    """The ``limit`` most recent runs of ``accounts`` (none: of every account), newest first."""
    with schema_engine(database_url) as engine, engine.connect() as conn:
        if not accounts:
            return latest_runs(conn, limit, account=None)
        found = [r for name in accounts for r in latest_runs(conn, limit, account=name)]
    return sorted(found, key=lambda r: r.id, reverse=True)[:limit]


def run_freshness(
    database_url: str,
    *,
    now: datetime,
    max_age: timedelta,
    metrics_file: Path | None = None,
    zone: ZoneInfo = UTC_ZONE,
    accounts: Sequence[str] = (),
) -> Freshness:
    """``recon status``' verdict over ``accounts`` (none: the one account): CRITICAL when any
    account's last complete night is too old, naming it; and whether the last run that ended
    wrote ``metrics_file`` (when one is configured). Only reads: the schema is not created or
    upgraded here."""
    names = list(accounts) or [DEFAULT_ACCOUNT]
    verdicts, ends = {}, []
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            for name in names:
                complete = last_run_with_status(conn, RunStatus.COMPLETE, account=name)
                # the latest that ended: the one before a running run
                recent = latest_runs(conn, 2, account=name)
                latest = next(iter(recent), None)
                verdicts[name] = freshness(complete, latest, now=now, max_age=max_age, zone=zone)
                ends += [r for r in recent if r.finished_at is not None][:1]
    finally:
        engine.dispose()
    verdict = over_accounts(verdicts)
    if metrics_file is None:
        return verdict
    try:
        written_at = datetime.fromtimestamp(metrics_file.stat().st_mtime, UTC)
        # Each host writes its own accounts' file (docs/scaling.md): judged by their nights.
        mine = set(_ACCOUNT_LABEL.findall(metrics_file.read_text("utf-8", errors="replace")))
    except (FileNotFoundError, NotADirectoryError):
        written_at, mine = None, set()
    except OSError as exc:
        return with_problem(verdict, f"cannot see the metrics file {metrics_file}: {exc.strerror}")
    ended = max(
        [r for r in ends if r.account in mine] or ends,
        key=lambda r: r.finished_at or r.started_at,
        default=None,
    )
    return with_problem(
        verdict, metrics_problem(metrics_file, written_at=written_at, last=ended, zone=zone)
    )


_ACCOUNT_LABEL = re.compile(r'account="([^"\\]*)"')  # the label every series carries


def refuse_as_of_before_latest_run(
    engine: Engine, as_of: datetime, zone: ZoneInfo = UTC_ZONE, *, account: str = DEFAULT_ACCOUNT
) -> None:
    """``recon report --as-of`` without ``--run``: refused when before the latest run's as-of
    of ``account`` (:func:`recon.ops.runlog.check_report_as_of`); nothing to check without a
    run."""
    with engine.connect() as conn:
        latest = previous_finished_run(conn, None, include_applied=True, account=account)
        record = run_record(conn, latest) if latest is not None else None
    if record is not None:
        check_report_as_of(record, as_of, zone)


def accounts_with_nights(engine: Engine, accounts: Sequence[str]) -> list[str]:
    """Those of ``accounts`` with a night to report (a run that applied its outcomes), in order."""
    with engine.connect() as conn:
        return [
            a
            for a in accounts
            if previous_finished_run(conn, None, include_applied=True, account=a) is not None
        ]
