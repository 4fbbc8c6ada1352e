"""The balance statement at the core's entry: literal closings and export rows in."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from recon.export_rows import Closing, ExportKind, ExportRow, days
from recon.frames import Finding
from recon.reconcile.balance import (
    BALANCE_BREAK,
    Line,
    Statement,
    Status,
    balance_breaks,
    standing,
    statement,
    statements,
)

ZONE = ZoneInfo("Europe/Stockholm")
ACCOUNT = "default"


def _closing(day: date, minor: int, record_id: int = 1, currency: str = "EUR") -> Closing:
    return Closing(ACCOUNT, currency, day, minor, record_id)


def _row(
    n: int,
    kind: ExportKind,
    amount: int,
    settled: datetime,
    *,
    state: int = 6,
    currency: str = "EUR",
) -> ExportRow:
    return ExportRow(
        line=n + 1,
        transaction_id=f"t{n}",
        kind=kind,
        type_raw=str(kind),
        state=state,
        state_raw=str(state),
        amount_minor=amount,
        currency=currency,
        settled=settled,
    )


NOV = days(date(2026, 11, 1), date(2026, 11, 30))
OPEN = _closing(date(2026, 10, 31), 100_000)
ROWS = [
    _row(0, ExportKind.TOP_UP, 50_000, datetime(2026, 11, 2, 9, tzinfo=UTC)),
    _row(1, ExportKind.PAYOUT, 10_000, datetime(2026, 11, 3, 9, tzinfo=UTC)),
    _row(2, ExportKind.FEE, 30, datetime(2026, 11, 3, 9, tzinfo=UTC)),
    _row(3, ExportKind.PAYOUT, 20_000, datetime(2026, 11, 4, 9, tzinfo=UTC)),
    _row(4, ExportKind.FEE, 55, datetime(2026, 11, 4, 9, tzinfo=UTC)),
    _row(5, ExportKind.RETURNED_FUNDS, 20_000, datetime(2026, 11, 10, 9, tzinfo=UTC)),
    _row(6, ExportKind.MERCHANT_WITHDRAWAL, 40_000, datetime(2026, 11, 20, 9, tzinfo=UTC)),
    # a payout reversed since it settled: not settled, not counted
    _row(7, ExportKind.PAYOUT, 999, datetime(2026, 11, 5, 9, tzinfo=UTC), state=3),
    # another currency, a kind the mapping does not name, a day outside the period: not counted
    _row(8, ExportKind.PAYOUT, 777, datetime(2026, 11, 5, 9, tzinfo=UTC), currency="SEK"),
    _row(9, ExportKind.OTHER, 888, datetime(2026, 11, 5, 9, tzinfo=UTC)),
    _row(10, ExportKind.PAYOUT, 666, datetime(2026, 12, 1, 9, tzinfo=UTC)),
]
COMPUTED = 100_000 + 50_000 + 20_000 - 30_000 - 85 - 40_000


def _lines(s: Statement) -> dict[str, tuple[int, int]]:
    return {str(x.line): (x.count, x.amount_minor) for x in s.lines}


def test_a_statement_that_ties() -> None:
    """Each line's count and sum from the rows of the period; recorded = computed is tied."""
    s = statement(OPEN, _closing(date(2026, 11, 30), COMPUTED, 2), ROWS, NOV, ZONE)
    assert _lines(s) == {
        "opening": (0, 100_000),
        "top_ups": (1, 50_000),
        "returned_funds": (1, 20_000),
        "payouts_settled": (2, 30_000),
        "fees": (2, 85),
        "merchant_withdrawals": (1, 40_000),
        "computed_closing": (0, COMPUTED),
        "recorded_closing": (0, COMPUTED),
        "difference": (0, 0),
    }
    assert [str(x.line) for x in s.lines] == [str(line) for line in Line]
    assert (s.status, s.period_start, s.period_end) == (
        Status.TIED,
        date(2026, 11, 1),
        date(2026, 11, 30),
    )


def test_a_statement_that_breaks() -> None:
    """A recorded closing other than the computed one is a break by recorded - computed."""
    s = statement(OPEN, _closing(date(2026, 11, 30), COMPUTED - 1_234, 2), ROWS, NOV, ZONE)
    assert (s.status, s.difference) == (Status.BREAK, -1_234)
    frame = balance_breaks([s])
    assert frame[Finding.FLAG].tolist() == [BALANCE_BREAK.name]
    assert frame[Finding.ITEM_ID].tolist() == ["EUR/2026-11-01/2026-11-30"]
    assert frame[Finding.FACTS].iloc[0]["difference_minor"] == -1_234


def test_a_day_the_export_does_not_cover_is_incomplete() -> None:
    """A settlement day of the period missing from the covered days: incomplete, not a break."""
    covered = [d for d in NOV if d != date(2026, 11, 17)]
    s = statement(OPEN, _closing(date(2026, 11, 30), 1, 2), ROWS, covered, ZONE)
    assert (s.status, s.uncovered) == (Status.INCOMPLETE, (date(2026, 11, 17),))
    assert balance_breaks([s]).empty


