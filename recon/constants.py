"""Names shared by every layer: outcomes, provider states and types, statuses, exit codes.

The kinds of finding are declared beside their rules and collected in :mod:`recon.reconcile.kinds`.

Column names and outcome values live here, once, as ``StrEnum``/``IntEnum`` members, so a typo is a
``AttributeError`` at import time rather than an empty column in a report.
"""

from __future__ import annotations

from datetime import date
from enum import IntEnum, StrEnum

# The provider account of a store, a run and every row when no [accounts.NAME] is configured: the
# one name of the default account everywhere (the store's provider_account column defaults to it).
DEFAULT_ACCOUNT = "default"

# Ids are kept in columns of this many characters (recon.store.types.Id): a longer one is refused
# where it comes in, naming it, never cut or left to fail the write.
MAX_ID_LENGTH = 255
# Run, batch and row numbers are BIGINT (SQLite's INTEGER too): an option past this is refused.
MAX_NUMBER = 2**63 - 1

# The days a payout, a balance, a snooze or a night can have (every date and time option is held
# to them): the provider's times count from the epoch, and a year's room is left below the
# calendar's end for the day windows built around a day.
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(9998, 12, 31)


class TxState(IntEnum):
    """Transaction states (interface 3.2, provider notes for 0 and 1)."""

    CREATED = 0
    PENDING = 1
    ABORTED = 2
    FAILED = 3
    COMPLETED = 4
    CREDIT = 5
    SETTLED = 6
    DEBIT = 7


class SessionState(IntEnum):
    """Session states (interface 3.1). Which of 10 and 11 means a known cause is unresolved."""

    ABORTED = 10
    FAILED = 11
    COMPLETED = 12


# States a transaction notification reports a payout as failed in: evidence, not outcome.
FAILED_STATES: frozenset[TxState] = frozenset({TxState.ABORTED, TxState.FAILED})


# Error names of a transaction.get answer saying the id is a session's
# (RECON_SESSION_FOUND_ERROR_NAMES).
SESSION_FOUND_ERROR_NAMES: tuple[str, ...] = ("session_found",)


class TxType(IntEnum):
    """Transaction types (interface 2.2)."""

    PAYMENT = 0
    PAYOUT = 1
    RETURNED_FUNDS = 13
    REFUND = 15


class Outcome(StrEnum):
    """Exactly one per payout after a run."""

    SETTLED = "settled"
    RETURNED = "returned"
    FAILED = "failed"
    ABORTED = "aborted"
    DELAYED = "delayed"
    PENDING = "pending"
    UNKNOWN = "unknown"
    UNCHECKED = "unchecked"


# Outcomes still moving: every run asks about them.
OPEN_OUTCOMES: frozenset[Outcome] = frozenset({Outcome.PENDING, Outcome.DELAYED, Outcome.UNCHECKED})
# Outcomes a bank can still change (2/3 -> 5 -> 6 has no time limit): watched for
# RECON_WATCH_DAYS on RECON_WATCH_SCHEDULE.
# The money never left: failed (state 3) or aborted (state 2).
FAILED_OUTCOMES: tuple[Outcome, ...] = (Outcome.FAILED, Outcome.ABORTED)
WATCHED_OUTCOMES: frozenset[Outcome] = frozenset({*FAILED_OUTCOMES, Outcome.UNKNOWN})
# The money reached the recipient: a confirmed return on one of these is money back (on any other
# outcome it is the finding return_on_unsettled, not money back).
SETTLED_OUTCOMES: tuple[Outcome, ...] = (Outcome.SETTLED, Outcome.RETURNED)
# Settled payouts whose answer may come to name a type-13 return (its notification may be lost):
# re-checked for RECON_RETURN_WATCH_DAYS on RECON_RETURN_WATCH_SCHEDULE.
RETURN_WATCHED_OUTCOMES: frozenset[Outcome] = frozenset(SETTLED_OUTCOMES)


class PollReason(StrEnum):
    """Why a run asks the provider about an id (each id is counted under its first reason)."""

    OPEN = "open"
    WATCH = "watch"
    RETURN_WATCH = "return watch"
    CALLBACK_HINT = "callback hint"
    RETURNS = "returns"
    RECORD_CHANGED = "record changed"  # an import changed a compared field since the last answer
    UNRECORDED = "unrecorded"  # ids the provider named that the record lacks
    EXPORT = "export"  # a row of the provider's export disagrees with the latest answer


class ItemStatus(StrEnum):
    """Where an id the provider named that the record lacks stands (``provider_items.status``)."""

    UNASKED = "unasked"  # named, not answered yet (or every fetch so far failed)
    PAYOUT = "payout"  # a type-1 payout the record lacks: the finding unrecorded_payout
    OTHER = "other"  # another type (a payment, a refund, a return) or a session's id: counted
    UNKNOWN = "unknown"  # the provider does not know it (forged or mistyped): counted
    RECORDED = "recorded"  # the merchant's record has it now: nothing more to do


