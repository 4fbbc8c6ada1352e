"""``recon run``: one night, start to end, in :func:`_night`: read → ask → read → decide → write →
report (docs/decisions.md, "The run's shape").

Each step is a function taking and returning values. The reads before asking (which payouts
to ask about, what is known of returns) and the asking itself (:class:`~recon.night.asking.Asking`:
one client session, one token, for every phase; each phase is handed ids) come first; the answers
go to an :class:`~recon.night.observations.Observations` port (stored as they arrive, or kept in
memory by a dry run). Between two phases, with no question out, one read finds the ids the
provider named that the record lacks (the core picks which to ask about). Then one read of what
the decision needs (:func:`_read_inputs`: the core names which payouts, the store reads them, and
the rows the roll-forward measures). Decide is pure and whole
(:func:`recon.reconcile.decide.decide`: the roll-forward's lines and breaks too). Apply writes
the decision, and the journal entries it proves (:mod:`recon.night.journal`), in one
transaction. Report builds the files from the decision kept in memory
(``recon report`` and a resumed run rebuild the same from the store) and mails them
(:mod:`recon.night.finish`). However the night ends, its end is one record handed to hooks
(:mod:`recon.night.end`): the run row, the failure's line and mail, then the caller's.

With ``RECON_PROVIDER_EXPORT=api`` the night first pulls the provider's export of the settlement
days due (:func:`recon.night.export_pull.pull_for_night`); a pull that fails is a warning, never the
night's failure.

One run at a time: the run holds a lock row in the database, and every write of the run is fenced
by it (:meth:`~recon.night.lifecycle.Run.transaction`): a run that stalled until another took
the lock over stops at its next write with ``LockLost``. A run killed half-way leaves a
``running`` (or ``applied``) row behind; the next run within ``RESUME_WINDOW`` resumes it with the
same ``as_of``, fetching only what is missing, so its reports equal an uninterrupted run's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pandas as pd
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.constants import FAILED_STATES, PollReason
from recon.counts import RunCounts
from recon.decision import Decision, KnownReturns, RunInputs
from recon.errors import StoreError
from recon.fee_settings import fee_entries
from recon.frames import PayoutsIn
from recon.ingest.configured import import_configured
from recon.night.asking import Asking
from recon.night.end import Hook, NightEnd, RunResult, run_hooks
from recon.night.export import export_match
from recon.night.export_pull import pull_for_night
from recon.night.failed import Night, failure, failure_mail, log_failure, run_row
from recon.night.finish import finish_night, report_of
from recon.night.journal import book, check_journal, journal_params
from recon.night.lifecycle import (
    RESUME_WINDOW,
    Heartbeat,
    Run,
    RunOptions,
    dry_run,
    open_run,
)
from recon.night.observations import MemoryObservations, Observations, StoredObservations
from recon.night.poll import PollStats
from recon.night.progress import Progress
from recon.night.provider_gather import ids_to_ask, provider_inputs
from recon.night.rollforward import read_rollforward
from recon.reconcile.classify import ClassifyParams
from recon.reconcile.decide import decide
from recon.reconcile.export_match import ExportMatch
from recon.reconcile.journal import JournalParams
from recon.reconcile.pricing import FeeRules
from recon.reconcile.return_evidence import known as known_returns
from recon.reconcile.return_polls import returns_to_poll
from recon.reconcile.scope import other_outcomes, payout_scope, related_reads
from recon.reconcile.watch import WatchParams
from recon.report.build import tonight
from recon.run_frames import Answers
from recon.settings import Settings
from recon.store.apply import apply_decision
from recon.store.balance import balance_inputs
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
    hooks: Sequence[Hook] = (),
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    engine: Engine | None = None,
) -> NightEnd:
    """Run the nightly reconciliation once and write its reports; see the module docstring.

    However the night ends (finished, an error, a signal), its end is one record handed to the
    night's own hooks (a nightly run that did not finish has its row closed as failed and its
    failure announced: :mod:`recon.night.failed`), then to ``hooks``, the caller's; then the
    record is returned, or the error goes on."""
    night = Night()
    own = [run_row(night), log_failure, failure_mail(settings, options)]
    with ExitStack() as held:  # the run lock, once taken, is held until every hook has run
        try:
            end = _run(settings, options, engine, night, held, transport, progress)
        except BaseException as exc:
            run_hooks(failure(settings, options, night, exc), [*own, *hooks])
            raise
        run_hooks(end, [*own, *hooks])
    return end


def _run(
    settings: Settings,
    options: RunOptions,
    engine: Engine | None,
    night: Night,
    held: ExitStack,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> NightEnd:
    engine = engine or make_engine(settings.database_url)
    try:
        ensure_schema(engine)
        if options.dry_run:
            run = dry_run(options.as_of, options.account)
            return _night(settings, options, engine, run, transport, progress)
        lock = held.enter_context(RunLock(engine, account=options.account))
        held.enter_context(Heartbeat(lock))
        night.run = open_run(lock, options.as_of)  # every write is fenced by the lock
        try:
            # A closed period after the run's day is refused before the night writes anything.
            check_journal(journal_params(settings, night.run))
            import_configured(settings, engine)  # a failure fails the night, as any other
            pull_for_night(settings, engine, night.run.account, night.run.as_of, transport)
            return _night(settings, options, engine, night.run, transport, progress)
        except BaseException as exc:
            night.raised = exc  # its cause, before a database error is worded for the command
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
) -> NightEnd:
    started = time.perf_counter()
    journal = None if run.dry else journal_params(settings, run)
    if run.only_report:  # a crash came after the decision was stored: only the reports are due
        counts = run.counts
        if journal is not None:  # what the decision proves is booked (nothing, if it was)
            with run.transaction() as conn:
                made = book(conn, run, journal)
            counts = replace(counts, journal_entries=counts.journal_entries + made)
        report = report_of(settings, engine, run, None, counts)
        return finish_night(settings, options, run, report, counts, PollStats())
    observations = _observations(engine, run)
    polls, known = _read_polls(engine, run)
    exported = export_match(settings, engine, run, polls)  # read and matched before asking
    if exported.ask:
        polls[PollReason.EXPORT] = list(exported.ask)
    decided = set(exported.decided[Answers.TRANSACTION_ID].astype(str))
    with Asking(settings, observations, transport=transport, progress=progress) as asking:
        asked = _ask_payouts_and_returns(
            settings, asking, polls, known, observations, run.as_of, decided
        )
        # Ids only the export names are asked about like any other the record lacks (the cap):
        # its row has no bank account, so the twins of an unrecorded payout need the answer.
        lacked = _read_lacked(settings, engine, run, _with(exported, observations, False), exported)
        stats = _ask_lacked(asking, asked, lacked)
    answers = _with(exported, observations)  # one frame for the scope and the decision
    del observations
    inputs = _read_inputs(settings, engine, run, polls, known, answers, stats, exported)
    saved = exported.saved
    del exported
    del answers, polls, known, asked, lacked, asking  # what asking kept goes before deciding
    decision = decide(
        inputs, as_of=run.as_of, params=_params(settings, run.account), watch=_watch(settings)
    )
    del inputs  # the answers and the run's inputs go before applying and reporting
    counts = _counts(decision, stats, seconds=time.perf_counter() - started, saved=saved)
    if not run.dry:
        counts = _apply(run, decision, counts, journal)
    kept = tonight(decision)  # what the report takes of the decision; the rest goes now
    del decision
    report = report_of(settings, engine, run, kept, counts)
    del kept  # built: the report is all that stays while the files are written
    return finish_night(settings, options, run, report, counts, stats)


def _with(
    exported: ExportMatch, observations: Observations, unrecorded: bool = True
) -> pd.DataFrame:
    """The run's answers after the export's (the export's first: an answer asked for wins);
    without ``unrecorded``, of the export's only those about recorded payouts."""
    given = exported.answers() if unrecorded else exported.decided
    if given.empty:
        return observations.answers()
    return pd.concat([given, observations.answers()], ignore_index=True).astype(Answers.dtypes())


def _observations(engine: Engine, run: Run) -> Observations:
    """Where the answers go: stored as they arrive (a resumed run's kept answers read first), or
    kept in memory by a dry run."""
    return MemoryObservations() if run.dry else StoredObservations(engine, run)


def _read_polls(engine: Engine, run: Run) -> tuple[dict[PollReason, list[str]], KnownReturns]:
    """Which payouts to ask about, and what is known of returns, before asking."""
    with engine.connect() as conn:
        polls = select_polls(conn, as_of=run.as_of, account=run.account)
        known = known_returns(load_return_reads(conn, run.id, account=run.account))
    return polls, known


@dataclass
class _Asked:
    """What the first asking phases asked (per reason) and learnt."""

    stats: PollStats
    todo: dict[PollReason, list[str]]
    claims_over_cap: int


def _ask_payouts_and_returns(
    settings: Settings,
    asking: Asking,
    polls: dict[PollReason, list[str]],
    known: KnownReturns,
    observations: Observations,
    as_of: datetime,
    decided: set[str],
) -> _Asked:
    """Ask about every payout not yet answered this run nor ``decided`` from the export, then
    about the returns the core names from those answers."""
    answered = observations.answered() | decided  # a resumed run keeps what it already has
    todo = {reason: [i for i in ids if i not in answered] for reason, ids in polls.items()}
    stats = asking.ask("polling payouts", _all(todo))
    todo[PollReason.RETURNS], over_cap = returns_to_poll(
        known,
        observations.answers(),
        as_of=as_of,
        watch=_watch(settings),
        cap=settings.claim_poll_cap,
    )
    if todo[PollReason.RETURNS]:
        stats += asking.ask("checking returns", todo[PollReason.RETURNS])
    return _Asked(stats, todo, over_cap)


def _read_lacked(
    settings: Settings, engine: Engine, run: Run, answers: pd.DataFrame, exported: ExportMatch
) -> tuple[list[str], int]:
    """The ids the provider named (in notifications and these answers) that the record lacks, to
    ask about tonight (the core picks them), and how many more were due."""
    with engine.connect() as conn:
        return ids_to_ask(
            conn,
            run_id=run.id,
            as_of=run.as_of,
            answers=answers,
            cap=settings.unrecorded_poll_cap,
            account=run.account,
            also_named=exported.named,
        )


def _ask_lacked(asking: Asking, asked: _Asked, lacked: tuple[list[str], int]) -> PollStats:
    """Ask about the ids the record lacks; every phase's counts as one."""
    stats, todo = asked.stats, asked.todo
    todo[PollReason.UNRECORDED], unrecorded_over_cap = lacked
    if todo[PollReason.UNRECORDED]:
        stats += asking.ask("asking about ids the record lacks", todo[PollReason.UNRECORDED])
    stats.requests, stats.retries = asking.requests()
    stats.by_reason = {str(reason): len(ids) for reason, ids in todo.items()}
    stats.claims_over_cap = asked.claims_over_cap
    stats.unrecorded_over_cap = unrecorded_over_cap
    return stats


def _read_inputs(
    settings: Settings,
    engine: Engine,
    run: Run,
    polls: dict[PollReason, list[str]],
    known: KnownReturns,
    answers: pd.DataFrame,
    stats: PollStats,
    exported: ExportMatch,
) -> RunInputs:
    """Everything the decision needs besides the answers, in one connection: which payouts to
    read is the core's (:func:`payout_scope`, :func:`related_reads`), the reads the store's."""
    with engine.connect() as conn:
        context = load_context(
            conn,
            run_id=run.id,
            failed_states=FAILED_STATES,
            account=run.account,
            configured=_configured_if_first(settings, run.account),
        )
        scope = payout_scope(
            poll_ids=_all(polls),
            returns=known,
            answers=answers,
            cases=context.cases,
            as_of=run.as_of,
            watch=_watch(settings),
        )
        payouts = load_payouts(conn, scope, account=run.account)
        # The payouts related to those (duplicates): named by the core, read by the store.
        reads = related_reads(payouts, context.failure_callbacks, window=settings.duplicate_window)
        payouts = load_related(conn, payouts, reads, account=run.account)
        stored = stored_outcomes(conn, account=run.account)
        provider = provider_inputs(
            conn,
            run_id=run.id,
            as_of=run.as_of,
            answers=answers,
            window=pd.Timedelta(settings.duplicate_window),
            over_cap=stats.unrecorded_over_cap,
            account=run.account,
            also_named=exported.named,
        )
        reconciled = payouts[PayoutsIn.PREV_OUTCOME].notna().to_numpy()
        rollforward = read_rollforward(
            conn,
            run_id=run.id,
            previous=context.previous_run_id,
            known=payouts.loc[reconciled, PayoutsIn.TRANSACTION_ID].astype(str),
            account=run.account,
        )
        balance = balance_inputs(conn, run.account, settings.zone)
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
        rollforward=rollforward,
        export_findings=None if exported.findings.empty else exported.findings,
        export_seen=exported.seen,
        balance=balance,
    )


