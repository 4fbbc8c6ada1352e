"""Exceptions compared with the previous run: new, persisting, cleared."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from recon import frames as fr
from recon.reconcile.compare import compare_exceptions
from tests.unit.classify_support import expected


def _exceptions(*rows: tuple[str, str, str, str]) -> list[dict[str, str]]:
    return [{"item_id": i, "item_kind": k, "flag": f, "detail": d} for i, k, f, d in rows]


def test_each_exception_is_new_persisting_or_cleared() -> None:
    """Present only now is new, in both is persisting, only before is cleared."""
    previous = pd.DataFrame(
        _exceptions(
            ("p1", "payout", "stale", "pending for 4.0 days"),
            ("p2", "payout", "fetch_failed", "could not be fetched"),
        )
    )
    current = pd.DataFrame(
        _exceptions(
            ("p1", "payout", "stale", "pending for 5.0 days"),
            ("r1", "return", "return_unverified", "the provider does not know it"),
        )
    )
    want = expected(
        item_id=["p1", "p2", "r1"],
        item_kind=["payout", "payout", "return"],
        flag=["stale", "fetch_failed", "return_unverified"],
        detail=["pending for 5.0 days", "could not be fetched", "the provider does not know it"],
        status=["persisting", "cleared", "new"],
    )
    assert_frame_equal(compare_exceptions(current, previous), want)


def test_a_new_flag_on_a_known_item_is_new() -> None:
    """Identity is (item, flag): another flag on the same payout is a new exception."""
    previous = pd.DataFrame(_exceptions(("p1", "payout", "stale", "old")))
    current = pd.DataFrame(
        _exceptions(("p1", "payout", "stale", "old"), ("p1", "payout", "amount_mismatch", "x"))
    )
    result = compare_exceptions(current, previous)
    assert result[["flag", "status"]].astype(str).values.tolist() == [
        ["amount_mismatch", "new"],
        ["stale", "persisting"],
    ]


def test_the_first_run_has_only_new_exceptions() -> None:
    """Against an empty previous run everything is new; two empty runs give an empty frame."""
    current = pd.DataFrame(_exceptions(("p1", "payout", "stale", "d")))
    result = compare_exceptions(current, fr.empty_exceptions())
    assert result["status"].astype(str).tolist() == ["new"]
    empty = compare_exceptions(fr.empty_exceptions(), fr.empty_exceptions())
    assert_frame_equal(empty, fr.empty(fr.COMPARED))
