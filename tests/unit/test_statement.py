"""The roll-forward read as a statement, at the core's entry with literal rows: per currency, in
flight and settled from the previous run to now, with only the lines that moved."""

from __future__ import annotations

import pandas as pd

from recon.reconcile.rollforward import payout_movements
from recon.reconcile.statement import Row, Section, Step, statement
from recon.rollforward_lines import PAIR_COLUMNS, frame


def _pairs(*rows: tuple[str, str | None, str, int, int]) -> pd.DataFrame:
    """(currency, outcome before or None when recorded, outcome now, count, amount), the record
    unchanged."""
    return pd.DataFrame(
        [(cur, was, cur, now, 1, 0, n, None if was is None else amt, amt)
         for cur, was, now, n, amt in rows],
        columns=list(PAIR_COLUMNS),
    )  # fmt: skip


def _lines(
    pairs: pd.DataFrame,
    previous: dict[str, tuple[int, int]],
    now: dict[str, tuple[int, int]],
    currency: str = "EUR",
) -> pd.DataFrame:
    """The roll-forward's lines of one currency: previous and now by outcome, the moves of
    ``pairs``."""
    rows = [(currency, o, "previous", n, a) for o, (n, a) in previous.items()]
    rows += [(currency, o, "now", n, a) for o, (n, a) in now.items()]
    return pd.concat([frame(rows), payout_movements(pairs)], ignore_index=True)


def _steps(rows: list[Row], section: Section) -> dict[Step, tuple[int, int]]:
    return {r.step: (r.count, r.amount_minor) for r in rows if r.section is section}


def test_in_flight_payouts_that_settle_or_fail_read_as_a_statement() -> None:
    """3 in flight, 1 recorded; 2 settle, 1 fails: 3 + 1 - 2 - 1 = 1; settled 0 + 2 = 2."""
    pairs = _pairs(
        ("EUR", None, "pending", 1, 400),
        ("EUR", "pending", "settled", 2, 300),
        ("EUR", "pending", "failed", 1, 100),
    )
    lines = _lines(pairs, {"pending": (3, 400)}, {"pending": (1, 400), "settled": (2, 300),
                                                   "failed": (1, 100)})  # fmt: skip
    got = statement(lines, pairs)
    assert _steps(got, Section.IN_FLIGHT) == {
        Step.PREVIOUS: (3, 400),
        Step.RECORDED: (1, 400),
        Step.SETTLED: (2, 300),
        Step.FAILED: (1, 100),
        Step.NOW: (1, 400),
    }
    assert _steps(got, Section.SETTLED) == {
        Step.PREVIOUS: (0, 0),
        Step.SETTLED_SINCE: (2, 300),
        Step.NOW: (2, 300),
    }


def test_a_late_settlement_is_settled_since_and_not_a_move_out_of_flight() -> None:
    """failed -> settled: the settled part gains it; the in-flight part did not hold it."""
    pairs = _pairs(("EUR", "failed", "settled", 1, 1201))
    lines = _lines(pairs, {"pending": (2, 50), "failed": (1, 1201)},
                   {"pending": (2, 50), "settled": (1, 1201)})  # fmt: skip
    got = statement(lines, pairs)
    assert _steps(got, Section.IN_FLIGHT) == {Step.PREVIOUS: (2, 50), Step.NOW: (2, 50)}
    assert _steps(got, Section.SETTLED)[Step.SETTLED_SINCE] == (1, 1201)


def test_a_payout_returned_the_night_it_settled_is_settled_since_then_returned() -> None:
    """pending -> returned in one night: out of flight as settled; in and out of settled."""
    pairs = _pairs(("DKK", "pending", "returned", 1, 1401))
    lines = _lines(pairs, {"pending": (1, 1401)}, {"returned": (1, 1401)}, "DKK")
    got = statement(lines, pairs)
    assert _steps(got, Section.IN_FLIGHT)[Step.SETTLED] == (1, 1401)
    assert _steps(got, Section.SETTLED) == {
        Step.PREVIOUS: (0, 0),
        Step.SETTLED_SINCE: (1, 1401),
        Step.RETURNED: (1, 1401),
        Step.NOW: (0, 0),
    }


def test_a_settled_payout_that_fails_is_reversed() -> None:
    """settled -> failed: the settled part's reversed after settling; nothing was in flight."""
    pairs = _pairs(("EUR", "settled", "failed", 1, 999))
    lines = _lines(pairs, {"settled": (3, 3000)}, {"settled": (2, 2001), "failed": (1, 999)})
    got = statement(lines, pairs)
    assert _steps(got, Section.SETTLED) == {
        Step.PREVIOUS: (3, 3000),
        Step.REVERSED: (1, 999),
        Step.NOW: (2, 2001),
    }
    assert _steps(got, Section.IN_FLIGHT) == {}


def test_a_statement_that_does_not_close_says_by_how_much() -> None:
    """A stored settled amount edited behind recon's back: the lines' now differs from what the
    moves explain, and the statement says by how much instead of hiding it."""
    pairs = _pairs(("EUR", "pending", "settled", 1, 500))
    lines = _lines(pairs, {"pending": (1, 500), "settled": (1, 100)},
                   {"settled": (2, 650)})  # fmt: skip
    got = _steps(statement(lines, pairs), Section.SETTLED)
    assert got[Step.DIFFERENCE] == (0, 50)
    assert got[Step.NOW] == (2, 650)


def test_currencies_come_sorted_and_a_currency_without_flight_or_settlement_is_left_out() -> None:
    """EUR, then SEK; NOK only ever held failed payouts: no statement of its own."""
    pairs = _pairs(("SEK", "pending", "settled", 1, 10), ("EUR", "pending", "aborted", 1, 20))
    lines = pd.concat(
        [
            _lines(pairs.iloc[:1], {"pending": (1, 10)}, {"settled": (1, 10)}, "SEK"),
            _lines(pairs.iloc[1:], {"pending": (1, 20)}, {"aborted": (1, 20)}, "EUR"),
            frame([("NOK", "failed", "previous", 1, 5), ("NOK", "failed", "now", 1, 5)]),
        ],
        ignore_index=True,
    )
    got = statement(lines, pairs)
    assert [r.currency for r in got if r.step is Step.PREVIOUS] == ["EUR", "SEK", "SEK"]
    assert all(r.currency != "NOK" for r in got)
