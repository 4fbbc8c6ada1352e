"""A run's findings as they stand now, at the core's entry with literal rows: what people did
after the run shows; what nobody touched stays as the run reported it."""

from __future__ import annotations

import pandas as pd

from recon.reconcile.cases import as_they_stand

REPORTED = pd.DataFrame(
    {
        "exception_id": ["E1-1", "E1-2", "E1-3", "E1-4"],
        "status": ["new", "persisting", "acknowledged", "new"],
        "owner": [None, None, "anna", None],
        "note": [None, None, "mine", None],
        "until": pd.to_datetime([None, None, None, None], utc=True),
    }
)


def test_people_s_actions_since_the_run_show_and_the_rest_stays() -> None:
    """E1-1 acknowledged, E1-2 resolved, E1-3 reopened; E1-4 untouched and still new."""
    cases = pd.DataFrame(
        {
            "exception_id": ["E1-1", "E1-2", "E1-3", "E1-4"],
            "state": ["acknowledged", "resolved", "open", "open"],
            "owner": ["bob", "bob", None, None],
            "note": ["checking", "paid again", None, None],
            "until": pd.to_datetime([None, None, None, None], utc=True),
        }
    )
    got = as_they_stand(REPORTED, cases)
    assert got["status"].tolist() == ["acknowledged", "resolved", "persisting", "new"]
    assert got["owner"].tolist()[:2] == ["bob", "bob"]
    assert got["note"].tolist()[1] == "paid again"
    assert REPORTED["status"].tolist()[0] == "new"  # the run's own frame is left as it was


def test_a_finding_whose_case_is_not_found_keeps_what_the_run_said() -> None:
    """No case rows (a store pruned since): the run's report, unchanged."""
    empty = pd.DataFrame(columns=["exception_id", "state", "owner", "note", "until"])
    assert as_they_stand(REPORTED, empty).equals(REPORTED)
