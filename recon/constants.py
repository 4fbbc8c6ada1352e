"""Names shared by every layer: outcomes, exception flags, provider states and types, exit codes.

Column names and outcome values live here, once, as ``StrEnum``/``IntEnum`` members, so a typo is a
``AttributeError`` at import time rather than an empty column in a report.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


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


class TxType(IntEnum):
    """Transaction types (interface 2.2)."""

    PAYMENT = 0
    PAYOUT = 1
    RETURNED_FUNDS = 13
    REFUND = 15


class Outcome(StrEnum):
    """Exactly one per payout after a run (issue 4)."""

    SETTLED = "settled"
    RETURNED = "returned"
    FAILED = "failed"
    ABORTED = "aborted"
    DELAYED = "delayed"
    PENDING = "pending"
    UNKNOWN = "unknown"
    UNCHECKED = "unchecked"


# Outcomes after which a payout is not polled again (returns arrive as notifications).
FINAL_OUTCOMES: frozenset[Outcome] = frozenset({Outcome.SETTLED, Outcome.RETURNED})
# Outcomes that are re-checked for RECON_RECHECK_DAYS, because banks can confirm them later.
RECHECK_OUTCOMES: frozenset[Outcome] = frozenset({Outcome.FAILED, Outcome.ABORTED, Outcome.UNKNOWN})


class Flag(StrEnum):
    """Exceptions: findings that need a person. Zero or more per item."""

    LATE_SETTLEMENT = "late_settlement"
    AMOUNT_MISMATCH = "amount_mismatch"
    CURRENCY_MISMATCH = "currency_mismatch"
    NOT_A_PAYOUT = "not_a_payout"
    UNKNOWN_TRANSACTION = "unknown_transaction"
    STALE = "stale"
    FETCH_FAILED = "fetch_failed"
    RETURN_WITHOUT_PAYOUT = "return_without_payout"
    RETURN_UNVERIFIED = "return_unverified"


class FlagStatus(StrEnum):
    """An exception compared with the previous run."""

    NEW = "new"
    PERSISTING = "persisting"
    RESOLVED = "resolved"


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
    """Process exit codes; documented in the README."""

    OK = 0
    FAILURE = 1  # unexpected error, or a dependency (database) unavailable
    USAGE = 2  # bad configuration, option or input file
    INCOMPLETE = 3  # the run finished but some payouts could not be fetched
    LOCKED = 4  # another run holds the lock
    MAIL_FAILED = 5  # reports written, but the email could not be sent
