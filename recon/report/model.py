"""The data a report is built from: what one run found, as frames (the renderers' input contract).

The run (or ``recon report``, from the store) builds a ``ReportInput``; every renderer in this
package reads it and nothing else. Amounts are integer minor units (``Int64``), never float.

One run is one provider account's night. Every frame carries the account (``provider_account``,
:data:`ACCOUNT`); a morning's report over several accounts is several nights' inputs combined
(:func:`recon.report.accounts.combine`), amounts added per account and currency, and per currency
over the accounts, never across currencies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import pandas as pd

from recon.constants import FlagStatus, RunStatus
from recon.frames import empty
from recon.reconcile.pricing import DEFAULT_ACCOUNT
from recon.reconcile.statement import Row as StatementRow
from recon.rollforward_lines import frame as lines_frame
from recon.run_frames import OutcomeChanges, ReportPayouts, ReportPayoutsWithFees, Totals

# The provider account a row belongs to: a column of every frame of the report.
ACCOUNT = "provider_account"

# Columns each frame must have; more may follow. Checked by ``ReportInput.check``.
PAYOUT_COLUMNS: tuple[str, ...] = tuple(ReportPayouts.names())
# The provider's fee, and the agreed one with the entry that priced it (<NA>: none). A report's
# payouts carry them when its run knew fees; a frame without them reports no fees.
REPORT_COLUMNS: tuple[str, ...] = tuple(ReportPayoutsWithFees.names())
FEE_COLUMNS: tuple[str, ...] = REPORT_COLUMNS[len(PAYOUT_COLUMNS) :]
EXCEPTION_COLUMNS: tuple[str, ...] = (
    "exception_id",  # stable while the same finding stays open; "E<run>-<n>"
    "item_id",
    "item_kind",
    "flag",
    "status",
    "detail",
    "amount_minor",
    "currency",
    "merchant_reference",
    "error_code",
    # A person's state: who owns it, their note, the snooze's end, when recon first
    # saw it, and the earlier resolution of an exception reopened because its facts changed.
    "owner",
    "note",
    "until",  # aware datetime (UTC) or NaT
    "opened_at",  # aware datetime (UTC) or NaT
    "previous_resolution",
    # One problem, one finding: the ids of its payouts (";"-joined), and the money at stake in
    # ``currency`` (minor units; <NA> without an amount).
    "members",
    "at_stake_minor",
)
# Statuses that need a person's action; the others are owned (acknowledged, snoozed) or shown
# once (cleared by recon, resolved by a person).
OPEN_STATUSES: tuple[FlagStatus, ...] = (FlagStatus.NEW, FlagStatus.PERSISTING)
OWNED_STATUSES: tuple[FlagStatus, ...] = (FlagStatus.ACKNOWLEDGED, FlagStatus.SNOOZED)
EXCEPTION_TIME_COLUMNS: tuple[str, ...] = ("until", "opened_at")
RETURN_COLUMNS: tuple[str, ...] = (
    "return_id",
    "original_id",
    "amount_minor",
    "currency",
    "confirmed",
    "matched",
    "notified",
)


DEFAULT_REPORT_DAYS = 7.0
_KEY_SEPARATOR = "\x1f"  # between an account and an id: in neither


CHANGE_COLUMNS: tuple[str, ...] = tuple(OutcomeChanges.names())
# The journal lines a run made (recon.reconcile.journal.JournalLine's fields), and the export
# batch each went out in (<NA>: not exported, or the run's report as the run left it). Dates are
# ``datetime.date`` values, amounts integer minor units.
JOURNAL_LINE_COLUMNS: tuple[str, ...] = (
    "provider_account",
    "journal_id",
    "line",
    "number",
    "event",
    "transaction_id",
    "merchant_reference",
    "version",
    "event_date",
    "posting_date",
    "late",
    "reverses",
    "role",
    "account",
    "debit_minor",
    "credit_minor",
    "currency",
    "batch",
)
# The balance statements (recon.reconcile.balance.Statement), one row per line: dates are
# ``datetime.date`` values, amounts integer minor units, the statement's status on each line.
BALANCE_LINE_COLUMNS: tuple[str, ...] = (
    "provider_account",
    "currency",
    "period_start",
    "period_end",
    "line",
    "count",
    "amount_minor",
    "status",
)


@dataclass(frozen=True)
class RunInfo:
    """One run: when, how it ended, how fast, and which run it is compared with."""

    run_id: int | None
    started_at: datetime | None
    finished_at: datetime | None
    as_of: datetime
    status: RunStatus  # complete / incomplete / dry_run / failed
    duration_seconds: float | None
    requests: int
    requests_per_second: float | None
    previous_run_id: int | None
    polls: Mapping[str, int] = field(default_factory=dict)  # ids asked about, per PollReason
    polls_saved: int = 0  # payouts decided from the provider's export without asking
    previous_as_of: datetime | None = None  # of previous_run_id: a long gap means a missed night
    # Ids the provider named that the record lacks, counted: see RunCounts.provider.
    provider: Mapping[str, int] = field(default_factory=dict)
    provider_account: str = DEFAULT_ACCOUNT  # whose night it is


_T = TypeVar("_T")


@dataclass(frozen=True)
class ReportInput:
    """Everything a report shows; see the module docstring for the columns."""

    run: RunInfo
    payouts: pd.DataFrame
    exceptions: pd.DataFrame
    returns: pd.DataFrame
    changes: pd.DataFrame
    timezone: str
    # Over the reporting window (RECON_REPORT_DAYS) and month to date; empty for a dry run.
    totals: pd.DataFrame = field(default_factory=lambda: empty(Totals))
    window_days: float = DEFAULT_REPORT_DAYS
    # The run's roll-forward (recon.rollforward_lines.COLUMNS), as it stored it; empty
    # for a dry run. The note says where it starts when it starts tonight.
    rollforward: pd.DataFrame = field(default_factory=lambda: lines_frame([]))
    rollforward_note: str = ""
    # The same lines read as a statement per currency (recon.reconcile.statement).
    statement: tuple[StatementRow, ...] = ()
    # The run's findings as they stand now (`recon report` of the latest run): how many actions
    # people took since the run; None: as the run reported them.
    actions_since: int | None = None
    # Each account's night, in the order the report lists the accounts; () is ``(run,)``. Of
    # several combined, ``run`` sums them up (see recon.report.accounts.combine).
    nights: tuple[RunInfo, ...] = ()
    # The label finance reads per account name (``[accounts.NAME] label``); an account without
    # one is shown by its name.
    labels: Mapping[str, str] = field(default_factory=dict)
    # Each account's statement; ``statement`` is the accounts' together, per currency.
    statements: Mapping[str, tuple[StatementRow, ...]] = field(default_factory=dict)
    # Each account's roll-forward note; ``rollforward_note`` is theirs together, each labelled.
    rollforward_notes: Mapping[str, str] = field(default_factory=dict)
    # The journal entries the nights made (:data:`JOURNAL_LINE_COLUMNS`); None: no journal is
    # configured (``[journal]``), and the report shows none of it.
    journal: pd.DataFrame | None = None
    # The balance statements of the nights' accounts (:data:`BALANCE_LINE_COLUMNS`); None: no
    # closing balance is recorded, and the report shows none of it.
    balance: pd.DataFrame | None = None
    # What :meth:`once` computed, by function: tables the HTML, the workbook and the mail all read.
    _once: dict[Callable[..., Any], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # A frame built without the account (one account's night) is that night's account's.
        account = self.run.provider_account
        for name in ("payouts", "exceptions", "returns", "changes", "totals", "rollforward"):
            frame: pd.DataFrame = getattr(self, name)
            if ACCOUNT not in frame.columns:
                column = pd.Series(account, index=frame.index, dtype="string")
                object.__setattr__(self, name, frame.assign(**{ACCOUNT: column}))
        if len(self.nights) <= 1:
            # One night is the run itself: what it keeps per account follows the run's own.
            object.__setattr__(self, "nights", (self.run,))
            mine = {account: self.statement} if self.statement else {}
            object.__setattr__(self, "statements", mine)
            note = {account: self.rollforward_note} if self.rollforward_note else {}
            object.__setattr__(self, "rollforward_notes", note)

    @property
    def accounts(self) -> tuple[str, ...]:
        """The accounts whose nights the report holds, in order."""
        return tuple(night.provider_account for night in self.nights)

    @property
    def several(self) -> bool:
        """More than one account: rows name theirs, the HTML has a filter and a section each."""
        return len(self.nights) > 1

    def label(self, account: str) -> str:
        """What finance calls ``account``: its configured label, else its name."""
        return self.labels.get(account) or account

    def once(self, compute: Callable[[ReportInput], _T]) -> _T:
        """``compute(self)``, computed on the first call only: for a table of this report that
        several files read (whoever reads it must not change it)."""
        if compute not in self._once:
            self._once[compute] = compute(self)
        result: _T = self._once[compute]
        return result

    def keyed(self, frame: pd.DataFrame, column: str) -> pd.Series:
        """``frame[column]``'s ids as keys unique over the report's accounts: of several, each
        with its account in front (the same id under two accounts is two items); of one, the
        ids themselves."""
        if not self.several:
            return frame[column]
        ids = frame[column].astype("string")
        return frame[ACCOUNT].astype("string") + _KEY_SEPARATOR + ids

    def check(self) -> None:
        """Raise ``ValueError`` naming the frame and the columns it lacks."""
        for name, frame, needed in (
            ("payouts", self.payouts, PAYOUT_COLUMNS),
            ("exceptions", self.exceptions, EXCEPTION_COLUMNS),
            ("returns", self.returns, RETURN_COLUMNS),
            ("changes", self.changes, CHANGE_COLUMNS),
            ("totals", self.totals, tuple(Totals.names())),
            ("rollforward", self.rollforward, (ACCOUNT,)),
        ):
            missing = [c for c in (ACCOUNT, *needed) if c not in frame.columns]
            if missing:
                raise ValueError(f"report input {name!r} lacks columns: {', '.join(missing)}")
        if self.journal is not None:
            missing = [c for c in JOURNAL_LINE_COLUMNS if c not in self.journal.columns]
            if missing:
                raise ValueError(f"report input 'journal' lacks columns: {', '.join(missing)}")
        if self.balance is not None:
            missing = [c for c in BALANCE_LINE_COLUMNS if c not in self.balance.columns]
            if missing:
                raise ValueError(f"report input 'balance' lacks columns: {', '.join(missing)}")
        if self.run.as_of.tzinfo is None:
            raise ValueError("report input run.as_of must be an aware datetime")


def once_per_report(compute: Callable[[ReportInput], _T]) -> Callable[[ReportInput], _T]:
    """``compute`` made once per report (:meth:`ReportInput.once`): for a table of the report that
    several of its files read, so whoever reads it must not change it."""

    @functools.wraps(compute)
    def once(data: ReportInput) -> _T:
        return data.once(compute)

    return once
