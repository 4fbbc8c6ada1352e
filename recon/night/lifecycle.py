"""A run's place in the run log: what was asked, how it opens (or resumes), its heartbeat, its end.

A nightly run writes only through :meth:`Run.transaction`, fenced by the run lock it holds: a run
that lost the lock to another stops at its next write (``LockLost``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from recon.constants import DEFAULT_ACCOUNT, RunStatus
from recon.counts import RunCounts
from recon.errors import InputError, LockLost
from recon.reconcile.failure import abandoned_cause
from recon.store.lock import RunLock
from recon.store.runs import (
    fail_run,
    latest_runs,
    previous_finished_run,
    reopen_run,
    run_record,
    start_run,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

RESUME_WINDOW = timedelta(hours=12)
HEARTBEAT_SECONDS = 30.0


@dataclass(frozen=True)
class RunOptions:
    """What the caller asked for (``recon run`` options)."""

    out_dir: Path
    as_of: datetime | None = None
    email: bool = True
    dry_run: bool = False
    account: str = DEFAULT_ACCOUNT  # the provider account whose night it is


class RunMode(StrEnum):
    """A nightly run stores what it learns; a dry run stores nothing and sends nothing."""

    NIGHTLY = "nightly"
    DRY = "dry"


@dataclass(frozen=True)
class Run:
    """One run as it goes: its mode, "now", and its row in the run log (a dry run has none)."""

    mode: RunMode
    as_of: datetime
    started_at: datetime
    id: int | None = None
    resumed: bool = False
    only_report: bool = False  # the decision was stored before a crash; only reports are due
    counts: RunCounts = field(default_factory=RunCounts)  # what a resumed run had stored
    lock: RunLock | None = field(default=None, repr=False, compare=False)  # a dry run holds none
    account: str = DEFAULT_ACCOUNT  # the provider account whose night this is

    @property
    def dry(self) -> bool:
        return self.mode is RunMode.DRY

    @property
    def stored_id(self) -> int:
        """The run log's id of a nightly run (a dry run has none: asking is a bug)."""
        if self.id is None:
            raise RuntimeError("a dry run has no row in the run log")
        return self.id

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction of this nightly run, fenced by its lock (``LockLost`` once another
        run took it over); a dry run writes nothing: asking is a bug."""
        if self.lock is None:
            raise RuntimeError("a dry run writes nothing")
        return self.lock.fenced_transaction()

    @property
    def label(self) -> str:
        return "dry run" if self.dry else f"run {self.id}"


def dry_run(as_of: datetime | None, account: str = DEFAULT_ACCOUNT) -> Run:
    """A dry run of ``account``: no row in the run log, no lock, nothing written."""
    now = datetime.now(UTC)
    return Run(RunMode.DRY, as_of or now, now, account=account)


def check_forward(as_of: datetime, latest: datetime | None) -> None:
    """Time moves forward: a nightly run's ``as_of`` may not come before the latest finished
    run's (``latest``), or the report would show an earlier date over later answers and a clock
    that went back would clear findings. A dry run may look at any moment."""
    if latest is not None and as_of < latest:
        raise InputError(
            f"--as-of {as_of.isoformat()} is before the latest finished run's as-of "
            f"{latest.isoformat()}: a run never goes back in time (--dry-run may)"
        )


def open_run(lock: RunLock, as_of: datetime | None) -> Run:
    """Start a nightly run of the lock's account under ``lock``, or resume the account's last
    one if it stopped within
    ``RESUME_WINDOW`` at the same ``as_of`` (a failed one too, from where it stopped); an older
    unfinished run is closed as failed, with why."""
    now = datetime.now(UTC)
    account = lock.account
    with lock.fenced_transaction() as conn:
        previous = latest_runs(conn, 1, account=account)
        if previous and previous[0].resumable:
            last = previous[0]
            fresh = now - last.started_at <= RESUME_WINDOW
            if fresh and (as_of is None or as_of == last.as_of):
                log.warning(
                    "resuming run %s (started %s, as of %s) that did not finish%s",
                    last.id,
                    last.started_at.isoformat(),
                    last.as_of.isoformat(),
                    f": {last.cause}" if last.cause else "",
                )
                stage = last.stage if last.status is RunStatus.FAILED else last.status
                if last.status is RunStatus.FAILED:
                    reopen_run(conn, last)
                return Run(
                    RunMode.NIGHTLY,
                    last.as_of,
                    last.started_at,
                    last.id,
                    True,
                    stage is RunStatus.APPLIED,
                    last.counts,
                    lock,
                    account,
                )
            cause = last.cause or abandoned_cause(last.host, last.pid)
            fail_run(conn, last, cause=cause, finished_at=last.finished_at or now, resumable=False)
        if as_of is not None:
            finished = previous_finished_run(conn, None, account=account)
            record = run_record(conn, finished) if finished is not None else None
            check_forward(as_of, record.as_of if record is not None else None)
        run_id = start_run(
            conn,
            as_of=as_of or now,
            started_at=now,
            host=socket.gethostname(),
            pid=os.getpid(),
            account=account,
        )
    return Run(RunMode.NIGHTLY, as_of or now, now, run_id, lock=lock, account=account)


class Heartbeat:
    """Keeps the run lock's heartbeat fresh from a daemon thread while the run works.

    A missed beat is logged and the next one may succeed; a beat that finds another holder stops
    beating (the lock is marked lost, so the run's next write fails at once).
    """

    def __init__(self, lock: RunLock, every: float = HEARTBEAT_SECONDS) -> None:
        self.lock = lock
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="recon-heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.lock.heartbeat()
            except LockLost:
                log.warning(
                    "another run took the run lock over: no more heartbeats, and the run "
                    "stops at its next write"
                )
                return
            except Exception:  # a missed beat is logged; the next one may succeed
                log.warning("could not refresh the run lock's heartbeat", exc_info=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
