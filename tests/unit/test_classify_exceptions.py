"""Exception flags on payouts: what needs a person, zero or more per payout."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from recon.reconcile.classify import ClassifyParams
from tests.unit.classify_support import (
    AS_OF,
    DAY,
    NA,
    answer,
    expected,
    fetch_error,
    flag_rows,
    flags,
    next_run,
    not_found,
    payout,
    pick,
    refused,
    run,
)


def test_failed_in_one_run_then_settled_in_the_next_is_a_late_settlement() -> None:
    """A failed payout that later settles is flagged, naming later same-amount payouts."""
    t0 = AS_OF - 5 * DAY
    store = [
        payout("late", bank_account_id="B", customer_id="C", created=t0),
        payout("again-bank", bank_account_id="B", created=t0 + DAY, polled=False),
        payout("again-customer", customer_id="C", created=t0 + 2 * DAY, polled=False),
        payout("earlier", bank_account_id="B", created=t0 - DAY, polled=False),
        payout("other-amount", bank_account_id="B", amount_minor=999, created=t0 + DAY),
        payout("other-currency", customer_id="C", currency="SEK", created=t0 + DAY),
    ]
    first = run(store, [answer("late", 3)], as_of=AS_OF - DAY)
    second = run(next_run(first), [answer("late", 6)])
    want = expected(
        transaction_id=["late"],
        outcome=["settled"],
        exceptions=["late_settlement;possible_duplicate"],
        candidate_duplicates=["again-bank;again-customer"],
    )
    assert_frame_equal(pick(second.payouts.head(1), want), want)
    late = second.exceptions[second.exceptions["flag"] == "late_settlement"].reset_index(drop=True)
    assert_frame_equal(flags_of(late), flag_rows(("late", "payout", "late_settlement")))
    assert "candidate duplicates: again-bank;again-customer" in str(late.loc[0, "detail"])


def flags_of(exceptions: pd.DataFrame) -> pd.DataFrame:
    return exceptions[["item_id", "item_kind", "flag"]]


def test_a_late_settlement_is_also_seen_in_state_5() -> None:
    """Credited (5) after an earlier failure counts too; without an earlier failure it does not."""
    result = run(
        [payout("was-aborted", ever_failed=True), payout("fresh")],
        [answer("was-aborted", 5), answer("fresh", 5)],
    )
    assert_frame_equal(flags(result), flag_rows(("was-aborted", "payout", "late_settlement")))


def test_a_different_amount_is_an_amount_mismatch() -> None:
    """The provider's amount is compared exactly, and both read as money."""
    result = run([payout("p"), payout("q")], [answer("p", amount_minor=1001), answer("q")])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "amount_mismatch")))
    assert result.exceptions.loc[0, "detail"] == "local 10.00 EUR, provider 10.01 EUR"


def test_an_amount_with_too_many_decimals_is_an_amount_mismatch() -> None:
    """10.005 EUR does not fit two decimals: <NA> in amount_minor, a mismatch quoting the text."""
    result = run([payout("p")], [answer("p", amount_minor=NA, amount_text="10.005")])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "amount_mismatch")))
    assert "10.005" in str(result.exceptions.loc[0, "detail"])


def test_currency_is_compared_case_insensitively() -> None:
    """'eur' matches EUR; SEK does not."""
    result = run(
        [payout("lower"), payout("sek")],
        [answer("lower", currency="eur"), answer("sek", currency="SEK")],
    )
    assert_frame_equal(flags(result), flag_rows(("sek", "payout", "currency_mismatch")))


def test_a_transaction_that_is_not_a_withdrawal_is_not_a_payout() -> None:
    """Type 0 (a payment) under a payout id is flagged."""
    result = run([payout("p")], [answer("p", type=0)])
    assert_frame_equal(flags(result), flag_rows(("p", "payout", "not_a_payout")))


def test_an_id_the_provider_does_not_know_is_an_unknown_transaction() -> None:
    """not_found is flagged unknown_transaction."""
    result = run([payout("n")], [not_found("n")])
    assert_frame_equal(flags(result), flag_rows(("n", "payout", "unknown_transaction")))


