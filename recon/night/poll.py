"""Polling: ask ``transaction.get`` about many ids at once and hand the answers over in batches.

A fixed set of workers pulls ids from one queue (never one task per payout: with tens of thousands
of tasks the pool's wait queue, not the provider, would set the pace). A single writer collects the
answers and passes them to ``sink`` in batches, in a thread, so database writes never stall the
workers and a run killed half-way keeps every batch already written.

Every id ends in exactly one :class:`Fetched`: ``ok`` with the transaction, ``not_found`` when the
provider does not know it, ``session`` when it is a session's, ``wrong_id`` when the answer is
about another id, ``refused`` when the provider refuses it to this merchant account (401 or 403
with a working token), or ``error`` when it could not be fetched after the client's retries.
An error is never turned into an outcome here; classification decides what it means. Any
exception of one fetch, even an unexpected one, is that id's ``error``: one payout never stops the
night. Two things end the poll, since every further id would fail the same way: having no token
(``KeysRefused``: merchant.authorize refuses our keys; ``AuthorizeFailed``: it is unusable), and
refusals past the limit (``TooManyRefusals``: :mod:`recon.night.refusals`). The batches already
handed to ``sink`` stay stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from recon.constants import ObsStatus
from recon.errors import (
    AuthorizeFailed,
    KeysRefused,
    ProviderAuthError,
    ProviderError,
    SessionIdGiven,
    TooManyRefusals,
    TransactionNotFound,
    WrongTransaction,
)
from recon.night.refusals import Refusals
from recon.provider.models import Session, Transaction

log = logging.getLogger(__name__)


class TransactionSource(Protocol):
    """What the poller needs of the provider client."""

    async def get_transaction_raw(self, transaction_id: str) -> tuple[Transaction, bytes]:
        """One ``transaction.get`` answer, parsed, and its body as received."""
        ...

    async def get_session(self, session_id: str) -> Session:
        """One ``session.get`` answer (asked when a transaction id turns out a session's)."""
        ...


@dataclass(frozen=True, slots=True)
class Fetched:
    """The provider's answer about one id, or why there is none."""

    transaction_id: str
    fetched_at: datetime
    status: ObsStatus
    transaction: Transaction | None = None
    raw: bytes | None = None  # the answer's body exactly as the provider sent it
    error: str | None = None
    session_transaction_id: str | None = None  # SESSION: the session's transaction, if it has one
    answered_about: str | None = None  # WRONG_ID: the id the answer was about


@dataclass
class PollStats:
    """Counts and timing of one polling pass."""

    requested: int = 0
    ok: int = 0
    not_found: int = 0
    sessions: int = 0  # ids that turned out a session's (an answer, not an error)
    errors: int = 0
    refused: int = 0  # ids the provider refuses to this merchant account
    seconds: float = 0.0
    by_error: dict[str, int] = field(default_factory=dict)
    requests: int = 0  # HTTP requests sent, retries and authorisation included
    retries: int = 0  # of those, requests sent again
    by_reason: dict[str, int] = field(default_factory=dict)  # ids asked about, per PollReason
    claims_over_cap: int = 0  # unverified return claims due but left for the next run (the cap)
    unrecorded_over_cap: int = 0  # ids the record lacks due but left for the next run (the cap)

    def __add__(self, other: PollStats) -> PollStats:
        """Two passes (payouts, then returns) as one."""
        by_error = dict(self.by_error)
        for key, value in other.by_error.items():
            by_error[key] = by_error.get(key, 0) + value
        return PollStats(
            requested=self.requested + other.requested,
            ok=self.ok + other.ok,
            not_found=self.not_found + other.not_found,
            sessions=self.sessions + other.sessions,
            errors=self.errors + other.errors,
            refused=self.refused + other.refused,
            seconds=self.seconds + other.seconds,
            by_error=by_error,
            requests=self.requests + other.requests,
            retries=self.retries + other.retries,
            by_reason={**self.by_reason, **other.by_reason},
        )

    @property
    def per_second(self) -> float:
        return self.requested / self.seconds if self.seconds > 0 else 0.0


Sink = Callable[[Sequence[Fetched]], None]
Progress = Callable[[int], None]


async def _fetch_one(source: TransactionSource, transaction_id: str) -> Fetched:
    try:
        tx, raw = await source.get_transaction_raw(transaction_id)
    except SessionIdGiven as exc:
        return await _session_of(source, transaction_id, str(exc))
    except TransactionNotFound as exc:
        return Fetched(transaction_id, datetime.now(UTC), ObsStatus.NOT_FOUND, error=str(exc))
    except (KeysRefused, AuthorizeFailed):
        # No token (keys refused, or merchant.authorize unusable): no payout can be fetched,
        # so stop the whole poll instead of authorising once more per payout.
        raise
    except ProviderAuthError as exc:
        # Refused with a working token: this id, not the night (the limit is the poll's).
        return Fetched(transaction_id, datetime.now(UTC), ObsStatus.REFUSED, error=_refused(exc))
    except WrongTransaction as exc:
        # Not an outcome of the id asked, and not a fetch failure either: kept as its own status.
        return Fetched(
            transaction_id,
            datetime.now(UTC),
            ObsStatus.WRONG_ID,
            error=f"{exc.kind}: {exc}",
            answered_about=exc.answered,
        )
    except ProviderError as exc:
        return Fetched(transaction_id, datetime.now(UTC), ObsStatus.ERROR, error=str(exc))
    except Exception as exc:  # one payout's bug (ours or an answer's) must not stop the night
        return Fetched(transaction_id, datetime.now(UTC), ObsStatus.ERROR, error=_unexpected(exc))
    return Fetched(transaction_id, datetime.now(UTC), ObsStatus.OK, transaction=tx, raw=raw)


async def _session_of(source: TransactionSource, session_id: str, said: str) -> Fetched:
    """The id is a session's: its transaction, read with ``session.get`` (None if it has none or
    the lookup fails; the finding is made either way)."""
    try:
        session = await source.get_session(session_id)
    except (KeysRefused, AuthorizeFailed):
        raise
    except ProviderError as exc:
        said = f"{said}; session.get failed: {exc}"
        return Fetched(session_id, datetime.now(UTC), ObsStatus.SESSION, error=said)
    return Fetched(
        session_id,
        datetime.now(UTC),
        ObsStatus.SESSION,
        error=said,
        session_transaction_id=session.transaction_id,
    )


def _refused(exc: ProviderAuthError) -> str:
    """The stored error of a refused id: ``refused_id:`` then the client's message."""
    return f"refused_id: {exc}"


def _unexpected(exc: Exception) -> str:
    """A short description of an unexpected exception: its type and where it was raised. The
    message is left out (it may quote a request, a token or an answer)."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" at {Path(last.filename).name}:{last.lineno}"
    log.warning("transaction.get: unexpected %s%s", type(exc).__name__, where)
    return f"unexpected_error: {type(exc).__name__}{where}"


async def poll(
    source: TransactionSource,
    ids: Iterable[str],
    *,
    workers: int,
    sink: Sink,
    batch_size: int = 500,
    flush_seconds: float = 1.0,
    progress: Progress | None = None,
    refusals: Refusals | None = None,
) -> PollStats:
    """Fetch every id with ``workers`` concurrent workers; ``sink`` receives the answers in batches.

    ``sink`` runs in a worker thread, one batch at a time, in arrival order. If it raises, polling
    stops and the error propagates (the store is unusable; nothing more should be fetched).
    ``refusals`` is the night's tally (shared by its passes): past its limit the poll stops with
    ``TooManyRefusals``.
    """
    pending = [str(i) for i in ids]
    stats = PollStats(requested=len(pending))
    todo = iter(pending)  # shared by the workers: each id is taken by exactly one
    # Answers wait in a plain list until the writer takes them as a batch: one wake-up per batch
    # (or per flush_seconds), not a queue hand-over and a timeout per answer.
    arrived: list[Fetched] = []
    wake = asyncio.Event()
    closing = False
    started = time.perf_counter()
    n_workers = max(1, min(workers, stats.requested))

    async def worker() -> None:
        for transaction_id in todo:
            fetched = await _fetch_one(source, transaction_id)
            arrived.append(fetched)
            _count(stats, fetched)
            if refusals is not None and refusals.note(refused=fetched.status == ObsStatus.REFUSED):
                raise TooManyRefusals(refusals.stop_message())
            if len(arrived) >= batch_size:
                wake.set()

    async def writer() -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), flush_seconds)
            wake.clear()
            done = closing  # read before taking the batch: nothing can arrive after it is set
            batch = arrived[:]
            arrived.clear()
            if batch:
                await asyncio.to_thread(sink, batch)
                if progress is not None:
                    progress(len(batch))
            if done:
                return

    writer_task = asyncio.create_task(writer())
    worker_tasks = [asyncio.create_task(worker()) for _ in range(n_workers)]
    done_workers = asyncio.gather(*worker_tasks)
    try:
        # A failing sink ends the writer early: stop the workers rather than fetch into the void.
        waiters: set[asyncio.Future[Any]] = {writer_task, done_workers}
        finished, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if writer_task in finished:
            writer_task.result()  # raises the sink's error
        await done_workers
        closing = True
        wake.set()
        await writer_task
    finally:
        for task in [*worker_tasks, writer_task]:
            task.cancel()
        await asyncio.gather(*worker_tasks, writer_task, return_exceptions=True)
        # Retrieve the gathering future's own outcome too, or asyncio logs it as never retrieved.
        await asyncio.gather(done_workers, return_exceptions=True)
    stats.seconds = time.perf_counter() - started
    return stats


def _count(stats: PollStats, item: Fetched) -> None:
    if item.status == ObsStatus.OK:
        stats.ok += 1
    elif item.status == ObsStatus.NOT_FOUND:
        stats.not_found += 1
    elif item.status == ObsStatus.SESSION:
        stats.sessions += 1
    elif item.status == ObsStatus.REFUSED:
        stats.refused += 1
    else:
        stats.errors += 1
        kind = (item.error or "error").split(":", 1)[0]
        stats.by_error[kind] = stats.by_error.get(kind, 0) + 1
