"""Settled (or returned), then failed or aborted, is a reversal after settlement:
the mirror of a late settlement. The settled time is the one recon first saw it settled."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from recon.reconcile.record import with_record
from recon.reconcile.reversals import REVERSED_AFTER_SETTLEMENT
from recon.reconcile.watch import WatchParams
from recon.report.actions import NO_CODE_ACTION, payout_actions
from tests.unit.classify_support import (
    AS_OF,
    DAY,
    NA,
    answer,
    expected,
    fetch_error,
    flag_rows,
    flags,
    payout,
    pick,
    run,
)

SEEN = AS_OF - 2 * DAY  # the run that first saw it settled: 2024-03-08 12:00 UTC
WATCH = WatchParams((1, 2, 3), (1, 2, 3), watch_days=30, return_watch_days=30)
SETTLED = {"prev_outcome": "settled", "prev_state": 6, "prev_outcome_since": SEEN}


def _detail(result: object, flag: str) -> str:
    exceptions = result.exceptions  # type: ignore[attr-defined]
    return str(exceptions.loc[exceptions["flag"] == flag, "detail"].iloc[0])


def test_settled_then_failed_on_a_later_check_is_reversed_after_settlement() -> None:
    """The outcome is failed, and the finding names when it was seen settled and the new state."""
    result = run([payout("r", **SETTLED)], [answer("r", 3, error_code="recalled")])
    want = expected(transaction_id=["r"], outcome=["failed"], state=[3])
    assert_frame_equal(pick(result.payouts, want), want)
    assert_frame_equal(flags(result), flag_rows(("r", "payout", "reversed_after_settlement")))
    assert _detail(result, "reversed_after_settlement") == (
        "seen settled on 2024-03-08 12:00 UTC, now failed, error code recalled"
    )


def test_returned_then_aborted_is_reversed_after_settlement() -> None:
    """A returned payout was settled first: aborted after it is a reversal too."""
    store = [payout("r", prev_outcome="returned", prev_state=6, prev_outcome_since=SEEN)]
    result = run(store, [answer("r", 2)])
    assert result.payouts.loc[0, "outcome"] == "aborted"
    assert _detail(result, "reversed_after_settlement") == (
        "seen settled on 2024-03-08 12:00 UTC, now aborted"
    )


def test_settled_on_an_earlier_night_then_pending_then_failed_is_a_reversal() -> None:
    """The stored settled time remembers the settlement across a pending night in between."""
    store = [
        payout("r", prev_outcome="pending", prev_state=4, prev_outcome_since=AS_OF - DAY,
               settled_since=SEEN)
    ]  # fmt: skip
    result = run(store, [answer("r", 3)])
    assert_frame_equal(flags(result), flag_rows(("r", "payout", "reversed_after_settlement")))
    assert _detail(result, "reversed_after_settlement").startswith(
        "seen settled on 2024-03-08 12:00 UTC, now failed"
    )


def test_failed_without_ever_being_settled_is_an_ordinary_failed_payout() -> None:
    """Pending, then failed: no finding (the failed-payout routine applies)."""
    result = run([payout("f", prev_outcome="pending", prev_state=1)], [answer("f", 3)])
    assert result.payouts.loc[0, "outcome"] == "failed"
    assert flags(result).empty


def test_a_reversal_stays_flagged_on_later_runs_while_the_payout_stays_failed() -> None:
    """Failed already, settled before that: answered 3 again, or not fetched, it stands."""
    reversed_ = {"prev_outcome": "failed", "prev_state": 3, "prev_outcome_since": AS_OF - DAY,
                 "ever_failed": True, "settled_since": SEEN,
                 "prev_exceptions": "reversed_after_settlement"}  # fmt: skip
    result = run(
        [payout("again", **reversed_), payout("err", **reversed_),
         payout("idle", polled=False, **reversed_)],
        [answer("again", 3), fetch_error("err")],
    )  # fmt: skip
    assert_frame_equal(
        flags(result),
        flag_rows(
            ("again", "payout", "reversed_after_settlement"),
            ("err", "payout", "fetch_failed"),
            ("err", "payout", "reversed_after_settlement"),
            ("idle", "payout", "reversed_after_settlement"),
        ),
    )


def test_settled_again_after_a_reversal_is_no_longer_a_reversal() -> None:
    """Back to state 6: the reversal is gone; having been failed, it is a late settlement."""
    store = [
        payout("r", prev_outcome="failed", prev_state=3, prev_outcome_since=AS_OF - DAY,
               ever_failed=True, settled_since=SEEN)
    ]  # fmt: skip
    result = run(store, [answer("r", 6)])
    assert_frame_equal(flags(result), flag_rows(("r", "payout", "late_settlement")))


def test_the_settled_time_is_kept_from_the_first_night_seen_settled_until_settled_anew() -> None:
    """First seen settled: as_of; settled to returned or failed: kept; failed to settled: anew."""
    store = [
        payout("first"),
        payout("kept", prev_outcome="settled", prev_state=6, prev_outcome_since=SEEN,
               settled_since=SEEN),
        payout("upgraded", **SETTLED),  # a store from before the settled time was kept
        payout("reversed", **SETTLED, settled_since=SEEN),
        payout("anew", prev_outcome="failed", prev_state=3, prev_outcome_since=AS_OF - DAY,
               ever_failed=True, settled_since=SEEN),
        payout("never", prev_outcome="pending", prev_state=1),
    ]  # fmt: skip
    result = run(
        store,
        [answer("first", 6), answer("kept", 6), answer("upgraded", 6),
         answer("reversed", 3), answer("anew", 6), answer("never", 3)],
    )  # fmt: skip
    answered = pd.Series(True, index=result.payouts.index)
    record = pd.DataFrame(store)
    out = with_record(result.payouts, record, answered, as_of=AS_OF, watch=WATCH)
    want = expected(
        transaction_id=["first", "kept", "upgraded", "reversed", "anew", "never"],
        settled_since_now=[AS_OF, SEEN, SEEN, SEEN, AS_OF, NA],
    )
    assert_frame_equal(pick(out, want), want)


def test_a_reversed_payout_is_advised_not_to_be_repaid_as_an_ordinary_failure() -> None:
    """Its action is the reversal's line, without the failed-payout advice to pay again."""
    payouts = pd.DataFrame(
        {
            "exceptions": ["reversed_after_settlement", ""],
            "outcome": ["failed", "failed"],
            "error_code": [None, None],
        }
    )
    reversed_, failed = payout_actions(payouts)
    assert reversed_ == REVERSED_AFTER_SETTLEMENT.action
    assert "before paying out again" not in reversed_
    assert failed == NO_CODE_ACTION
