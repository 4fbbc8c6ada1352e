"""What a run decides from and what it decided: plain data for the run, the store and reports.

A neutral module (like :mod:`recon.frames`, whose column contracts these frames follow): the store
builds :class:`RunInputs` and writes a :class:`Decision`, the pure core
(:func:`recon.reconcile.decide.decide`) turns one into the other, and the reports read a decision
(dry run) or what the store kept of one. Nothing here reads, writes or decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Any

import pandas as pd

from recon.constants import CaseAction
from recon.export_rows import Closing, ExportRow
from recon.frames import empty
from recon.rollforward_lines import Break, Mark
from recon.run_frames import (
    Answers,
    Cases,
    Claims,
    FailureCallbacks,
    RecordChanges,
    UnreadableNotifications,
    Watched,
)


def answers_frame(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    """Rows in :class:`~recon.run_frames.Answers` order as the typed answers frame."""
    return pd.DataFrame(rows, columns=Answers.names()).astype(Answers.dtypes())


@dataclass(frozen=True)
class KnownReturns:
    """What the store knew of returned-funds transactions when the run started.

    ``notices``: one row per stored RETURNED_TRANSACTION notification (return_id,
    claimed_original_id, claimed_amount), oldest first. ``earlier``: per id announced or ever
    answered as type 13, the latest ``ok`` answer of another run, or its ``not_found`` one when
    that is later and a run confirmed the return (``run_frames.EarlierAnswers``; without a
    ``status`` column every row is ``ok``).
    ``confirmations``: per return, the payout the latest earlier run confirmed it for (return_id,
    confirmed_original_id). ``seen13``: ids some earlier run saw answered ``ok`` as type 13.
    ``claims``: per announced id, when its latest notification came, and when runs first and
    last asked about it since (return_id, last_notified_at, first_asked_at, last_asked_at; NaT:
    not asked since).
    ``watched``: per return an earlier run confirmed, when the first such run's clock said
    (``as_of``) and the provider's amount and currency then, and when a run last asked about it
    (return_id, confirmed_at, confirmed_amount_minor, confirmed_currency, last_asked_at; NaT:
    no ask on record).
    ``previous_started_at``: when the previous finished run started (None: there is none).
    """

    notices: pd.DataFrame
    earlier: pd.DataFrame
    confirmations: pd.DataFrame
    seen13: frozenset[str] = frozenset()
    claims: pd.DataFrame = field(default_factory=lambda: empty(Claims))
    previous_started_at: datetime | None = None
    watched: pd.DataFrame = field(default_factory=lambda: empty(Watched))


@dataclass(frozen=True)
class ReturnReads:
    """What the store holds of returned-funds transactions, as read, before the core judges it
    (:func:`recon.reconcile.return_evidence.known` makes the :class:`KnownReturns` of it).

    ``answers``: every answer of another run that says type 13, or is about an id announced or
    ever confirmed (``id`` and ``run_frames.EarlierAnswers``, oldest first), whatever its status.
    ``confirmed_ids``: every return a run confirmed. ``notified``: per announced id, when its
    latest notification came (return_id, last_notified_at). ``asks``: every answer of another run
    about an announced id, with that run's clock and start (transaction_id, as_of, started_at).
    The rest are :class:`~recon.decision.KnownReturns`' own.
    """

    notices: pd.DataFrame
    answers: pd.DataFrame
    confirmed_ids: frozenset[str]
    confirmations: pd.DataFrame
    notified: pd.DataFrame
    asks: pd.DataFrame
    watched: pd.DataFrame
    previous_started_at: datetime | None = None


@dataclass(frozen=True)
class CaseDecision:
    """What a run does to cases: the report's exceptions, and the writes that go with them.

    ``exceptions``: :class:`recon.frames.Compared` plus :class:`recon.run_frames.CaseReport`,
    statuses of :class:`~recon.constants.FlagStatus`; hidden rows (a person's resolution already
    listed) are left out. ``opened``: new cases to insert. ``changed``: updates of existing cases,
    each with the ``version`` it was read at (a person's change since wins). ``actions``: what the
    run did by itself (reopened on new facts, a snooze ended), for the audit table.
    """

    exceptions: pd.DataFrame
    opened: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ActionRequest:
    """One action a person asks for; ``where`` says where it came from (for problems and audit)."""

    exception_id: str
    action: CaseAction
    note: str | None
    by: str
    until: datetime | None = None
    where: str = "command line"
    decided_by: str | None = None  # who a file sent back says decided (``by`` ran ``apply``)


@dataclass(frozen=True)
class CaseStanding:
    """Where a case stands when a person acts on it (``ended_run_id``: None while it is live;
    ``until``: a snooze's end, which the mailed files show)."""

    exception_id: str
    state: str
    ended_run_id: int | None
    until: datetime | None = None


@dataclass(frozen=True)
class PersonChange:
    """A person's action as it is written: the case's new state and its history row."""

    request: ActionRequest
    previous_state: str
    state: str
    owner: str | None
    note: str | None
    until: datetime | None
    at: datetime


@dataclass(frozen=True)
class Applied:
    """One action applied: the case, its state before and after."""

    exception_id: str
    action: CaseAction
    previous_state: str
    state: str


@dataclass(frozen=True)
class PayoutScope:
    """The payouts a run decides: these ids, flagged ones, and unscheduled watched outcomes.

    ``ids``: named outright (asked about, named by the previous run's exceptions or by a return).
    ``unscheduled``: per group of watched outcomes (their values), the earliest ``outcome_since``
    still inside the group's window: a payout with one of those outcomes, no ``next_check_at``,
    and an outcome seen since then (or at an unknown time) is read too.
    """

    ids: frozenset[str]
    unscheduled: tuple[tuple[frozenset[str], datetime], ...]


@dataclass(frozen=True)
class PartyRange:
    """Payouts to one bank account or customer (``party``: the column) of one amount, created
    from ``since`` to ``until`` (inclusive; None: open), and with no ``created`` if ``undated``."""

    party: str
    who: str
    amount_minor: int
    since: datetime | None
    until: datetime | None
    undated: bool


@dataclass(frozen=True)
class RelatedReads:
    """The payouts a run reads beside its scope, to decide duplicates: by ``merchant_reference``
    and by party ranges (:func:`recon.reconcile.scope.related_reads` computes them; the store
    reads them by index)."""

    references: frozenset[str] = frozenset()
    ranges: tuple[PartyRange, ...] = ()


@dataclass(frozen=True)
class Window:
    """One run's movements as its rows say (a run window: the runs after one, through another).

    ``pairs``: the window's history rows, each paired with the payout's row before it, counted
    per before/after record and outcome (:func:`recon.store.rollforward_reads.payout_pairs`).
    ``returns_before``, ``returns_after``: the confirmed returns (return_id, currency,
    amount_minor) of the run before the window and of its last run. ``findings``: the
    ``opened``, ``closed_by_people``, ``cleared`` and ``reopened`` lines.
    """

    pairs: pd.DataFrame
    returns_before: pd.DataFrame
    returns_after: pd.DataFrame
    findings: pd.DataFrame


@dataclass(frozen=True)
class RollForwardInputs:
    """What the roll-forward measures from the store, read before the decision.

    ``mark``: where tonight's roll-forward starts (:func:`recon.reconcile.rollforward.mark_of`).
    ``previous``: the lines the previous finished run stored (none: it stored none).
    ``tonight``: tonight's window as its rows stand before tonight's own are written (rows of a
    run that failed after writing them, the actions of people since the previous run's mark).
    ``again``: the previous run's window measured again (None: it stored no mark).
    ``payouts_now``: ``now`` of every stored payout (lines) before tonight's decision.
    ``records``: of the payouts read for the decision, those whose latest history row kept another
    amount or currency than the payout has: that row's (transaction_id, currency, amount_minor).
    """

    mark: Mark
    previous: pd.DataFrame
    tonight: Window
    payouts_now: pd.DataFrame
    records: pd.DataFrame
    again: Window | None = None


@dataclass(frozen=True)
class RollForward:
    """Tonight's roll-forward: its lines (as rollforward.csv lists them), where it started, its
    history rows paired (:attr:`Window.pairs`; the statement reads where each payout moved), every
    line that does not close, and how many of those opened a case (the others stand)."""

    lines: pd.DataFrame
    mark: Mark
    pairs: pd.DataFrame
    breaks: tuple[Break, ...] = ()
    opened: int = 0


@dataclass(frozen=True)
class RunInputs:
    """Everything :func:`recon.reconcile.decide.decide` needs, read once after polling.

    ``payouts``: the payouts the run decides with their previous reconciled state
    (:class:`recon.frames.PayoutsIn` without ``polled``): all of them, or those of a
    :class:`PayoutScope`. ``other_outcomes``: how many stored payouts outside ``payouts`` have
    each outcome (they keep it; empty when ``payouts`` holds them all). ``poll_ids``: the ids
    the run set out to poll (chosen once, before polling). ``answers``: every answer this run got
    (``run_frames.Answers``, oldest first; a resumed run's include those from before the crash).
    ``cases``: every live case (:class:`recon.run_frames.Cases`), the only record of where
    findings stand. ``failure_callbacks``: the first transaction notification per payout that said
    it failed or was aborted (:class:`recon.run_frames.FailureCallbacks`).
    ``unreadable_notifications``: notifications received since the previous finished run started
    that recon could not read in full (:class:`recon.run_frames.UnreadableNotifications`).
    ``record_changes``: every live change an import made to a reconciled payout's record
    (:class:`recon.run_frames.RecordChanges`; answered: a run has had an answer since).
    """

    payouts: pd.DataFrame
    poll_ids: frozenset[str]
    answers: pd.DataFrame
    returns: KnownReturns
    previous_run_id: int | None
    run_id: int | None = None  # this run's (None: a dry run); new cases are named after it
    cases: pd.DataFrame = field(default_factory=lambda: empty(Cases))
    other_outcomes: Mapping[str, int] = field(default_factory=dict)
    unreadable_notifications: pd.DataFrame = field(
        default_factory=lambda: empty(UnreadableNotifications)
    )
    failure_callbacks: pd.DataFrame = field(default_factory=lambda: empty(FailureCallbacks))
    record_changes: pd.DataFrame = field(default_factory=lambda: empty(RecordChanges))
    provider: ProviderInputs | None = None  # the provider's side; None: not read
    rollforward: RollForwardInputs | None = None  # None: not read (no roll-forward)
    # The findings of the export's match (recon.reconcile.export_match); None: no export stored.
    export_findings: pd.DataFrame | None = None
    export_seen: frozenset[str] = frozenset()  # the payouts the export's match read rows about
    balance: BalanceInputs | None = None  # None: no closing balance recorded (no statement)


@dataclass(frozen=True)
class BalanceInputs:
    """The run's account's balance statements' inputs (:mod:`recon.reconcile.balance`):
    ``closings``, every closing recorded; ``rows``, the latest version of each export row
    settled in their span; ``covered``, the settlement days the export covers whole (files not
    cut at the cap); ``zone``, where a settlement day is read (``RECON_TIMEZONE``)."""

    closings: tuple[Closing, ...]
    rows: tuple[ExportRow, ...]
    covered: frozenset[date]
    zone: tzinfo


@dataclass(frozen=True)
class ProviderInputs:
    """The provider's side of a run, read after polling.

    ``items``: the live provider-side items and those named for the first time this run
    (:class:`recon.run_frames.ProviderItems`). ``recorded_ids``: which of their ids the record has
    now. ``attempts``: creates without a transaction id not matched yet
    (:class:`recon.run_frames.Attempts`). ``recorded``: recorded payouts sharing a reference, or an
    account and amount, with an item or an attempt (:class:`recon.run_frames.Recorded`).
    ``window``: RECON_DUPLICATE_WINDOW. ``over_cap``: ids
    due but left for the next run (RECON_UNRECORDED_POLL_CAP).
    """

    items: pd.DataFrame
    attempts: pd.DataFrame
    recorded: pd.DataFrame
    window: pd.Timedelta
    recorded_ids: frozenset[str] = frozenset()
    over_cap: int = 0


@dataclass(frozen=True)
class ProviderSide:
    """What a run concluded of the provider's side: the items as they now stand (to write), the
    attempts matched (attempt id, transaction id), and what the footer counts."""

    items: pd.DataFrame
    matches: pd.DataFrame
    counts: Mapping[str, int]


@dataclass(frozen=True)
class Decision:
    """What a run concluded.

    ``payouts``: every payout decided, classified (:class:`recon.frames.PayoutsIn`,
    ``PayoutsOut`` and ``PayoutsDecided``). ``exceptions``: this run's exceptions compared with the
    previous run's (:class:`recon.frames.Compared`). ``returns``: every known return as judged
    (:class:`recon.frames.ReturnsOut`). ``outcomes``: how many stored payouts have each outcome
    after the run (those decided and the others); ``flags``: how many of each this run found.
    ``changes_answered``: record changes (ids) this run had an answer about (no longer asked
    about); ``changes_closed``: record changes that end (seen, or their finding resolved).
    ``rollforward``: tonight's lines and breaks (their cases are among ``cases``; ``flags``
    counts every break found).
    """

    payouts: pd.DataFrame
    exceptions: pd.DataFrame
    returns: pd.DataFrame
    previous_run_id: int | None
    outcomes: Mapping[str, int]
    flags: Mapping[str, int]
    cases: CaseDecision = field(default_factory=lambda: CaseDecision(exceptions=pd.DataFrame()))
    changes_answered: tuple[int, ...] = ()
    changes_closed: tuple[int, ...] = ()
    provider: ProviderSide | None = None
    rollforward: RollForward | None = None