# Items a night reads again: still unanswered, or a payout the record still lacks.
LIVE_ITEM_STATUSES: frozenset[ItemStatus] = frozenset({ItemStatus.UNASKED, ItemStatus.PAYOUT})


class ObsStatus(StrEnum):
    """How one ``transaction.get`` ended: an answer, "not found", or nothing usable."""

    OK = "ok"
    NOT_FOUND = "not_found"
    SESSION = "session"  # the id is a session's; related_transaction_id holds its transaction
    # The answer is about another id (never an outcome); related_transaction_id holds that id.
    WRONG_ID = "wrong_id"
    ERROR = "error"
    REFUSED = "refused"  # 401/403 with a working token: refused to this merchant account


# Statuses that are an answer about the id (a fetch that ended so is not repeated by a resumed run).
ANSWERED: frozenset[ObsStatus] = frozenset({ObsStatus.OK, ObsStatus.NOT_FOUND, ObsStatus.SESSION})
# Statuses of a fetch that got no answer about the id (fetch_failed).
NOT_FETCHED: frozenset[ObsStatus] = frozenset({ObsStatus.ERROR, ObsStatus.REFUSED})


class RunStatus(StrEnum):
    """A row of the run log."""

    RUNNING = "running"
    APPLIED = "applied"  # outcomes written, reports not yet: a resumed run writes only those
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    FAILED = "failed"
    DRY_RUN = "dry_run"


# Runs whose outcomes are final and whose exceptions the next run compares with.
FINISHED_RUNS: frozenset[RunStatus] = frozenset({RunStatus.COMPLETE, RunStatus.INCOMPLETE})
# Runs that stopped before their end: the next run within the resume window continues them.
UNFINISHED_RUNS: frozenset[RunStatus] = frozenset({RunStatus.RUNNING, RunStatus.APPLIED})


class FlagStatus(StrEnum):
    """Where an exception stands in a run's report.

    recon sets ``new`` (first seen by this run), ``persisting`` (seen before, still open) and
    ``cleared`` (the condition went away by itself; shown once). A person sets ``acknowledged``
    (owned, not needing action), ``snoozed`` (until a date, then back in "Needs action") and
    ``resolved`` (closed with a reason; shown once, in "Resolved since the last run").
    """

    NEW = "new"
    PERSISTING = "persisting"
    ACKNOWLEDGED = "acknowledged"
    SNOOZED = "snoozed"
    CLEARED = "cleared"
    RESOLVED = "resolved"


class CaseState(StrEnum):
    """Where an exception's case stands between runs (``exception_cases.state``)."""

    OPEN = "open"  # needs action (reported new or persisting)
    ACKNOWLEDGED = "acknowledged"
    SNOOZED = "snoozed"
    RESOLVED = "resolved"  # closed by a person
    CLEARED = "cleared"  # closed by recon: the condition went away


# Cases a person may still act on; the others are closed.
LIVE_CASE_STATES: frozenset[CaseState] = frozenset(
    {CaseState.OPEN, CaseState.ACKNOWLEDGED, CaseState.SNOOZED}
)


class CaseAction(StrEnum):
    """What a person (or a run, by itself) did to a case; ``exception_actions.action``."""

    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"
    SNOOZE = "snooze"
    REOPEN = "reopen"
    FACTS_CHANGED = "facts_changed"  # a run reopened it: another amount, state or return
    SNOOZE_ENDED = "snooze_ended"  # a run put it back in "Needs action"
    MERGED = "merged"  # one problem: a run carried this case into another (both histories say so)


# The resolutions `recon exceptions apply` reads, and the commands of the same names.
PERSON_ACTIONS: tuple[CaseAction, ...] = (
    CaseAction.ACKNOWLEDGE,
    CaseAction.RESOLVE,
    CaseAction.SNOOZE,
    CaseAction.REOPEN,
)


class NotificationKind(StrEnum):
    """The three notification bodies of interface section 6, and bodies that are none of them."""

    SESSION = "session"
    TRANSACTION = "transaction"
    RETURNED_FUNDS = "returned_funds"
    UNKNOWN = "unknown"  # stored raw; its ids could not be read (see ParseStatus.UNPARSED)


class ParseStatus(StrEnum):
    """How much of a stored notification recon could read; the reason is kept beside it."""

    PARSED = "parsed"  # every field recon uses was read
    PARTIAL = "partial"  # kind and ids read; a state or amount was not (left empty)
    UNPARSED = "unparsed"  # not a notification recon can tell: kind UNKNOWN, no ids


class NotificationSource(StrEnum):
    RECEIVER = "receiver"
    FILE = "file"


class ExitCode(IntEnum):
    """Process exit codes; documented in docs/operations.md."""

    OK = 0
    FAILURE = 1  # unexpected error, or a dependency (database) unavailable
    USAGE = 2  # bad configuration, option or input file
    INCOMPLETE = 3  # the run finished but some payouts could not be fetched
    LOCKED = 4  # another run holds the lock (or took it from this run, which stopped)
    MAIL_FAILED = 5  # reports written, but the email could not be sent
