"""Double payments: a late settlement whose candidate duplicate also settled."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.testing import assert_frame_equal

from recon.reconcile.double_payments import paid_twice
from tests.unit.classify_support import AS_OF, DAY, answer, flag_rows, next_run, payout, run


def frame(*rows: tuple[str, int, str, str, int | None, str]) -> pd.DataFrame:
    """Literal payouts: id, amount, currency, outcome, returned_minor, candidate_duplicates."""
    ids, amounts, currencies, outcomes, returned, cands = zip(*rows, strict=True)
    return pd.DataFrame(
        {
            "transaction_id": pd.array(ids, dtype="string"),
            "amount_minor": pd.array(amounts, dtype="Int64"),
            "currency": pd.array(currencies, dtype="string"),
            "outcome": pd.array(outcomes, dtype="string"),
            "returned_minor": pd.array(returned, dtype="Int64"),
            "candidate_duplicates": pd.array(cands, dtype="string"),
        },
        index=pd.Index([10 * i for i in range(len(ids))]),
    )


def want(repaid_by: list[str], minor: list[int], index: pd.Index) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "repaid_by": pd.Series(repaid_by, index=index, dtype="string"),
            "paid_twice_minor": pd.Series(minor, index=index, dtype="Int64"),
        }
    )


def test_a_late_settlement_whose_repayment_settled_is_paid_twice_its_amount() -> None:
    """Late settlement and re-payment both settled: the re-payment is named, its amount twice."""
    pay = frame(
        ("late", 211477, "DKK", "settled", 0, "again"),
        ("again", 211477, "DKK", "settled", 0, ""),
    )
    got = paid_twice(pay, np.array([True, False]))
    assert_frame_equal(got, want(["again", ""], [211477, 0], pay.index))


def test_a_repayment_still_in_flight_or_failed_is_not_a_double_payment() -> None:
    """Only settled (or returned) re-payments count: pending and failed ones paid nothing yet."""
    pay = frame(
        ("late", 1000, "EUR", "settled", 0, "pending;failed"),
        ("pending", 1000, "EUR", "pending", 0, ""),
        ("failed", 1000, "EUR", "failed", 0, ""),
    )
    got = paid_twice(pay, np.array([True, False, False]))
    assert_frame_equal(got, want(["", "", ""], [0, 0, 0], pay.index))


def test_a_payout_that_is_no_late_settlement_or_not_settled_itself_is_not_one() -> None:
    """The rule needs the late_settlement finding and the late payout itself settled."""
    pay = frame(
        ("not-late", 1000, "EUR", "settled", 0, "again"),
        ("late-pending", 1000, "EUR", "pending", 0, "again"),
        ("again", 1000, "EUR", "settled", 0, ""),
    )
    got = paid_twice(pay, np.array([False, True, False]))
    assert_frame_equal(got, want(["", "", ""], [0, 0, 0], pay.index))


def test_returns_count_against_the_amount_paid_twice() -> None:
    """A re-payment returned in full is no double payment; a part returned lowers the amount."""
    pay = frame(
        ("late-a", 1000, "EUR", "settled", 0, "back"),
        ("back", 1000, "EUR", "returned", 1000, ""),
        ("late-b", 1000, "EUR", "returned", 400, "kept"),
        ("kept", 1000, "EUR", "settled", 0, ""),
    )
    got = paid_twice(pay, np.array([True, False, True, False]))
    assert_frame_equal(got, want(["", "", "kept", ""], [0, 0, 600, 0], pay.index))


def test_two_settled_repayments_pay_the_amount_twice_over() -> None:
    """Two re-payments settled: both named, sorted; twice the amount was paid too much."""
    pay = frame(
        ("late", 500, "EUR", "settled", None, "z-again;a-again;gone"),
        ("z-again", 500, "EUR", "settled", 0, ""),
        ("a-again", 500, "EUR", "returned", 0, ""),
    )
    got = paid_twice(pay, np.array([True, False, False]))
    assert_frame_equal(got, want(["a-again;z-again", "", ""], [1000, 0, 0], pay.index))


def test_classify_names_the_double_payment_beside_the_late_settlement() -> None:
    """Failed, then settled, with its same-amount re-payment settled: double_payment, its detail
    naming the re-payment and the amount paid twice."""
    t0 = AS_OF - 5 * DAY
    store = [
        payout("late", bank_account_id="B", amount_minor=211477, currency="DKK", created=t0),
        payout("again", bank_account_id="B", amount_minor=211477, currency="DKK",
               created=t0 + DAY),
    ]  # fmt: skip
    dkk = {"amount_minor": 211477, "amount_text": "2114.77", "currency": "DKK"}
    first = run(store, [answer("late", 3, **dkk), answer("again", 6, **dkk)], as_of=AS_OF - DAY)
    second = run(next_run(first), [answer("late", 6, **dkk), answer("again", 6, **dkk)])
    doubles = second.exceptions[second.exceptions["flag"] == "double_payment"]
    assert_frame_equal(
        doubles[["item_id", "item_kind", "flag"]].reset_index(drop=True),
        flag_rows(("late", "payout", "double_payment")),
    )
    detail = str(doubles["detail"].iloc[0])
    assert detail == (
        "2,114.77 DKK paid twice: settled after it was reported failed, and its re-payment again"
        " settled too"
    )
    late = second.payouts.set_index("transaction_id").loc["late", "exceptions"]
    assert late == "double_payment;late_settlement;possible_duplicate"


def test_a_late_settlement_whose_repayment_failed_is_no_double_payment() -> None:
    """The re-payment failed: a late settlement only, no double_payment."""
    t0 = AS_OF - 5 * DAY
    store = [
        payout("late", bank_account_id="B", created=t0),
        payout("again", bank_account_id="B", created=t0 + DAY),
    ]
    first = run(store, [answer("late", 3), answer("again", 3)], as_of=AS_OF - DAY)
    second = run(next_run(first), [answer("late", 6), answer("again", 3)])
    assert "double_payment" not in set(second.exceptions["flag"].astype(str))
