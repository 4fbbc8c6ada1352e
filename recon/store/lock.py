"""The run lock: one ``recon run`` at a time, across processes and hosts sharing the database.

A row in ``run_lock`` is the lock. Acquiring is an INSERT (the name is the primary key, so only one
succeeds) or, when the holder sent no heartbeat for ``stale_after``, an UPDATE that takes the
row over only if its heartbeat is still old (checked by rowcount, so two takers cannot both win).
A holder on this same host whose process no longer exists (a run killed with SIGKILL, or the host's
OOM killer) is taken over at once, the same way, so an operator re-running right after a crash is
not told for ten minutes that a dead process holds the lock.
Fencing: the holder string (``host:pid:uuid``, new for every ``RunLock``) is the holder's token.
Every write of a run goes through :meth:`RunLock.fenced_transaction`, whose first statement
refreshes the heartbeat only where the holder is still this token. That takes the lock row
(PostgreSQL, MariaDB: a row lock; SQLite: ``BEGIN IMMEDIATE`` already holds the database's write
lock) until the commit, so a takeover cannot come between the check and the commit; no row matched
means another run took the lock over, and the transaction rolls back with ``LockLost``. A run that
stalled past ``stale_after`` (a paused VM, a stopped process) so stops at its next write and keeps
nothing it wrote after losing the lock. A heartbeat that finds another holder marks the lock lost,
so the next write fails without asking the database.
The lock is per provider account (one run is one account's night): runs of two accounts hold two
rows and run at once; two of one account still give one winner. The default account's row keeps
the name it had before there were accounts (``run``), so a run of the previous release and one of
this release still exclude each other while a deploy upgrades the hosts one by one; another
account's is ``run:<account>``.
Times come from this host's clock: hosts sharing a database need roughly synchronised clocks, which
``stale_after`` (ten minutes by default) tolerates.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from types import TracebackType

from sqlalchemy import Connection, Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from recon.constants import DEFAULT_ACCOUNT
from recon.errors import LockHeld, LockLost
from recon.store.db import write_transaction
from recon.store.tables import run_lock

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def lock_name(name: str, account: str) -> str:
    """The lock row's name of ``name`` for ``account`` (the default account's is ``name``)."""
    return name if account == DEFAULT_ACCOUNT else f"{name}:{account}"


class RunLock:
    """``with RunLock(engine): ...`` holds the named lock of ``account`` or raises ``LockHeld``
    at once."""

    def __init__(
        self,
        engine: Engine,
        name: str = "run",
        stale_after: timedelta = timedelta(minutes=10),
        *,
        clock: Clock = _utc_now,
        account: str = DEFAULT_ACCOUNT,
    ) -> None:
        self.engine = engine
        self.account = account
        self.name = lock_name(name, account)
        self.stale_after = stale_after
        self.clock = clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
        self.held = False
        self._lost: str | None = None  # why the lock is lost, once a beat or write found it so

    @property
    def lost(self) -> bool:
        """Whether a heartbeat or a write found that another run took this lock over."""
        return self._lost is not None

    def acquire(self) -> None:
        """Take the lock, or raise ``LockHeld`` naming the holder and since when."""
        for _attempt in range(3):
            now = self.clock()
            if self._insert(now) or self._take_over_stale(now):
                self.held, self._lost = True, None
                return
            current = self._current()
            if current is not None:
                holder, since, heartbeat = current
                if _holder_is_dead_here(holder):
                    if self._take_over_dead(holder, now):
                        self.held, self._lost = True, None
                        return
                    continue  # someone else took it over first: look again
                raise LockHeld(
                    f"another run holds the lock {self.name!r}: {holder}, since "
                    f"{since.isoformat()} (last heartbeat {heartbeat.isoformat()})"
                )
            # The holder released between our attempts: try again.
        raise LockHeld(f"could not acquire the lock {self.name!r}: it changed hands repeatedly")

    def heartbeat(self) -> None:
        """Tell other runs we are alive; raises ``LockLost`` if the lock was taken from us."""
        with self.fenced_transaction():
            pass

    @contextmanager
    def fenced_transaction(self) -> Iterator[Connection]:
        """A write transaction that commits only while this lock is ours (see the module
        docstring); ``LockLost`` naming the new holder, and a rollback, once it is not."""
        if self._lost is not None:
            raise LockLost(self._lost)
        with write_transaction(self.engine) as conn:
            self._fence(conn)
            yield conn

    def _fence(self, conn: Connection) -> None:
        result = conn.execute(
            update(run_lock)
            .where(run_lock.c.name == self.name, run_lock.c.holder == self.holder)
            .values(heartbeat_at=self.clock())
        )
        if result.rowcount == 1:
            return
        current = self._current_on(conn)
        taker = current[0] if current else "another run, which has since released it"
        self.held = False
        self._lost = (
            f"the {self.name} lock was taken over by {taker}; this run stopped and kept nothing "
            "it wrote after losing it"
        )
        raise LockLost(self._lost)

    def release(self) -> None:
        """Give the lock up, if we still hold it."""
        with write_transaction(self.engine) as conn:
            conn.execute(
                delete(run_lock).where(
                    run_lock.c.name == self.name, run_lock.c.holder == self.holder
                )
            )
        self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.held:
            self.release()

    def _insert(self, now: datetime) -> bool:
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    insert(run_lock).values(
                        name=self.name, holder=self.holder, acquired_at=now, heartbeat_at=now
                    )
                )
        except IntegrityError:
            return False
        return True

    def _take_over_stale(self, now: datetime) -> bool:
        with write_transaction(self.engine) as conn:
            previous = self._current_on(conn)
            result = conn.execute(
                update(run_lock)
                .where(
                    run_lock.c.name == self.name,
                    run_lock.c.heartbeat_at < now - self.stale_after,
                )
                .values(holder=self.holder, acquired_at=now, heartbeat_at=now)
            )
        if result.rowcount == 1:
            log.warning(
                "took over the stale lock %r from %s", self.name, previous[0] if previous else "?"
            )
            return True
        return False

    def _take_over_dead(self, dead: str, now: datetime) -> bool:
        with write_transaction(self.engine) as conn:
            result = conn.execute(
                update(run_lock)
                .where(run_lock.c.name == self.name, run_lock.c.holder == dead)
                .values(holder=self.holder, acquired_at=now, heartbeat_at=now)
            )
        if result.rowcount == 1:
            log.warning(
                "took over the lock %r from %s, a process that no longer runs", self.name, dead
            )
            return True
        return False

    def _current(self) -> tuple[str, datetime, datetime] | None:
        with self.engine.connect() as conn:
            return self._current_on(conn)

    def _current_on(self, conn: Connection) -> tuple[str, datetime, datetime] | None:
        row = conn.execute(
            select(run_lock.c.holder, run_lock.c.acquired_at, run_lock.c.heartbeat_at).where(
                run_lock.c.name == self.name
            )
        ).first()
        return None if row is None else (row.holder, row.acquired_at, row.heartbeat_at)


def _holder_is_dead_here(holder: str) -> bool:
    """Whether ``holder`` ("host:pid:uuid") names a process of this host that no longer exists.

    Only a definite "no such process" counts: a pid of another host, another user's process or
    any doubt leaves the lock to ``stale_after``. A recycled pid looks alive, which is the safe way
    to be wrong.
    """
    parts = holder.rsplit(":", 2)  # a host name has no colon, but rsplit does not care
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: alive under another user; anything else: unsure
        return False
    return False
