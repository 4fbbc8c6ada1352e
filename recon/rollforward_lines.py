"""The roll-forward's lines: their names and shape, shared by the run, store and report.

A line is (currency, outcome, line, count, amount in integer minor units); the findings' lines
have an empty currency and no amount. A :class:`Mark` says where a run's roll-forward started, a
:class:`Break` is a line that does not close. The rules are :mod:`recon.reconcile.rollforward`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

import pandas as pd


class Line(StrEnum):
    """The lines of rollforward.csv, in the order they are read (a contract)."""

    PREVIOUS = "previous"
    RECORDED = "recorded"
    MOVED_IN = "moved_in"
    MOVED_OUT = "moved_out"
    RECORD_CHANGED = "record_changed"
    OPENED = "opened"
    CLOSED_BY_PEOPLE = "closed_by_people"
    CLEARED = "cleared"
    REOPENED = "reopened"
    CHARGED = "charged"  # fees: the provider's fees first seen since the previous run
    CHANGED = "changed"  # fees: a fee the provider changed (or took back) since
    NOW = "now"


RETURNS = "returns_confirmed"
FINDINGS = "findings"
FEES = "fees"  # the provider's fees on the payouts of a currency: money out beside them
PAYOUT_LINES = (
    Line.PREVIOUS,
    Line.RECORDED,
    Line.MOVED_IN,
    Line.MOVED_OUT,
    Line.RECORD_CHANGED,
    Line.NOW,
)
RETURN_LINES = (Line.PREVIOUS, Line.RECORDED, Line.RECORD_CHANGED, Line.NOW)
FINDING_LINES = (
    Line.PREVIOUS,
    Line.OPENED,
    Line.CLOSED_BY_PEOPLE,
    Line.CLEARED,
    Line.REOPENED,
    Line.NOW,
)
FEE_LINES = (Line.PREVIOUS, Line.CHARGED, Line.CHANGED, Line.NOW)
COLUMNS = ("currency", "outcome", "line", "count", "amount_minor")
# A window's history rows, each paired with the row before it, grouped by these (``Window.pairs``).
PAIR_KEYS = (
    "before_currency",
    "before_outcome",
    "after_currency",
    "after_outcome",
    "same",
    "imported",
)
PAIR_COLUMNS = (*PAIR_KEYS, "count", "before_amount", "after_amount")


def frame(rows: Iterable[tuple[str, str, str, int, int | None]]) -> pd.DataFrame:
    """Lines as a frame of :data:`COLUMNS` (``amount_minor`` nullable)."""
    out = pd.DataFrame(list(rows), columns=list(COLUMNS))
    return out.astype(
        {
            "currency": "string",
            "outcome": "string",
            "line": "string",
            "count": "int64",
            "amount_minor": "Int64",
        }
    )


_ORDER = {line.value: n for n, line in enumerate(Line)}


def ordered(lines: pd.DataFrame) -> pd.DataFrame:
    """Lines in the order rollforward.csv lists them: by currency, the payouts' outcomes, then
    the confirmed returns, then the fees; the findings last; each group's lines in the order of
    its identity."""
    if lines.empty:
        return lines.reset_index(drop=True)
    outcome = lines["outcome"].astype(str)
    key = pd.DataFrame(
        {
            "findings": outcome == FINDINGS,
            "currency": lines["currency"].astype(str),
            "fees": outcome == FEES,
            "returns": outcome == RETURNS,
            "outcome": outcome,
            "line": lines["line"].astype(str).map(_ORDER),
        }
    )
    order = key.sort_values(list(key.columns), kind="stable").index
    return lines.loc[order].reset_index(drop=True)


@dataclass(frozen=True)
class Mark:
    """Where a run's roll-forward started (the previous finished run; ``started``: that run
    stored none, so the previous position is derived), and which case actions it counted (ids
    after ``actions_after``, through ``actions_through``)."""

    previous_run_id: int | None
    started: bool
    actions_after: int
    actions_through: int


@dataclass(frozen=True)
class Break:
    """A line that does not close: ``now`` (or the named line) is off by ``count`` and ``amount``
    (minor units; None for the findings)."""

    currency: str
    outcome: str
    line: str
    count: int
    amount_minor: int | None
    run_id: int | None = None  # a line of an earlier run, measured again tonight

    @property
    def item_id(self) -> str:
        """The finding's item: ``EUR/settled/now``, ``/findings/now``, or for a line of run 7
        measured again ``EUR/settled/moved_in/run 7``."""
        run = f"/run {self.run_id}" if self.run_id is not None else ""
        return f"{self.currency}/{self.outcome}/{self.line}{run}"

    def facts(self) -> dict[str, object]:
        """What the finding is about: the currency, the outcome, the line and the difference."""
        return {
            "currency": self.currency,
            "outcome": self.outcome,
            "line": self.line,
            "count": self.count,
            "amount_minor": self.amount_minor,
            "at_stake_minor": abs(self.amount_minor) if self.amount_minor else None,
            "run_id": self.run_id,
        }