def _apply(
    run: Run, decision: Decision, counts: RunCounts, journal: JournalParams | None
) -> RunCounts:
    """Store the decision (its roll-forward and cases too), book the journal entries it proves
    and mark the run applied, in one (fenced) transaction: an entry that cannot be made (a
    missing account code) leaves the store as it was. The counts with the entries made."""
    with run.transaction() as conn:
        apply_decision(
            conn,
            run_id=run.stored_id,
            as_of=run.as_of,
            checked_at=datetime.now(UTC),
            decision=decision,
            account=run.account,
        )
        counts = replace(counts, journal_entries=book(conn, run, journal))
        mark_applied(conn, run.stored_id, counts)
    return counts


def _configured_if_first(settings: Settings, account: str) -> list[str] | None:
    """The configured accounts' names when ``account`` is the first of them (in name order): its
    night also reports the callbacks kept for an account not configured, so each is reported once;
    None for every other account's night."""
    names = [a.name for a in settings.provider_accounts]
    return names if names and names[0] == account else None


def _all(polls: dict[PollReason, list[str]]) -> list[str]:
    return [i for ids in polls.values() for i in ids]


def _params(settings: Settings, account: str) -> ClassifyParams:
    return ClassifyParams(
        delay_grace=pd.Timedelta(settings.delay_grace),
        stale_days=settings.stale_days,
        duplicate_window=pd.Timedelta(settings.duplicate_window),
        fees=FeeRules(
            entries=fee_entries(settings.fees),
            tolerance=settings.fee_tolerance,
            grace=settings.fee_grace,
            zone=settings.timezone,
            account=account,
        ),
    )


