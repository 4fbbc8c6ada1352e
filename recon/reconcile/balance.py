"""The balance statement: between two recorded closings, opening + movements = computed closing.

Pure: recorded closings and export rows in, statements out. For each provider account and
currency, each pair of consecutive recorded closings (the latest record of each day; an earlier
record of the same day is restated, kept and shown, never used) makes one period: the settlement
days after the opening's day through the closing's day, in ``RECON_TIMEZONE``. Over the export
rows settled in those days::

    opening + top_ups + returned_funds - payouts_settled - fees - merchant_withdrawals
        = computed_closing

each movement line with its count and sum (positive, as the export writes them; the sign is the
line's), against ``recorded_closing``; ``difference`` = recorded - computed. A payout counts when
the export shows it settled (state 6); fee rows, top-ups, merchant withdrawals and returned funds
count as rows. The status is ``incomplete`` when a settlement day of the period is not covered by
the export (never pulled, or covered only by a file cut at the cap), else ``tied`` (difference 0)
or ``break``, the finding :data:`BALANCE_BREAK` (one per account, currency and period).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from enum import StrEnum

import numpy as np
import pandas as pd

from recon.constants import TxState
from recon.decision import BalanceInputs
from recon.export_rows import Closing, ExportKind, ExportRow, days
from recon.frames import ItemKind
from recon.reconcile.finding import Found, Kind, findings, no_findings


class Line(StrEnum):
    """A line of the statement (balance.csv's ``line``, a contract), in the statement's order."""

    OPENING = "opening"
    TOP_UPS = "top_ups"
    RETURNED_FUNDS = "returned_funds"
    PAYOUTS_SETTLED = "payouts_settled"
    FEES = "fees"
    MERCHANT_WITHDRAWALS = "merchant_withdrawals"
    COMPUTED_CLOSING = "computed_closing"
    RECORDED_CLOSING = "recorded_closing"
    DIFFERENCE = "difference"


class Status(StrEnum):
    """Where a statement stands (balance.csv's ``status``)."""

    TIED = "tied"
    BREAK = "break"
    INCOMPLETE = "incomplete"  # a settlement day of the period the export does not cover


# Each movement line: the export rows it sums and its sign in the identity.
MOVEMENTS: dict[Line, tuple[ExportKind, int]] = {
    Line.TOP_UPS: (ExportKind.TOP_UP, 1),
    Line.RETURNED_FUNDS: (ExportKind.RETURNED_FUNDS, 1),
    Line.PAYOUTS_SETTLED: (ExportKind.PAYOUT, -1),
    Line.FEES: (ExportKind.FEE, -1),
    Line.MERCHANT_WITHDRAWALS: (ExportKind.MERCHANT_WITHDRAWAL, -1),
}
_LINE_OF: dict[ExportKind, Line] = {kind: line for line, (kind, _) in MOVEMENTS.items()}

BALANCE_BREAK = Kind(
    name="balance_break",
    items=(ItemKind.BALANCE,),
    label="Provider balance does not tie",
    action=(
        "The closing balance the provider's back office shows differs from the opening plus the "
        "export's movements of the period. Find the movement that explains the difference (a row "
        "missing from the export, a closing typed wrong: record it again), then resolve this."
    ),
    detail=(
        "balance {{ currency }} {{ period_start }} to {{ period_end }}: recorded closing "
        "{{ recorded_minor|money(currency) }}, computed {{ computed_minor|money(currency) }}, "
        "difference {{ difference_minor|money(currency) }}"
    ),
    same_when=("currency", "period_start", "period_end", "difference_minor"),
    facts=(
        "currency",
        "period_start",
        "period_end",
        "recorded_minor",
        "computed_minor",
        "difference_minor",
        "at_stake_minor",
    ),
)


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One line: how many export rows make it (0 for the balances) and its amount."""

    line: Line
    count: int
    amount_minor: int


@dataclass(frozen=True)
class Statement:
    """One account and currency's statement over ``period_start`` .. ``period_end`` (settlement
    days, both included). ``uncovered``: the period's days the export does not cover."""

    account: str
    currency: str
    period_start: date
    period_end: date
    lines: tuple[StatementLine, ...]
    status: Status
    opening: Closing
    closing: Closing
    uncovered: tuple[date, ...] = ()

    def amount(self, line: Line) -> int:
        """The amount of ``line``."""
        return next(x.amount_minor for x in self.lines if x.line == line)

    def count(self, line: Line) -> int:
        """The count of ``line``."""
        return next(x.count for x in self.lines if x.line == line)

    @property
    def difference(self) -> int:
        """Recorded closing minus computed closing."""
        return self.amount(Line.DIFFERENCE)


def standing(records: Iterable[Closing]) -> tuple[list[Closing], list[Closing]]:
    """The records that stand (the latest of each account, currency and day), in day order, and
    those restated by a later record of the same day."""
    by_day: dict[tuple[str, str, date], list[Closing]] = defaultdict(list)
    for record in records:
        by_day[(record.account, record.currency, record.day)].append(record)
    stands, restated = [], []
    for key in sorted(by_day):
        ordered = sorted(by_day[key], key=lambda r: r.record_id)
        stands.append(ordered[-1])
        restated.extend(ordered[:-1])
    return stands, restated


def settlement_day(settled: datetime, zone: tzinfo) -> date:
    """The settlement day of a UTC time, in ``zone``."""
    return settled.astimezone(zone).date()


# (currency, settlement day, line) -> [count, sum]
_Sums = dict[tuple[str, date, Line], list[int]]


def _sums(rows: Iterable[ExportRow], zone: tzinfo) -> _Sums:
    """The rows that count, summed per currency, settlement day and line."""
    sums: _Sums = defaultdict(lambda: [0, 0])
    for row in rows:
        line = _LINE_OF.get(row.kind)
        if line is None or row.settled is None:
            continue
        if line is Line.PAYOUTS_SETTLED and row.state != int(TxState.SETTLED):
            continue
        got = sums[(row.currency, settlement_day(row.settled, zone), line)]
        got[0] += 1
        got[1] += row.amount_minor
    return sums


def statements(
    records: Iterable[Closing],
    rows: Mapping[str, Iterable[ExportRow]],
    covered: Mapping[str, Collection[date]],
    zone: tzinfo,
) -> list[Statement]:
    """Every statement of the records: per account and currency, one per pair of consecutive
    standing closings. ``rows``: each account's export rows (the latest version of each);
    ``covered``: each account's settlement days the export covers completely (a day only a file
    cut at the cap covers is not)."""
    stands, _ = standing(records)
    sums = {account: _sums(account_rows, zone) for account, account_rows in rows.items()}
    out: list[Statement] = []
    for i in range(1, len(stands)):
        opening, closing = stands[i - 1], stands[i]
        if (opening.account, opening.currency) != (closing.account, closing.currency):
            continue
        out.append(
            _statement(
                opening, closing, sums.get(closing.account, {}), covered.get(closing.account, ())
            )
        )
    return out


def statement(
    opening: Closing,
    closing: Closing,
    rows: Iterable[ExportRow],
    covered: Collection[date],
    zone: tzinfo,
) -> Statement:
    """One period's statement: ``opening`` to ``closing`` (same account and currency) over
    ``rows`` (one account's export rows) and the settlement days the export covers."""
    return _statement(opening, closing, _sums(rows, zone), covered)


def _statement(
    opening: Closing,
    closing: Closing,
    sums: _Sums,
    covered: Collection[date],
) -> Statement:
    start, end = opening.day + timedelta(days=1), closing.day
    period = days(start, end)
    lines = [StatementLine(Line.OPENING, 0, opening.closing_minor)]
    computed = opening.closing_minor
    for line, (_, sign) in MOVEMENTS.items():
        count = total = 0
        for day in period:
            got = sums.get((closing.currency, day, line))
            if got is not None:
                count, total = count + got[0], total + got[1]
        lines.append(StatementLine(line, count, total))
        computed += sign * total
    difference = closing.closing_minor - computed
    lines += [
        StatementLine(Line.COMPUTED_CLOSING, 0, computed),
        StatementLine(Line.RECORDED_CLOSING, 0, closing.closing_minor),
        StatementLine(Line.DIFFERENCE, 0, difference),
    ]
    uncovered = tuple(day for day in period if day not in covered)
    status = Status.INCOMPLETE if uncovered else Status.TIED if difference == 0 else Status.BREAK
    return Statement(
        account=closing.account,
        currency=closing.currency,
        period_start=start,
        period_end=end,
        lines=tuple(lines),
        status=status,
        opening=opening,
        closing=closing,
        uncovered=uncovered,
    )


def item_id(s: Statement) -> str:
    """A statement's id as a finding's item (within its account): ``EUR/2026-11-01/2026-11-30``."""
    return f"{s.currency}/{s.period_start.isoformat()}/{s.period_end.isoformat()}"


def balance_breaks(found: Sequence[Statement]) -> pd.DataFrame:
    """The :data:`BALANCE_BREAK` findings of the statements that break (rows of
    :class:`recon.frames.Findings`; the caller keeps one account's statements per call)."""
    broken = [s for s in found if s.status is Status.BREAK]
    if not broken:
        return no_findings()
    facts = pd.DataFrame(
        {
            "currency": [s.currency for s in broken],
            "period_start": [s.period_start.isoformat() for s in broken],
            "period_end": [s.period_end.isoformat() for s in broken],
            "recorded_minor": [s.amount(Line.RECORDED_CLOSING) for s in broken],
            "computed_minor": [s.amount(Line.COMPUTED_CLOSING) for s in broken],
            "difference_minor": [s.difference for s in broken],
            "at_stake_minor": [abs(s.difference) for s in broken],
        }
    )
    ids = pd.Series([item_id(s) for s in broken])
    return findings(
        BALANCE_BREAK,
        ItemKind.BALANCE,
        ids,
        Found(mask=np.ones(len(broken), dtype=bool), facts=facts),
    )


def night_balance(
    balance: BalanceInputs | None, cases: Iterable[str]
) -> tuple[pd.DataFrame, frozenset[str]]:
    """A night's :data:`BALANCE_BREAK` findings from its account's balance inputs, and the
    statement items it judged: every statement's, and every live case's (``cases``: their item
    ids), so a break no longer found (a closing restated, a period split by a closing recorded
    inside it) clears. Without inputs (no closing recorded) nothing is found or judged."""
    if balance is None:
        return no_findings(), frozenset()
    accounts = {c.account for c in balance.closings}
    found = statements(
        balance.closings,
        dict.fromkeys(accounts, balance.rows),
        dict.fromkeys(accounts, balance.covered),
        balance.zone,
    )
    return balance_breaks(found), frozenset({item_id(s) for s in found} | set(cases))