def test_pending_or_delayed_longer_than_stale_days_is_stale() -> None:
    """Age counts from created, else from prev_outcome_since; younger ones are not stale."""
    three = ClassifyParams(stale_days=3)
    result = run(
        [
            payout("old-pending", created=AS_OF - 4 * DAY),
            payout("old-delayed", created=AS_OF - 4 * DAY),
            payout("young", created=AS_OF - 2 * DAY),
            payout(
                "no-created", created=NA, prev_outcome="pending", prev_outcome_since=AS_OF - 5 * DAY
            ),
            payout("old-settled", created=AS_OF - 9 * DAY),
        ],
        [
            answer("old-pending", 1),
            answer("old-delayed", 4, error_code="transaction_is_delayed_in_bank"),
            answer("young", 1),
            answer("no-created", 1),
            answer("old-settled", 6),
        ],
        params=three,
    )
    want = flag_rows(
        ("no-created", "payout", "stale"),
        ("old-delayed", "payout", "stale"),
        ("old-pending", "payout", "stale"),
    )
    assert_frame_equal(flags(result), want)
    assert result.exceptions.loc[2, "detail"] == "pending for 4.0 days"


def test_a_polled_payout_without_an_answer_is_fetch_failed() -> None:
    """An error answer, or none at all, for a polled payout is fetch_failed."""
    result = run([payout("e"), payout("silent")], [fetch_error("e")])
    want = flag_rows(("e", "payout", "fetch_failed"), ("silent", "payout", "fetch_failed"))
    assert_frame_equal(flags(result), want)


def test_a_payout_the_provider_refuses_is_fetch_failed_saying_so() -> None:
    """A refused id is that payout's fetch_failed, naming the refusal; it keeps its outcome."""
    result = run(
        [payout("r", prev_outcome="pending", prev_state=1), payout("ok")],
        [refused("r"), answer("ok")],
    )
    assert_frame_equal(flags(result), flag_rows(("r", "payout", "fetch_failed")))
    assert result.exceptions.loc[0, "detail"] == (
        "the provider refuses this id to this merchant account; kept outcome pending"
    )
    want = expected(transaction_id=["r", "ok"], outcome=["pending", "settled"])
    assert_frame_equal(pick(result.payouts, want), want)


def test_the_exceptions_cell_joins_sorted_flags() -> None:
    """Several flags on one payout are one ';'-joined, sorted cell; none is an empty string."""
    result = run(
        [payout("p", created=AS_OF - 9 * DAY), payout("clean")],
        [answer("p", 1, type=0, currency="SEK", amount_minor=5), answer("clean")],
    )
    want = expected(
        transaction_id=["p", "clean"],
        exceptions=["amount_mismatch;currency_mismatch;not_a_payout;stale", ""],
    )
    assert_frame_equal(pick(result.payouts, want), want)


def test_answer_flags_are_kept_while_a_payout_is_not_fetched() -> None:
    """A settled late settlement not polled again keeps its flag instead of looking resolved."""
    previous = "amount_mismatch;late_settlement"
    result = run(
        [
            payout(
                "s", polled=False, prev_outcome="settled", prev_state=6, prev_exceptions=previous
            ),
            payout("fixed", prev_outcome="pending", prev_exceptions="amount_mismatch;stale"),
        ],
        [answer("fixed", 6)],
    )
    want = expected(transaction_id=["s", "fixed"], exceptions=[previous, ""])
    assert_frame_equal(pick(result.payouts, want), want)
    assert set(result.exceptions["detail"]) == {"kept from the previous run (not fetched this run)"}


def test_a_clean_run_has_no_exceptions_and_typed_empty_frames() -> None:
    """No findings: an empty exceptions frame that still has its columns and dtypes."""
    result = run([payout("p")], [answer("p")])
    assert_frame_equal(flags(result), flag_rows())
    assert list(result.exceptions.columns) == [
        "item_id", "item_kind", "flag", "facts", "known", "detail"
    ]  # fmt: skip
    assert isinstance(result.exceptions["item_kind"].dtype, pd.CategoricalDtype)
