"""``recon run``: one night, start to end, in :func:`_night`: read → ask → read → decide → write →
report (docs/decisions.md, "The run's shape").

Gather reads the store once (which payouts to poll, what is known of returns) and asks the
provider; the answers go to an :class:`~recon.night.observations.Observations` port (stored as
they arrive, or kept in memory by a dry run). Then one read of what the decision needs
(:func:`_read_inputs`: the core names which payouts, the store reads them). Decide is pure
(:func:`recon.reconcile.decide.decide`). Apply writes the decision in one transaction. Report
writes the files from what was stored (so ``recon report`` and a resumed run give the same files)
and mails them (:mod:`recon.night.finish`).

One run at a time: the run holds a lock row in the database, and every write of the run is fenced
by it (:meth:`~recon.night.lifecycle.Run.transaction`): a run that stalled until another took
the lock over stops at its next write with ``LockLost``. A run killed half-way leaves a
``running`` (or ``applied``) row behind; the next run within ``RESUME_WINDOW`` resumes it with the
same ``as_of``, fetching only what is missing, so its reports equal an uninterrupted run's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pandas as pd
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.constants import FAILED_STATES, PollReason
from recon.counts import RunCounts
from recon.decision import Decision, KnownReturns, RunInputs
from recon.errors import ConfigError, InputError, LockHeld, StoreError
from recon.ingest.configured import import_configured
from recon.night.failed import Night, announce_failure, store_failure
from recon.night.finish import finish_night
from recon.night.lifecycle import (
    RESUME_WINDOW,
    Heartbeat,
    Run,
    RunOptions,
    RunResult,
    dry_run,
    open_run,
)
from recon.night.observations import MemoryObservations, Observations, StoredObservations
from recon.night.poll import PollStats, poll
from recon.night.progress import Progress
from recon.night.provider_gather import ids_to_ask, provider_inputs
from recon.night.refusals import Refusals
from recon.night.rollforward_night import roll_forward, with_breaks
from recon.provider.client import ProviderClient
from recon.reconcile.classify import ClassifyParams
from recon.reconcile.decide import decide
from recon.reconcile.return_evidence import known as known_returns
from recon.reconcile.return_polls import returns_to_poll
from recon.reconcile.scope import other_outcomes, payout_scope, related_reads
from recon.reconcile.watch import WatchParams
from recon.settings import Settings
from recon.store.apply import apply_decision
from recon.store.db import ensure_schema, make_engine, safe_url
from recon.store.lock import RunLock
from recon.store.return_reads import load_return_reads
from recon.store.run_inputs import load_context, load_payouts, load_related, stored_outcomes
from recon.store.runs import mark_applied
from recon.store.selection import select_polls

__all__ = ["RESUME_WINDOW", "RunOptions", "RunResult", "run_reconciliation"]
log = logging.getLogger(__name__)


def run_reconciliation(
    settings: Settings,
    options: RunOptions,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    engine: Engine | None = None,
) -> RunResult:
    """Run the nightly reconciliation once and write its reports; see the module docstring.

    A nightly run that ends without finishing (an error, a signal) is closed as failed with its
    cause, and its failure announced (:mod:`recon.night.failed`), before the error goes on."""
    engine = engine or make_engine(settings.database_url)
    night = Night()
    try:
        return _run(settings, options, engine, night, transport, progress)
    except BaseException as exc:
        nothing_ran = night.run is None and isinstance(exc, InputError | ConfigError)
        if not (options.dry_run or nothing_ran or isinstance(exc, LockHeld)):
            announce_failure(settings, options, night, exc)
        raise


def _run(
    settings: Settings,
    options: RunOptions,
    engine: Engine,
    night: Night,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> RunResult:
    try:
        ensure_schema(engine)
        if options.dry_run:
            return _night(settings, options, engine, dry_run(options.as_of), transport, progress)
        with RunLock(engine) as lock, Heartbeat(lock):
            night.run = open_run(lock, options.as_of)  # every write is fenced by the lock
            try:
                import_configured(settings, engine)  # a failure fails the night, as any other
                return _night(settings, options, engine, night.run, transport, progress)
            except BaseException as exc:
                store_failure(settings, night, exc)
                raise
    except SQLAlchemyError as exc:
        # What was stored stays consistent (each write is one transaction); the next run resumes.
        reason = getattr(exc, "orig", None) or exc
        raise StoreError(
            f"the database {safe_url(engine.url)} failed during the run: {reason}"
        ) from None


def _night(
    settings: Settings,
    options: RunOptions,
    engine: Engine,
    run: Run,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> RunResult:
    started = time.perf_counter()
    if run.only_report:  # a crash came after the decision was stored: only the reports are due
        return finish_night(settings, options, engine, run, None, run.counts, PollStats(), started)
    decision, stats = _gather_and_decide(settings, engine, run, transport, progress)
    counts = _counts(decision, stats, seconds=time.perf_counter() - started)
    if not run.dry:
        counts = _apply(run, decision, counts)
    # A stored run reports from the store: its decision goes before the reports are built.
    kept = decision if run.dry else None
    del decision
    return finish_night(settings, options, engine, run, kept, counts, stats, started)


def _gather_and_decide(
    settings: Settings,
    engine: Engine,
    run: Run,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> tuple[Decision, PollStats]:
    """Poll, read what the decision needs, decide. The answers kept while polling and the run's
    inputs go when this returns, before applying and reporting, where a night's memory peaks
    (~150 MB for 124,000 answers: BENCHMARKS.md, "Steady state")."""
    observations = MemoryObservations() if run.dry else StoredObservations(engine, run)
    with engine.connect() as conn:
        polls = select_polls(conn, as_of=run.as_of)
        known = known_returns(load_return_reads(conn, run.id))

    def unrecorded(answers: pd.DataFrame) -> tuple[list[str], int]:
        with engine.connect() as conn:
            return ids_to_ask(
                conn,
                run_id=run.id,
                as_of=run.as_of,
                answers=answers,
                cap=settings.unrecorded_poll_cap,
            )

    stats = asyncio.run(
        _gather(settings, transport, progress, polls, known, observations, run.as_of, unrecorded)
    )
    answers = observations.answers()  # one frame for the scope and the decision
    del observations
    inputs = _read_inputs(settings, engine, run, polls, known, answers, stats)
    decision = decide(inputs, as_of=run.as_of, params=_params(settings), watch=_watch(settings))
    return decision, stats


def _read_inputs(
    settings: Settings,
    engine: Engine,
    run: Run,
    polls: dict[PollReason, list[str]],
    known: KnownReturns,
    answers: pd.DataFrame,
    stats: PollStats,
) -> RunInputs:
    """Everything the decision needs besides the answers, in one connection: which payouts to
    read is the core's (:func:`payout_scope`, :func:`related_reads`), the reads the store's."""
    with engine.connect() as conn:
        context = load_context(conn, run_id=run.id, failed_states=FAILED_STATES)
        scope = payout_scope(
            poll_ids=_all(polls),
            returns=known,
            answers=answers,
            cases=context.cases,
            as_of=run.as_of,
            watch=_watch(settings),
        )
        payouts = load_payouts(conn, scope)
        # The payouts related to those (duplicates): named by the core, read by the store.
        reads = related_reads(payouts, context.failure_callbacks, window=settings.duplicate_window)
        payouts = load_related(conn, payouts, reads)
        stored = stored_outcomes(conn)
        provider = provider_inputs(
            conn,
            run_id=run.id,
            as_of=run.as_of,
            answers=answers,
            window=pd.Timedelta(settings.duplicate_window),
            over_cap=stats.unrecorded_over_cap,
        )
    return RunInputs(
        payouts=payouts,
        other_outcomes=other_outcomes(stored, payouts),
        poll_ids=frozenset(_all(polls)),
        answers=answers,
        returns=known,
        previous_run_id=context.previous_run_id,
        run_id=run.id,
        cases=context.cases,
        failure_callbacks=context.failure_callbacks,
        record_changes=context.record_changes,
        unreadable_notifications=context.unreadable_notifications,
        provider=provider,
    )


def _apply(run: Run, decision: Decision, counts: RunCounts) -> RunCounts:
    """Store the decision, its roll-forward, and mark the run applied, in one (fenced)
    transaction; the counts with the roll-forward's breaks."""
    with run.transaction() as conn:
        apply_decision(
            conn,
            run_id=run.stored_id,
            as_of=run.as_of,
            checked_at=datetime.now(UTC),
            decision=decision,
        )
        rolled = roll_forward(conn, run_id=run.stored_id, as_of=run.as_of)
        counts = with_breaks(counts, rolled)
        mark_applied(conn, run.stored_id, counts)
    return counts