def test_settlement_days_are_read_in_the_time_zone() -> None:
    """A row settled at 23:30 UTC on the last day of October is 1 November in Stockholm."""
    late = _row(0, ExportKind.TOP_UP, 5, datetime(2026, 10, 31, 23, 30, tzinfo=UTC))
    s = statement(OPEN, _closing(date(2026, 11, 30), 100_005, 2), [late], NOV, ZONE)
    assert (s.count(Line.TOP_UPS), s.status) == (1, Status.TIED)


def test_a_second_record_of_a_day_restates_the_first() -> None:
    """The latest record of a day stands; the earlier one is kept as restated, not used."""
    first = _closing(date(2026, 11, 30), 1, 2)
    second = _closing(date(2026, 11, 30), COMPUTED, 3)
    [s] = statements([OPEN, first, second], {ACCOUNT: ROWS}, {ACCOUNT: NOV}, ZONE)
    assert (s.status, s.closing) == (Status.TIED, second)
    assert standing([OPEN, first, second]) == ([OPEN, second], [first])


def test_statements_per_currency_between_consecutive_closings() -> None:
    """Three closings of EUR make two periods; SEK's own pair makes its own statement."""
    mid = _closing(date(2026, 11, 15), 100_000 + 50_000 - 30_000 - 85 + 20_000, 2)
    end = _closing(date(2026, 11, 30), COMPUTED, 3)
    sek = [_closing(date(2026, 10, 31), 0, 4, "SEK"), _closing(date(2026, 11, 30), -777, 5, "SEK")]
    got = statements([end, OPEN, mid, *sek], {ACCOUNT: ROWS}, {ACCOUNT: NOV}, ZONE)
    assert [(s.currency, s.period_start.day, s.period_end.day, s.status) for s in got] == [
        ("EUR", 1, 15, Status.TIED),
        ("EUR", 16, 30, Status.TIED),
        ("SEK", 1, 30, Status.TIED),
    ]


_KINDS = [
    ExportKind.TOP_UP,
    ExportKind.RETURNED_FUNDS,
    ExportKind.PAYOUT,
    ExportKind.FEE,
    ExportKind.MERCHANT_WITHDRAWAL,
]
_SIGN = {
    ExportKind.TOP_UP: 1,
    ExportKind.RETURNED_FUNDS: 1,
    ExportKind.PAYOUT: -1,
    ExportKind.FEE: -1,
    ExportKind.MERCHANT_WITHDRAWAL: -1,
}
_month_rows = st.lists(
    st.tuples(
        st.sampled_from(_KINDS),
        st.integers(min_value=1, max_value=10**9),
        st.integers(min_value=0, max_value=30 * 86_400 - 1),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(
    opening=st.integers(min_value=-(10**12), max_value=10**12),
    moves=_month_rows,
    drop=st.integers(min_value=0),
)
def test_opening_and_movements_make_the_computed_closing(
    opening: int, moves: list[tuple[ExportKind, int, int]], drop: int
) -> None:
    """Over any month: opening + signed movements = computed closing; recording the computed
    closing ties; without one row it breaks by exactly that row's signed amount."""
    start = datetime(2026, 11, 1, tzinfo=ZONE).astimezone(UTC)
    rows = [
        _row(n, kind, amount, start + timedelta(seconds=at))
        for n, (kind, amount, at) in enumerate(moves)
    ]
    first = _closing(date(2026, 10, 31), opening)
    s = statement(first, _closing(date(2026, 11, 30), opening, 2), rows, NOV, ZONE)
    moved = sum(s.amount(line) * sign for line, sign in _signs().items())
    assert s.amount(Line.COMPUTED_CLOSING) == opening + moved
    assert s.amount(Line.COMPUTED_CLOSING) == opening + sum(_SIGN[k] * a for k, a, _ in moves)
    computed = s.amount(Line.COMPUTED_CLOSING)
    tied = statement(first, _closing(date(2026, 11, 30), computed, 2), rows, NOV, ZONE)
    assert (tied.status, tied.difference) == (Status.TIED, 0)
    gone = rows.pop(drop % len(rows))
    broken = statement(first, _closing(date(2026, 11, 30), computed, 2), rows, NOV, ZONE)
    assert broken.status is Status.BREAK
    assert broken.difference == _SIGN[gone.kind] * gone.amount_minor


def _signs() -> dict[Line, int]:
    return {
        Line.TOP_UPS: 1,
        Line.RETURNED_FUNDS: 1,
        Line.PAYOUTS_SETTLED: -1,
        Line.FEES: -1,
        Line.MERCHANT_WITHDRAWALS: -1,
    }
