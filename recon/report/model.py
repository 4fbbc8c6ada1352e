"""The data a report is built from: what one run found, as frames (the renderers' input contract).

The run (or ``recon report``, from the store) builds a ``ReportInput``; every renderer in this
package reads it and nothing else. Amounts are integer minor units (``Int64``), never float.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from recon.constants import FlagStatus, RunStatus
from recon.frames import empty
from recon.reconcile.statement import Row as StatementRow
from recon.rollforward_lines import frame as lines_frame
from recon.run_frames import OutcomeChanges, ReportPayouts, ReportPayoutsWithFees, Totals

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


CHANGE_COLUMNS: tuple[str, ...] = tuple(OutcomeChanges.names())


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
    previous_as_of: datetime | None = None  # of previous_run_id: a long gap means a missed night
    # Ids the provider named that the record lacks, counted: see RunCounts.provider.
    provider: Mapping[str, int] = field(default_factory=dict)


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

    def check(self) -> None:
        """Raise ``ValueError`` naming the frame and the columns it lacks."""
        for name, frame, needed in (
            ("payouts", self.payouts, PAYOUT_COLUMNS),
            ("exceptions", self.exceptions, EXCEPTION_COLUMNS),
            ("returns", self.returns, RETURN_COLUMNS),
            ("changes", self.changes, CHANGE_COLUMNS),
            ("totals", self.totals, tuple(Totals.names())),
        ):
            missing = [c for c in needed if c not in frame.columns]
            if missing:
                raise ValueError(f"report input {name!r} lacks columns: {', '.join(missing)}")
        if self.run.as_of.tzinfo is None:
            raise ValueError("report input run.as_of must be an aware datetime")
