"""The balance statements as people read them: one row per line, and the text of ``recon balance
show``.

Each statement (:class:`recon.reconcile.balance.Statement`) is nine lines, in the statement's
order, each with its count (the export rows that make it; 0 for the balances) and amount (minor
units of its currency; the movement lines positive, their sign the line's), and the statement's
status on every line: balance.csv's rows (:data:`BALANCE_LINE_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

import pandas as pd

from recon.export_rows import Closing
from recon.reconcile.balance import Line, Statement, Status, standing
from recon.report.fmt import money
from recon.report.model import ACCOUNT, BALANCE_LINE_COLUMNS, ReportInput

LINE_WORDS: dict[str, str] = {
    Line.OPENING: "Opening (recorded)",
    Line.TOP_UPS: "+ Top-ups",
    Line.RETURNED_FUNDS: "+ Returned funds",
    Line.PAYOUTS_SETTLED: "- Payouts settled",
    Line.FEES: "- Fees",
    Line.MERCHANT_WITHDRAWALS: "- Merchant withdrawals",
    Line.COMPUTED_CLOSING: "= Computed closing",
    Line.RECORDED_CLOSING: "Recorded closing",
    Line.DIFFERENCE: "Difference (recorded - computed)",
}


def balance_frame(found: Sequence[Statement]) -> pd.DataFrame:
    """The statements' lines as the report's balance frame, in the statements' order."""
    rows = [
        (
            s.account,
            s.currency,
            s.period_start,
            s.period_end,
            str(x.line),
            x.count,
            x.amount_minor,
            str(s.status),
        )
        for s in found
        for x in s.lines
    ]
    frame = pd.DataFrame(rows, columns=list(BALANCE_LINE_COLUMNS), dtype=object)
    return frame.astype({"count": "int64", "amount_minor": "int64"})


def status_words(s: Statement) -> str:
    """A statement's status with what makes it so."""
    if s.status is Status.INCOMPLETE:
        missing = s.uncovered
        shown = ", ".join(d.isoformat() for d in missing[:3]) + (" …" if len(missing) > 3 else "")
        return f"incomplete: {len(missing)} settlement day(s) the export does not cover ({shown})"
    if s.status is Status.BREAK:
        return f"break: differs by {money(s.difference, s.currency)} {s.currency}"
    return "tied"


def statement_text(found: Sequence[Statement], records: Sequence[Closing]) -> list[str]:
    """``recon balance show``: each statement, its lines, count and amount, and its status; a
    record that no later one follows says it waits for the next closing."""
    if not records:
        return ["recon: balance: no closing recorded (recon balance record --date ... )"]
    stands, restated = standing(records)
    shown: set[int] = set()

    def restated_of(account: str, currency: str, day: date) -> list[str]:
        """The restated records of that day not listed yet (a period's opening is the one
        before's closing)."""
        old = [
            r
            for r in restated
            if (r.account, r.currency, r.day) == (account, currency, day)
            and r.record_id not in shown
        ]
        shown.update(r.record_id for r in old)
        return [
            f"  restated: record {r.record_id} of {r.day.isoformat()} said "
            f"{money(r.closing_minor, currency)} {currency}"
            for r in old
        ]

    lines: list[str] = []
    for s in found:
        lines.append(
            f"{s.account} {s.currency} {s.period_start.isoformat()} to "
            f"{s.period_end.isoformat()}: {status_words(s)}"
        )
        for x in s.lines:
            count = f"{x.count:>7,}" if x.line in _COUNTED else " " * 7
            amount = money(x.amount_minor, s.currency)
            lines.append(f"  {LINE_WORDS[x.line]:<34}{count}  {amount:>20} {s.currency}")
        for day in (s.opening.day, s.closing.day):
            lines += restated_of(s.account, s.currency, day)
    for account, currency in sorted({(r.account, r.currency) for r in stands}):
        mine = [r for r in stands if (r.account, r.currency) == (account, currency)]
        if len(mine) == 1:
            lines.append(
                f"{account} {currency}: one closing recorded ({mine[0].day.isoformat()}): "
                "a statement needs the next one"
            )
            lines += restated_of(account, currency, mine[0].day)
    return lines


_COUNTED = frozenset(
    {
        Line.TOP_UPS,
        Line.RETURNED_FUNDS,
        Line.PAYOUTS_SETTLED,
        Line.FEES,
        Line.MERCHANT_WITHDRAWALS,
    }
)


_TOTALS = frozenset({Line.COMPUTED_CLOSING, Line.RECORDED_CLOSING, Line.DIFFERENCE})


def balance_parts(data: ReportInput) -> list[dict[str, Any]] | None:
    """The Balance section: each statement with its lines' words, counts and amounts, and its
    status. None when no closing is recorded (no section)."""
    if data.balance is None:
        return None
    parts = []
    keys = [ACCOUNT, "currency", "period_start", "period_end"]
    for (account, cur, start, end), lines in data.balance.groupby(keys, sort=False):
        code = str(cur)
        parts.append(
            {
                "account": data.label(str(account)) if data.several else "",
                "currency": code,
                "period": f"{start} to {end}",  # datetime.date: ISO 8601
                "status": str(lines["status"].iloc[0]),
                "lines": [
                    {
                        "words": LINE_WORDS[str(line)],
                        "count": f"{int(count):,}" if str(line) in _COUNTED else "",
                        "amount": money(int(amount), code),
                        "total": str(line) in _TOTALS,
                    }
                    for line, count, amount in lines[["line", "count", "amount_minor"]].itertuples(
                        index=False
                    )
                ],
            }
        )
    return parts
