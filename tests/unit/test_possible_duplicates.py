"""Possible duplicates: recorded payouts that may be one intent paid twice."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal, assert_series_equal

from recon.reconcile.classify import ClassifyParams
from recon.reconcile.duplicates import duplicate_members
from tests.unit.classify_support import AS_OF, DAY, answer, flag_rows, flags, payout, run

MINUTE = pd.Timedelta(minutes=1)
WINDOW = pd.Timedelta(hours=24)
T0 = AS_OF - 2 * DAY


def frame(
    *rows: tuple[str, str, int, str | None, str | None, pd.Timestamp | None, str],
) -> pd.DataFrame:
    """Literal payouts: id, merchant_reference, amount, bank account, customer, created, outcome."""
    ids, refs, amounts, accounts, customers, created, outcomes = zip(*rows, strict=True)
    return pd.DataFrame(
        {
            "transaction_id": pd.array(ids, dtype="string"),
            "merchant_reference": pd.array(refs, dtype="string"),
            "amount_minor": pd.array(amounts, dtype="Int64"),
            "currency": pd.array(["EUR"] * len(ids), dtype="string"),
            "bank_account_id": pd.array(accounts, dtype="string"),
            "customer_id": pd.array(customers, dtype="string"),
            "created": pd.to_datetime(list(created), utc=True),
            "outcome": pd.array(outcomes, dtype="string"),
        },
        index=pd.Index([10 * i for i in range(len(ids))]),
    )


def members(values: list[str], index: pd.Index) -> pd.Series:
    return pd.Series(values, index=index, dtype="string")


def test_two_settled_payouts_of_one_reference_name_each_other() -> None:
    """Same merchant_reference, amount and account, ten minutes apart: each names the other."""
    pay = frame(
        ("a", "INV-1", 1000, "acct", None, T0, "settled"),
        ("b", "INV-1", 1000, "acct", None, T0 + 10 * MINUTE, "settled"),
        ("c", "INV-2", 1000, "other", None, T0, "settled"),
    )
    assert_series_equal(duplicate_members(pay, WINDOW), members(["b", "a", ""], pay.index))


def test_a_reference_pairs_at_any_distance_in_time_and_any_amount() -> None:
    """One merchant_reference is one intent: a week apart, another amount, still a pair."""
    pay = frame(
        ("a", "INV-1", 1000, "x", None, T0, "returned"),
        ("b", "INV-1", 2500, "y", None, T0 + 7 * DAY, "pending"),
    )
    assert_series_equal(duplicate_members(pay, WINDOW), members(["b", "a"], pay.index))


def test_a_bank_account_or_customer_and_amount_pair_only_within_the_window() -> None:
    """Same account and amount 23 h apart pair; 25 h apart, another amount or no created do not."""
    pay = frame(
        ("a", "r-a", 1000, "acct", None, T0, "settled"),
        ("b", "r-b", 1000, "acct", None, T0 + 23 * pd.Timedelta(hours=1), "delayed"),
        ("c", "r-c", 1000, "acct", None, T0 + 48 * pd.Timedelta(hours=1), "settled"),
        ("d", "r-d", 999, "acct", None, T0, "settled"),
        ("e", "r-e", 1000, "acct", None, None, "settled"),
        ("f", "r-f", 1000, None, "cust", T0, "unchecked"),
        ("g", "r-g", 1000, None, "cust", T0 - 12 * pd.Timedelta(hours=1), "settled"),
    )
    got = duplicate_members(pay, WINDOW)
    assert_series_equal(got, members(["b", "a", "", "", "", "g", "f"], pay.index))


def test_failed_aborted_and_unknown_attempts_are_not_members() -> None:
    """A failed attempt and its retry are how one pays once; only settled or in-flight pair."""
    pay = frame(
        ("failed", "INV-1", 1000, "acct", None, T0, "failed"),
        ("aborted", "INV-1", 1000, "acct", None, T0, "aborted"),
        ("unknown", "INV-1", 1000, "acct", None, T0, "unknown"),
        ("retry", "INV-1", 1000, "acct", None, T0 + MINUTE, "settled"),
    )
    assert_series_equal(duplicate_members(pay, WINDOW), members(["", "", "", ""], pay.index))


def test_three_members_each_name_the_other_two_sorted() -> None:
    """Every member lists the others, in id order."""
    pay = frame(
        ("z", "INV-1", 1000, None, None, T0, "settled"),
        ("a", "INV-1", 1000, None, None, T0, "pending"),
        ("m", "INV-1", 1000, None, None, T0, "settled"),
    )
    assert_series_equal(duplicate_members(pay, WINDOW), members(["a;m", "m;z", "a;z"], pay.index))


def test_two_settled_payouts_of_one_intent_are_one_finding_naming_both() -> None:
    """One group, one finding on its first member, naming both; each payout's cell names it."""
    result = run(
        [
            payout("first", merchant_reference="INV-9", bank_account_id="acct", created=T0),
            payout(
                "second",
                merchant_reference="INV-9",
                bank_account_id="acct",
                created=T0 + 10 * MINUTE,
            ),
        ],
        [answer("first", 6), answer("second", 6)],
        params=ClassifyParams(duplicate_window=WINDOW),
    )
    assert_frame_equal(flags(result), flag_rows(("first", "payout", "possible_duplicate")))
    finding = result.exceptions.iloc[0]
    assert finding["facts"]["members"] == ["first", "second"]
    assert finding["facts"]["at_stake_minor"] == 1000  # one of two 10.00 EUR payouts too many
    assert finding["detail"].startswith("2 payouts settled or in flight: first, second (")
    assert list(result.payouts["exceptions"]) == ["possible_duplicate", "possible_duplicate"]