def _watch(settings: Settings) -> WatchParams:
    return WatchParams(
        schedule_days=tuple(settings.watch_schedule),
        return_schedule_days=tuple(settings.return_watch_schedule),
        watch_days=settings.watch_days,
        return_watch_days=settings.return_watch_days,
        zone=settings.zone,
    )


def _counts(decision: Decision, stats: PollStats, *, seconds: float, saved: int) -> RunCounts:
    # A break is counted among the flags whenever found, among the exceptions when it opened a case.
    rolled = decision.rollforward
    breaks, opened = (len(rolled.breaks), rolled.opened) if rolled is not None else (0, 0)
    return RunCounts(
        payouts=sum(decision.outcomes.values()),
        polled=stats.requested,
        fetched=stats.ok + stats.not_found + stats.sessions,
        exceptions=sum(decision.flags.values()) - breaks + opened,
        outcomes=dict(decision.outcomes),
        flags=dict(decision.flags),
        requests=stats.requests,
        retries=stats.retries,
        polls=dict(stats.by_reason),
        polls_saved=saved,
        claims_over_cap=stats.claims_over_cap,
        provider=dict(decision.provider.counts) if decision.provider is not None else {},
        seconds=Decimal(f"{seconds:.3f}"),
        requests_per_second=Decimal(f"{stats.per_second:.1f}"),
    )