async def _gather(
    settings: Settings,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
    polls: dict[PollReason, list[str]],
    known: KnownReturns,
    observations: Observations,
    as_of: datetime,
    unrecorded: Callable[[pd.DataFrame], tuple[list[str], int]] | None = None,
) -> PollStats:
    """Ask about every payout not yet answered this run, then about the returns that need it,
    then about the ids the provider named that the record lacks (``unrecorded`` picks them)."""
    refusals = Refusals(limit=settings.refused_limit)  # one tally for every pass
    async with ProviderClient.from_settings(settings, transport=transport) as client:
        await client.ensure_token()  # even with nothing due: a dead provider fails the night
        answered = observations.answered()  # a resumed run keeps what it already has
        todo = {reason: [i for i in ids if i not in answered] for reason, ids in polls.items()}
        stats = await _poll(
            client, "polling payouts", _all(todo), observations, settings, progress, refusals
        )
        todo[PollReason.RETURNS], over_cap = returns_to_poll(
            known,
            observations.answers(),
            as_of=as_of,
            watch=_watch(settings),
            cap=settings.claim_poll_cap,
        )
        if todo[PollReason.RETURNS]:
            stats += await _poll(
                client,
                "checking returns",
                todo[PollReason.RETURNS],
                observations,
                settings,
                progress,
                refusals,
            )
        unrecorded_over_cap = 0
        if unrecorded is not None:
            todo[PollReason.UNRECORDED], unrecorded_over_cap = unrecorded(observations.answers())
            if todo[PollReason.UNRECORDED]:
                stats += await _poll(
                    client,
                    "asking about ids the record lacks",
                    todo[PollReason.UNRECORDED],
                    observations,
                    settings,
                    progress,
                    refusals,
                )
        stats.requests = client.stats.requests
        stats.retries = client.stats.retries
        stats.by_reason = {str(reason): len(ids) for reason, ids in todo.items()}
        stats.claims_over_cap = over_cap
        stats.unrecorded_over_cap = unrecorded_over_cap
    if progress is not None:
        progress.stop()
    return stats


