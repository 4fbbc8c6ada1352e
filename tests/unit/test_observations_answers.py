"""The run's answers read back from the observations it keeps: built again only when an answer
came since, and each read the caller's own."""

from __future__ import annotations

import pandas as pd

from recon.night.observations import MemoryObservations


def _row(transaction_id: str, state: int) -> dict[str, object]:
    return {"transaction_id": transaction_id, "status": "ok", "state": state}


def test_answers_read_twice_are_equal_and_include_every_answer_kept_since() -> None:
    """A second read with nothing kept between gives the same frame; one after a batch has it."""
    kept = MemoryObservations(run_id=1)
    kept.keep([_row("a", 3), _row("b", 4)])
    first, again = kept.answers(), kept.answers()
    pd.testing.assert_frame_equal(first, again)
    assert first["transaction_id"].tolist() == ["a", "b"]
    kept.keep([_row("c", 5)])
    assert kept.answers()["transaction_id"].tolist() == ["a", "b", "c"]


def test_a_change_to_one_read_of_the_answers_is_not_in_the_next() -> None:
    """A caller that changes the frame it was given changes nobody else's."""
    kept = MemoryObservations(run_id=1)
    kept.keep([_row("a", 3)])
    mine = kept.answers()
    mine.loc[0, "state"] = 99
    mine["extra"] = 1
    other = kept.answers()
    assert other["state"].tolist() == [3]
    assert "extra" not in other.columns
