"""Which payouts a run decides: the night's work, by rule, not the whole history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.decision import KnownReturns, PartyRange
from recon.frames import empty
from recon.reconcile.scope import duplicate_parties, other_outcomes, payout_scope, related_reads
from recon.reconcile.watch import WatchParams
from recon.run_frames import Cases

NO_CASES = empty(Cases)
AS_OF = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
WATCH = WatchParams(
    schedule_days=(1, 6, 30), return_schedule_days=(6, 12), watch_days=90, return_watch_days=30
)


def test_the_scope_names_the_polled_payouts_and_every_payout_a_return_points_to() -> None:
    """Claimed, confirmed and answered originals are read with the polled ones."""
    returns = KnownReturns(
        notices=pd.DataFrame({"return_id": ["r1"], "claimed_original_id": ["claimed"]}),
        earlier=pd.DataFrame(
            {"related_transaction_id": ["earlier"], "original_transaction_id": [None]}
        ),
        confirmations=pd.DataFrame({"return_id": ["r2"], "confirmed_original_id": ["confirmed"]}),
    )
    answers = pd.DataFrame({"related_transaction_id": [None], "original_transaction_id": ["now"]})
    scope = payout_scope(
        poll_ids=["p1", "p2"],
        returns=returns,
        answers=answers,
        cases=NO_CASES,
        as_of=AS_OF,
        watch=WATCH,
    )
    assert scope.ids == {"p1", "p2", "claimed", "earlier", "confirmed", "now"}


def test_an_unscheduled_watched_payout_is_read_only_inside_its_own_outcomes_window() -> None:
    """Failed, aborted and unknown ones for watch_days, settled and returned for
    return_watch_days, in calendar days: an outcome seen 89 local days ago still has its day-90
    check, one seen 90 days ago has none left, so deciding it again would change nothing (and at
    steady state every settled payout past 30 days has none)."""
    nothing = pd.DataFrame()
    returns = KnownReturns(notices=nothing, earlier=nothing, confirmations=nothing)
    scope = payout_scope(
        poll_ids=[], returns=returns, answers=nothing, cases=NO_CASES, as_of=AS_OF, watch=WATCH
    )
    today = datetime(2026, 11, 20, tzinfo=UTC)
    assert dict(scope.unscheduled) == {
        frozenset({"aborted", "failed", "unknown"}): today - timedelta(days=89),
        frozenset({"returned", "settled"}): today - timedelta(days=29),
    }


def test_only_payouts_seen_failed_or_flagged_late_name_parties_for_duplicates() -> None:
    """Ever failed, failed before, a failure callback, or a carried late_settlement."""
    frame = pd.DataFrame(
        {
            "transaction_id": ["a", "b", "c", "d", "e"],
            "bank_account_id": ["ba", "bb", "bc", "bd", "be"],
            "customer_id": ["ca", "cb", "cc", "cd", "ce"],
            "amount_minor": pd.array([1, 2, 3, 4, 5], dtype="Int64"),
            "created": pd.to_datetime([AS_OF, None, AS_OF, AS_OF, AS_OF], utc=True),
            "ever_failed": pd.array([True, False, False, False, False], dtype="boolean"),
            "prev_outcome": pd.Categorical([None, "aborted", "settled", "settled", "settled"]),
            "prev_exceptions": pd.array(["", "", "late_settlement", "", None], dtype="string"),
        }
    )
    callbacks = pd.DataFrame({"transaction_id": ["d"]})
    parties = duplicate_parties(frame, callbacks)
    assert list(parties["bank_account_id"]) == ["ba", "bb", "bc", "bd"]
    assert list(parties["amount_minor"]) == [1, 2, 3, 4]
    # Candidates are the later payouts of the pair: the read starts after the late one's created.
    assert list(parties["created"].isna()) == [False, True, False, False]


def test_the_related_reads_name_references_and_merged_windows_of_each_party_and_amount() -> None:
    """Every reference; per party and amount, created within the window of a payout's, with
    overlapping spans merged; a payout without created names no window."""
    h = timedelta(hours=1)
    frame = pd.DataFrame(
        {
            "transaction_id": ["a", "b", "c", "d"],
            "merchant_reference": pd.array(["r1", "r2", "r1", "r4"], dtype="string"),
            "bank_account_id": pd.array(["acct", "acct", "acct", None], dtype="string"),
            "customer_id": pd.array([None, None, None, "cust"], dtype="string"),
            "amount_minor": pd.array([100, 100, 100, 100], dtype="Int64"),
            "created": pd.to_datetime([AS_OF, AS_OF + 10 * h, AS_OF + 100 * h, None], utc=True),
            "ever_failed": pd.array([False] * 4, dtype="boolean"),
            "prev_outcome": pd.Categorical(["settled"] * 4),
            "prev_exceptions": pd.array([""] * 4, dtype="string"),
        }
    )
    callbacks = pd.DataFrame({"transaction_id": pd.Series(dtype="string")})
    reads = related_reads(frame, callbacks, window=timedelta(hours=24))
    assert reads.references == {"r1", "r2", "r4"}
    assert reads.ranges == (
        PartyRange("bank_account_id", "acct", 100, AS_OF - 24 * h, AS_OF + 34 * h, undated=False),
        PartyRange("bank_account_id", "acct", 100, AS_OF + 76 * h, AS_OF + 124 * h, undated=False),
    )


def test_every_payout_a_live_case_names_is_in_scope_and_a_return_case_names_none() -> None:
    """A finding nobody acted on is decided again every night, so it never turns "resolved"
    unseen: the payouts live cases name join the scope; a case about a return names no payout."""
    nothing = pd.DataFrame()
    returns = KnownReturns(notices=nothing, earlier=nothing, confirmations=nothing)
    cases = pd.DataFrame(
        {"item_kind": ["payout", "return", "payout"], "item_id": ["p9", "r1", "p7"]}
    )
    scope = payout_scope(
        poll_ids=["p1"], returns=returns, answers=nothing, cases=cases, as_of=AS_OF, watch=WATCH
    )
    assert scope.ids == {"p1", "p7", "p9"}


def test_the_outcomes_outside_the_payouts_read_are_the_stored_counts_less_those_read() -> None:
    """Payouts read are decided again and counted from their decision; the others keep their
    stored outcome. A count that reaches zero (or below, an import between the two reads) is
    left out, and a payout read without an outcome (never reconciled) subtracts nothing."""
    read = pd.DataFrame(
        {"prev_outcome": pd.Categorical(["settled", "settled", "failed", None, "pending"])}
    )
    stored = {"settled": 10, "failed": 1, "pending": 0, "returned": 3}
    assert other_outcomes(stored, read) == {"settled": 8, "returned": 3}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.sampled_from([100, 200]), st.integers(0, 96)),
        min_size=1,
        max_size=25,
    )
)
def test_the_windows_of_many_parties_merge_exactly_where_a_payouts_window_reaches_the_next(
    payouts: list[tuple[str, int, int]],
) -> None:
    """Random payouts of two customers and two amounts, hours apart: each (customer, amount)
    gets the spans a walk in time order makes, a new span wherever the next payout's window
    starts after every earlier one's ends."""
    h, window = timedelta(hours=1), timedelta(hours=6)
    frame = pd.DataFrame(
        {
            "transaction_id": [f"t{i}" for i in range(len(payouts))],
            "merchant_reference": pd.array([None] * len(payouts), dtype="string"),
            "bank_account_id": pd.array([None] * len(payouts), dtype="string"),
            "customer_id": pd.array([who for who, _, _ in payouts], dtype="string"),
            "amount_minor": pd.array([amount for _, amount, _ in payouts], dtype="Int64"),
            "created": pd.to_datetime([AS_OF + hours * h for _, _, hours in payouts], utc=True),
            "ever_failed": pd.array([False] * len(payouts), dtype="boolean"),
            "prev_outcome": pd.Categorical(["settled"] * len(payouts)),
            "prev_exceptions": pd.array([""] * len(payouts), dtype="string"),
        }
    )
    callbacks = pd.DataFrame({"transaction_id": pd.Series(dtype="string")})
    wanted: list[PartyRange] = []
    for who, amount in sorted({(w, a) for w, a, _ in payouts}):
        spans: list[list[datetime]] = []
        for hours in sorted(t for w, a, t in payouts if (w, a) == (who, amount)):
            at = AS_OF + hours * h
            if spans and at - window <= spans[-1][1]:
                spans[-1][1] = at + window
            else:
                spans.append([at - window, at + window])
        wanted += [PartyRange("customer_id", who, amount, s, u, undated=False) for s, u in spans]
    assert related_reads(frame, callbacks, window=window).ranges == tuple(wanted)