async def _poll(
    client: ProviderClient,
    label: str,
    ids: list[str],
    observations: Observations,
    settings: Settings,
    progress: Progress | None,
    refusals: Refusals,
) -> PollStats:
    if progress is not None:
        progress.start(label, len(ids))
    advance = progress.advance if progress is not None else None
    return await poll(
        client,
        ids,
        workers=settings.concurrency,
        sink=observations.add,
        progress=advance,
        refusals=refusals,
    )


def _all(polls: dict[PollReason, list[str]]) -> list[str]:
    return [i for ids in polls.values() for i in ids]


def _params(settings: Settings) -> ClassifyParams:
    return ClassifyParams(
        delay_grace=pd.Timedelta(settings.delay_grace),
        stale_days=settings.stale_days,
        duplicate_window=pd.Timedelta(settings.duplicate_window),
    )


def _watch(settings: Settings) -> WatchParams:
    return WatchParams(
        schedule_days=tuple(settings.watch_schedule),
        return_schedule_days=tuple(settings.return_watch_schedule),
        watch_days=settings.watch_days,
        return_watch_days=settings.return_watch_days,
        zone=settings.zone,
    )


def _counts(decision: Decision, stats: PollStats, *, seconds: float) -> RunCounts:
    return RunCounts(
        payouts=sum(decision.outcomes.values()),
        polled=stats.requested,
        fetched=stats.ok + stats.not_found + stats.sessions,
        exceptions=sum(decision.flags.values()),
        outcomes=dict(decision.outcomes),
        flags=dict(decision.flags),
        requests=stats.requests,
        retries=stats.retries,
        polls=dict(stats.by_reason),
        claims_over_cap=stats.claims_over_cap,
        provider=dict(decision.provider.counts) if decision.provider is not None else {},
        seconds=Decimal(f"{seconds:.3f}"),
        requests_per_second=Decimal(f"{stats.per_second:.1f}"),
    )
