"""The roll-forward's identities (recon.reconcile.rollforward), on literal lines."""

from __future__ import annotations

import pandas as pd

from recon.reconcile.rollforward import (
    ALL_OUTCOMES,
    ROLLFORWARD_BREAK,
    Break,
    breaks,
    complete,
    opening,
    payout_movements,
    remeasured,
    return_movements,
)
from recon.report.details import detail
from recon.rollforward_lines import frame


def _pairs(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    """(before currency, before outcome, after currency, after outcome, count, before amount,
    after amount[, same, imported]): same defaults to the amounts agreeing, imported to no."""
    full = [(*r[:4], *(r[7:9] if len(r) > 7 else (int(r[5] == r[6]), 0)), *r[4:7]) for r in rows]
    return pd.DataFrame(
        full,
        columns=["before_currency", "before_outcome", "after_currency", "after_outcome", "same",
                 "imported", "count", "before_amount", "after_amount"],
    )  # fmt: skip


def _night() -> pd.DataFrame:
    """EUR: 2 settled (30.00) at the previous run; one pending (5.00) settles; one new fails."""
    moved = payout_movements(
        _pairs(
            [
                ("EUR", "pending", "EUR", "settled", 1, 500, 500),
                (None, None, "EUR", "failed", 1, None, 700),
            ]
        )
    )
    rest = frame(
        [
            ("EUR", "settled", "previous", 2, 3000),
            ("EUR", "pending", "previous", 1, 500),
            ("EUR", "settled", "now", 3, 3500),
            ("EUR", "failed", "now", 1, 700),
            ("", "findings", "previous", 2, None),
            ("", "findings", "opened", 1, None),
            ("", "findings", "cleared", 1, None),
            ("", "findings", "now", 2, None),
        ]
    )
    return pd.concat([moved, rest], ignore_index=True)


def test_a_night_whose_rows_agree_closes_every_identity() -> None:
    """Previous + recorded + moved in - moved out = now per outcome, and the findings close."""
    assert breaks(_night()) == []


def test_complete_lists_every_line_of_every_outcome_with_zeros() -> None:
    """Six lines per currency and outcome, findings last, zero where nothing moved."""
    lines = complete(_night())
    pending = lines[(lines["outcome"] == "pending")]
    assert pending["line"].tolist() == [
        "previous", "recorded", "moved_in", "moved_out", "record_changed", "now"
    ]  # fmt: skip
    assert pending["count"].tolist() == [1, 0, 0, 1, 0, 0]
    assert lines["outcome"].iloc[-1] == "findings"


def test_a_payout_row_removed_is_a_break_on_its_outcome_and_currency() -> None:
    """``now`` one short: the outcome's line now and the currency's count both break."""
    lines = _night()
    lines.loc[
        (lines["outcome"] == "settled") & (lines["line"] == "now"), ["count", "amount_minor"]
    ] = (
        2,
        2000,
    )
    found = breaks(lines)
    assert Break("EUR", "settled", "now", -1, -1500) in found
    assert Break("EUR", ALL_OUTCOMES, "now", -1, None) in found


def test_a_move_counted_on_one_side_only_breaks_the_moves_balance() -> None:
    """What moved in from another outcome must have moved out of one."""
    lines = pd.concat(
        [
            _night(),
            frame([("EUR", "returned", "moved_in", 1, 100), ("EUR", "returned", "now", 1, 100)]),
        ],
        ignore_index=True,
    )
    found = breaks(lines)
    assert Break("EUR", ALL_OUTCOMES, "moved_in", 1, 100) in found
    assert Break("EUR", ALL_OUTCOMES, "now", 1, None) in found  # and a payout appeared


def test_a_changed_amount_is_counted_at_the_outcome_it_had() -> None:
    """An import changed 5.00 -> 6.00 while pending, then it settled: the change at pending,
    the move at 6.00."""
    lines = payout_movements(_pairs([("EUR", "pending", "EUR", "settled", 1, 500, 600, 0, 1)]))
    got = {(r.outcome, r.line): (r.count, r.amount_minor) for r in lines.itertuples()}
    assert got[("pending", "record_changed")] == (0, 100)
    assert got[("pending", "moved_out")] == (1, 600)
    assert got[("settled", "moved_in")] == (1, 600)


def test_returns_confirmed_since_and_changed_are_their_own_lines() -> None:
    """A new confirmation is recorded; an amount changed is out as it was and in as it is."""
    before = pd.DataFrame({"return_id": ["r1"], "currency": ["EUR"], "amount_minor": [100]})
    after = pd.DataFrame(
        {"return_id": ["r1", "r2"], "currency": ["EUR", "EUR"], "amount_minor": [150, 200]}
    )
    lines = return_movements(before, after)
    got = {r.line: (r.count, r.amount_minor) for r in lines.itertuples()}
    assert got == {"recorded": (1, 200), "record_changed": (0, 50)}
    full = pd.concat(
        [lines, frame([("EUR", "returns_confirmed", "previous", 1, 100),
                       ("EUR", "returns_confirmed", "now", 2, 350)])],
        ignore_index=True,
    )  # fmt: skip
    assert breaks(full) == []


def test_the_findings_identity_breaks_when_a_case_vanishes() -> None:
    """Open findings one fewer than the lines say: a break with no amount."""
    lines = _night()
    lines.loc[(lines["outcome"] == "findings") & (lines["line"] == "now"), "count"] = 1
    assert breaks(lines) == [Break("", "findings", "now", -1, None)]


def test_the_opening_of_a_store_without_lines_closes_by_construction() -> None:
    """``previous`` is what tonight's movements leave of ``now``."""
    lines = _night()
    lines = lines[lines["line"] != "previous"]
    started = pd.concat([lines, opening(lines)], ignore_index=True)
    assert breaks(started) == []
    prev = started[(started["outcome"] == "settled") & (started["line"] == "previous")]
    assert (int(prev["count"].iloc[0]), int(prev["amount_minor"].iloc[0])) == (2, 3000)


def test_a_row_of_the_previous_run_edited_since_shows_when_measured_again() -> None:
    """The previous run's moved_in, measured again, differs by what was edited."""
    stored = frame([("EUR", "settled", "moved_in", 1, 500)])
    measured = frame([("EUR", "settled", "moved_in", 1, 900)])
    found = remeasured(stored, measured, run_id=7)
    assert found == [Break("EUR", "settled", "moved_in", 0, 400, run_id=7)]
    words = detail(ROLLFORWARD_BREAK.name, found[0].facts())
    assert "of run 7" in words
    assert "4.00 EUR" in words


def test_an_amount_changed_behind_recons_back_unbalances_the_moves() -> None:
    """No import explains 5.00 -> 6.00 on a settled payout: out at 5.00, in at 6.00, a break."""
    moved = payout_movements(_pairs([("EUR", "settled", "EUR", "settled", 1, 500, 600)]))
    lines = pd.concat(
        [moved, frame([("EUR", "settled", "previous", 1, 500), ("EUR", "settled", "now", 1, 600)])],
        ignore_index=True,
    )
    assert breaks(lines) == [Break("EUR", ALL_OUTCOMES, "moved_in", 0, 100)]


def test_a_row_whose_record_and_outcome_stayed_moves_nothing() -> None:
    """A history row written for another column (its flags) is no line at all."""
    assert payout_movements(_pairs([("EUR", "settled", "EUR", "settled", 3, 900, 900)])).empty
