"""The roll-forward's lines (issue 26): their names and shape, shared by the run, store and report.

A line is (currency, outcome, line, count, amount in integer minor units); the findings' lines
have an empty currency and no amount. The rules are :mod:`recon.reconcile.rollforward`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    NOW = "now"


RETURNS = "returns_confirmed"
FINDINGS = "findings"
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
COLUMNS = ("currency", "outcome", "line", "count", "amount_minor")


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
    the confirmed returns; the findings last; each group's lines in the order of its identity."""
    if lines.empty:
        return lines.reset_index(drop=True)
    outcome = lines["outcome"].astype(str)
    key = pd.DataFrame(
        {
            "findings": outcome == FINDINGS,
            "currency": lines["currency"].astype(str),
            "returns": outcome == RETURNS,
            "outcome": outcome,
            "line": lines["line"].astype(str).map(_ORDER),
        }
    )
    order = key.sort_values(list(key.columns), kind="stable").index
    return lines.loc[order].reset_index(drop=True)
