"""Callbacks the merchant received are evidence: a payout a callback called failed, then seen
settled, is a late settlement; a callback alone never changes an outcome."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from tests.unit.classify_support import (
    AS_OF,
    DAY,
    answer,
    expected,
    flag_rows,
    flags,
    payout,
    pick,
    run,
)

SAID = "a callback said failed on 2024-03-09 08:00 UTC"
# The stored callback behind it: state 3 (failed), received then.
CALLBACK = {"callback_failed_state": 3, "callback_failed_at": pd.Timestamp("2024-03-09 08:00Z")}


def test_a_payout_a_callback_called_failed_then_seen_settled_is_a_late_settlement() -> None:
    """No run ever saw it failed; the stored callback is the evidence, named in the detail."""
    t0 = AS_OF - 2 * DAY
    store = [
        payout("late", bank_account_id="B", created=t0, **CALLBACK),
        payout(
            "repaid",
            bank_account_id="B",
            created=t0 + DAY,
            polled=False,
            prev_outcome="settled",
            prev_state=6,
        ),
    ]
    result = run(store, [answer("late", 6)])
    want = expected(transaction_id=["late"], outcome=["settled"],
                    candidate_duplicates=["repaid"])  # fmt: skip
    assert_frame_equal(pick(result.payouts.head(1), want), want)
    # Settled and settled again to the same account: one group of possible duplicates (on its
    # first member), and the customer was paid twice.
    assert_frame_equal(
        flags(result),
        flag_rows(
            ("late", "payout", "double_payment"),
            ("late", "payout", "late_settlement"),
            ("late", "payout", "possible_duplicate"),
        ),
    )
    detail = str(result.exceptions.loc[1, "detail"])
    assert detail.startswith(SAID + ", now settled")
    assert "candidate duplicates: repaid" in detail


def test_a_callback_alone_never_changes_an_outcome() -> None:
    """Not fetched this run: the settled payout stays settled, with no finding."""
    settled = {"polled": False, "prev_outcome": "settled", "prev_state": 6}
    result = run([payout("p", **CALLBACK, **settled)], [])
    want = expected(transaction_id=["p"], outcome=["settled"], exceptions=[""])
    assert_frame_equal(pick(result.payouts, want), want)
    assert flags(result).empty


def test_a_callback_saying_failed_and_an_answer_saying_failed_agree() -> None:
    """Failed now, as the callback said: an ordinary failed payout, nothing late."""
    result = run([payout("p", **CALLBACK)], [answer("p", 3)])
    assert result.payouts.loc[0, "outcome"] == "failed"
    assert flags(result).empty
