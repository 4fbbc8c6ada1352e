"""The balance statement's break at the run's entry: a statement that breaks is the finding
balance_break (one per account, currency and period, with the difference); a tied or incomplete
one is none; a break no longer found (the closing restated) clears; without a closing recorded
nothing about balances is found or judged."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from recon.decision import BalanceInputs
from recon.export_rows import Closing, ExportKind, ExportRow, days
from tests.unit.decide_support import cases, decide_at, findings, inputs, opened_cases, statuses

NOV = frozenset(days(date(2026, 11, 1), date(2026, 11, 30)))
ITEM = "EUR/2026-11-01/2026-11-30"
PAID = ExportRow(2, "p1", ExportKind.PAYOUT, "1", 6, "6", 10_000, "EUR",
                 settled=datetime(2026, 11, 3, 9, tzinfo=UTC))  # fmt: skip


def _balance(closing: int, covered: frozenset[date] = NOV, *more: Closing) -> BalanceInputs:
    closings = (
        Closing("default", "EUR", date(2026, 10, 31), 50_000, 1),
        Closing("default", "EUR", date(2026, 11, 30), closing, 2),
        *more,
    )
    return BalanceInputs(closings, (PAID,), covered, ZoneInfo("UTC"))


def test_a_break_is_a_balance_break_with_its_difference() -> None:
    """Recorded 39,000.00 where the opening less the payout is 40,000.00: a break of -10.00."""
    decision = decide_at(replace(inputs(), balance=_balance(39_000)))
    assert statuses(decision) == {(ITEM, "balance_break"): "new"}
    found = findings(decision)[(ITEM, "balance_break")]
    assert found["item_kind"] == "balance"
    assert "difference -10.00 EUR" in found["detail"]
    assert decision.flags == {"balance_break": 1}


def test_a_tied_or_incomplete_statement_is_no_finding() -> None:
    """Tied: nothing. A day the export misses: incomplete, neither tied nor a break."""
    for balance in (_balance(40_000), _balance(39_000, NOV - {date(2026, 11, 9)})):
        assert statuses(decide_at(replace(inputs(), balance=balance))) == {}


def test_a_break_the_next_night_no_longer_finds_clears() -> None:
    """The closing recorded again (the typo put right) ties the statement: the case clears."""
    first = decide_at(replace(inputs(), balance=_balance(39_000)))
    again = Closing("default", "EUR", date(2026, 11, 30), 40_000, 3)
    live = opened_cases(first)
    later = decide_at(replace(inputs(live=live, run_id=3), balance=_balance(39_000, NOV, again)))
    assert statuses(later) == {(ITEM, "balance_break"): "cleared"}


def test_without_a_closing_recorded_a_balance_case_stands() -> None:
    """No balance inputs (none read): a live balance case is not judged, so it stays open."""
    live = cases({"item_kind": "balance", "item_id": ITEM, "flag": "balance_break",
                  "exception_id": "E1-1"})  # fmt: skip
    assert statuses(decide_at(inputs(live=live))) == {(ITEM, "balance_break"): "persisting"}
