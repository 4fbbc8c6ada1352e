"""The roll-forward as people read it: per currency a statement (in flight and settled, from the
previous run to now, only the lines that moved), the findings' line, and the full grid (one row
per currency and outcome, its lines side by side) one click away.

rollforward.csv holds the lines one per row (:func:`recon.report.tables.rollforward_columns`);
report.html, the workbook's "Statement" and "Roll-forward" sheets and the text email read them
from here. The statement's arithmetic is :mod:`recon.reconcile.statement`'s.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon.reconcile.statement import SIGN, Section, Step
from recon.report.accounts import rollforward_over_accounts
from recon.report.fmt import money
from recon.report.model import ReportInput
from recon.report.tables import Amounts, Table
from recon.rollforward_lines import FEE_LINES, FEES, FINDING_LINES, FINDINGS, PAYOUT_LINES, Line
from recon.words import money as money_words

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
    Line.CHARGED: "charged",
    Line.CHANGED: "changed",
}


def rows(data: ReportInput) -> list[dict[str, Any]]:
    """Per currency and outcome (over every account of the report): its lines as ``cells``
    (count, amount text) in :data:`PAYOUT_LINES` order (the returns lack moves, the findings'
    lines are their own)."""
    lines = rollforward_over_accounts(data.rollforward)
    out: list[dict[str, Any]] = []
    for (cur, outcome), group in lines.groupby(["currency", "outcome"], sort=False):
        by_line = {str(r["line"]): r for r in group.to_dict("records")}
        order = (
            FINDING_LINES if outcome == FINDINGS else FEE_LINES if outcome == FEES else PAYOUT_LINES
        )
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


# A statement line's words: what it is, after the sign it adds up with.
_WORDS = {
    (Section.IN_FLIGHT, Step.PREVIOUS): "In flight at the previous run",
    (Section.IN_FLIGHT, Step.NOW): "In flight now",
    (Section.SETTLED, Step.PREVIOUS): "Settled at the previous run",
    (Section.SETTLED, Step.NOW): "Settled now",
    Step.RECORDED: "recorded",
    Step.SETTLED: "settled",
    Step.FAILED: "failed or aborted",
    Step.UNKNOWN: "unknown to the provider",
    Step.BACK: "back in flight",
    Step.SETTLED_SINCE: "settled since",
    Step.REVERSED: "reversed after settling",
    Step.RETURNED: "returned",
    Step.CHANGED: "changed records",
    Step.DIFFERENCE: "does not close by",
}
# The findings' lines, as the statement's findings line says them.
_FINDING_WORDS = {
    Line.PREVIOUS.value: ("", "at the previous run"),
    Line.OPENED.value: ("+", "opened"),
    Line.CLOSED_BY_PEOPLE.value: ("−", "closed by people"),
    Line.CLEARED.value: ("−", "cleared"),
    Line.REOPENED.value: ("+", "reopened"),
    Line.NOW.value: ("=", "now"),
}


def statement(data: ReportInput) -> list[dict[str, Any]]:
    """Per currency, its statement lines: ``sign`` (``+``, ``−``, ``±``, ``=`` or none),
    ``words``, ``count``, ``amount`` (text with the code; signed where the sign is ``±``),
    ``signed`` and ``signed_count`` (as they add up; minor units), ``total`` (a previous or now
    line) and ``difference``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in data.statement:
        step, total = row.step, row.step in (Step.PREVIOUS, Step.NOW)
        sign = SIGN.get(step, 1)
        if total:
            mark = "=" if step is Step.NOW else ""
        elif step in (Step.CHANGED, Step.DIFFERENCE):
            mark = "±" if step is Step.CHANGED else ""
        else:
            mark = "−" if sign < 0 else "+"
        signed = step in (Step.CHANGED, Step.DIFFERENCE)
        amount = money_words(row.amount_minor, row.currency)
        if signed and row.amount_minor > 0:
            amount = "+" + amount
        words = _WORDS[(row.section, step)] if total else _WORDS[step]
        out.setdefault(row.currency, []).append(
            {
                "section": row.section.value,
                "sign": mark,
                "words": words,
                "count": row.count,
                "amount": amount.replace("-", "−", 1) if signed else amount,
                "signed": sign * row.amount_minor,
                "signed_count": sign * row.count,
                "total": total,
                "difference": step is Step.DIFFERENCE,
            }
        )
    return [{"currency": cur, "lines": _still(lines)} for cur, lines in out.items()]


def _still(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A part where nothing moved, one line: ``Settled, no change``."""
    out: list[dict[str, Any]] = []
    for line in lines:
        was = out[-1] if out else None
        if (
            line["total"]
            and line["sign"] == "="
            and was is not None
            and was["total"]
            and was["sign"] == ""
            and (was["count"], was["signed"]) == (line["count"], line["signed"])
        ):
            out[-1] = {**was, "words": was["words"].split(" at ")[0] + ", no change"}
            continue
        out.append(line)
    return out


def findings_words(data: ReportInput) -> str:
    """The findings' line: ``3 at the previous run + 6 opened − 1 closed by people = 8 now``."""
    got = data.rollforward
    got = got[got["outcome"].astype(str) == FINDINGS]
    counts: dict[str, int] = {}
    for r in got.to_dict("records"):  # over the accounts
        counts[str(r["line"])] = counts.get(str(r["line"]), 0) + int(r["count"])
    parts = [
        f"{sign} {counts[line]:,} {words}".strip()
        for line, (sign, words) in _FINDING_WORDS.items()
        if line in counts and (counts[line] or line in (Line.PREVIOUS.value, Line.NOW.value))
    ]
    return " ".join(parts)


def text_block(data: ReportInput) -> list[str]:
    """The email's statement: per currency its lines, aligned; then the findings' line."""
    if data.rollforward.empty:
        return []
    lines = ["", "ROLL-FORWARD (rollforward.csv holds every line)"]
    if data.rollforward_note:
        lines.append(data.rollforward_note)
    for part in statement(data):
        lines.append(part["currency"])
        for n, line in enumerate(part["lines"]):
            if n and line["total"] and line["sign"] != "=":
                lines.append("")
            words = f"{line['sign']} {line['words']}".strip()
            lines.append(f"  {words:<31} {line['count']:>7,} {line['amount']:>20}")
    found = findings_words(data)
    if found:
        lines.append(f"Findings: {found}")
    return lines


STATEMENT_COLUMNS = ("currency", "line", "count", "amount")


def statement_table(data: ReportInput) -> Table:
    """The workbook's "Statement" sheet: per currency its lines in words, each count and amount
    signed as it adds up (the lines from a previous to before its now sum to the now); no sign
    character starts a cell, which a spreadsheet would take for a formula."""
    rows = [(part["currency"], line) for part in statement(data) for line in part["lines"]]
    index = pd.RangeIndex(len(rows))
    currency = pd.Series([cur for cur, _ in rows], index=index, dtype="string")
    return {
        "currency": currency,
        "line": pd.Series(
            [line["words"] for _, line in rows],
            index=index,
            dtype="string",
        ),
        "count": pd.Series([line["signed_count"] for _, line in rows], index=index, dtype="Int64"),
        "amount": Amounts(
            pd.Series([line["signed"] for _, line in rows], index=index, dtype="Int64"), currency
        ),
    }
