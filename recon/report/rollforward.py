"""The roll-forward as the report shows it: one row per currency and outcome, its lines
side by side, and a sentence when it starts tonight.

rollforward.csv holds the lines one per row (:func:`recon.report.tables.rollforward_columns`);
report.html, the workbook's "Roll-forward" sheet and the text email read them from here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon.report.fmt import money
from recon.report.model import ReportInput
from recon.rollforward_lines import FINDING_LINES, FINDINGS, PAYOUT_LINES, Line

# The headings of the lines, in the order of the payouts' identity.
HEADINGS = {
    Line.PREVIOUS: "previous",
    Line.RECORDED: "recorded",
    Line.MOVED_IN: "moved in",
    Line.MOVED_OUT: "moved out",
    Line.RECORD_CHANGED: "record changed",
    Line.NOW: "now",
    Line.OPENED: "opened",
    Line.CLOSED_BY_PEOPLE: "closed by people",
    Line.CLEARED: "cleared",
    Line.REOPENED: "reopened",
}


def rows(data: ReportInput) -> list[dict[str, Any]]:
    """Per currency and outcome: its lines as ``cells`` (count, amount text) in
    :data:`PAYOUT_LINES` order (the returns lack moves, the findings' lines are their own)."""
    lines = data.rollforward
    out: list[dict[str, Any]] = []
    for (cur, outcome), group in lines.groupby(["currency", "outcome"], sort=False):
        by_line = {str(r["line"]): r for r in group.to_dict("records")}
        order = FINDING_LINES if outcome == FINDINGS else PAYOUT_LINES
        cells: list[dict[str, Any]] = []
        for line in order:
            r = by_line.get(line.value)
            if r is None:
                cells.append({"line": HEADINGS[line], "count": None, "amount": ""})
                continue
            minor = r["amount_minor"]
            amount = "" if pd.isna(minor) else money(int(minor), str(cur))
            cells.append({"line": HEADINGS[line], "count": int(r["count"]), "amount": amount})
        out.append({"currency": str(cur), "outcome": str(outcome), "cells": cells})
    return out


def text_block(data: ReportInput) -> list[str]:
    """The email's few lines: each currency and outcome as previous + movements = now."""
    if data.rollforward.empty:
        return []
    lines = ["", "ROLL-FORWARD (rollforward.csv)"]
    if data.rollforward_note:
        lines.append(data.rollforward_note)
    for r in rows(data):
        parts = [
            f"{c['line']} {c['count']:,}" + (f" ({c['amount']})" if c["amount"] else "")
            for c in r["cells"]
            if c["count"] is not None and (c["count"] or c["line"] in ("previous", "now"))
        ]
        lines.append(f"{r['currency'] or '-'} {r['outcome']}: " + " · ".join(parts))
    return lines
