"""The refusal limit: when refused ids stop the night (a revoked key), and when they are each one
payout's problem. Literal counts in, a verdict out."""

from __future__ import annotations

import pytest

from recon.night.refusals import Refusals, refusals_stop_the_night


@pytest.mark.parametrize(
    ("refused", "asked", "limit"),
    [(21, 21, 20), (21, 41, 20), (1, 1, 0), (3, 4, 2)],
)
def test_refusals_past_the_limit_and_over_half_the_ids_asked_stop_the_night(
    refused: int, asked: int, limit: int
) -> None:
    """More refusals than the limit, and more than half of the ids asked so far: stop."""
    assert refusals_stop_the_night(refused=refused, asked=asked, limit=limit)


@pytest.mark.parametrize(
    ("refused", "asked", "limit"),
    [(20, 20, 20), (0, 0, 0), (1, 1, 20), (21, 42, 20), (500, 10_000, 20), (2, 3, 2)],
)
def test_refusals_within_the_limit_or_at_most_half_the_ids_asked_go_on(
    refused: int, asked: int, limit: int
) -> None:
    """At most the limit, or at most half of the ids asked so far: each is one payout's problem."""
    assert not refusals_stop_the_night(refused=refused, asked=asked, limit=limit)


def test_the_tally_counts_across_passes_and_says_when_to_stop() -> None:
    """One tally for the night: the payouts' answers count when the returns' refusals come."""
    tally = Refusals(limit=2)
    for _ in range(3):
        assert not tally.note(refused=False)
    assert not tally.note(refused=True)
    assert not tally.note(refused=True)
    assert not tally.note(refused=True)  # 3 of 6: not more than half
    assert tally.note(refused=True)  # 4 of 7
    assert (tally.refused, tally.asked) == (4, 7)


def test_the_stop_message_is_one_line_naming_the_counts_and_the_setting() -> None:
    """What the night prints when it stops: the counts, RECON_REFUSED_LIMIT, what to check."""
    tally = Refusals(limit=20)
    for _ in range(21):
        tally.note(refused=True)
    text = tally.stop_message()
    assert "\n" not in text
    assert "21 of the 21 ids" in text
    assert "RECON_REFUSED_LIMIT (20)" in text
