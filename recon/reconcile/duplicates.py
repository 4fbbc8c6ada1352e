"""Possible duplicates: recorded payouts that may be one intent paid twice (issue 25, item 3). Pure.

Two recorded payouts *pair* when they share a ``merchant_reference``, or go to the same bank
account or the same customer with the same amount and currency, created within the window of each
other (``RECON_DUPLICATE_WINDOW``, 24 h by default). Only payouts settled (settled, returned) or in
flight (pending, delayed, unchecked) pair: a failed, aborted or unknown attempt followed by its
retry is how one pays once. A payout that pairs with any other is ``possible_duplicate``, its
detail naming every payout it pairs with, sorted: the same members keep a person's resolution
("intended"), a new member reopens it (:func:`members_grew`), a member that fails leaves.

Choices where the issue is silent:

- A ``merchant_reference`` pairs at any distance in time and any amount: one reference is one
  intent, and a retry a week later pays it twice all the same.
- The account or customer rule needs both ``created`` (the record's, else the provider's): without
  one the window cannot be measured, and pairing every same-amount payout to an account ever made
  (a monthly salary) would bury the real ones.
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from recon import frames as fr
from recon.constants import OPEN_OUTCOMES, RETURN_WATCHED_OUTCOMES, Flag
from recon.durations import duration_text
from recon.frames import PayoutCol
from recon.reconcile.work import flag_col, mask

_P = PayoutCol
# Settled (settled, returned) or in flight (pending, delayed, unchecked).
MEMBER_OUTCOMES = frozenset(o.value for o in OPEN_OUTCOMES | RETURN_WATCHED_OUTCOMES)
PARTIES = (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID)
_PREFIX = "also settled or in flight: "
# Working columns (dropped by classify): the members, and the finding's detail.
MEMBERS = "_duplicate_members"
DETAIL = "_duplicate_detail"


def duplicate_members(payouts: pd.DataFrame, window: timedelta) -> pd.Series:
    """Per payout (on ``payouts``' index), the others it pairs with, sorted and joined by ``;``
    ("" when none); see the module docstring for the rule.

    ``payouts``: ``transaction_id``, ``merchant_reference``, ``amount_minor``, ``currency``,
    ``bank_account_id``, ``customer_id``, ``created``, ``outcome``.
    """
    cols = [_P.TRANSACTION_ID, _P.MERCHANT_REFERENCE, _P.AMOUNT_MINOR, _P.CURRENCY, *PARTIES]
    live = payouts.loc[
        mask(payouts[_P.OUTCOME].astype("string").isin(MEMBER_OUTCOMES)), [*cols, _P.CREATED]
    ]
    pairs = [_pairs(live, [_P.MERCHANT_REFERENCE])]
    for party in PARTIES:
        same = _pairs(live, [party, _P.AMOUNT_MINOR, _P.CURRENCY])
        apart = (same[f"{_P.CREATED}_a"] - same[f"{_P.CREATED}_b"]).abs()
        pairs.append(same[mask(apart <= pd.Timedelta(window))])
    both = pd.concat(pairs)[["a", "b"]].drop_duplicates().sort_values(["a", "b"])
    joined = both.groupby("a")["b"].agg(";".join).astype(fr.TEXT)
    ids = payouts[_P.TRANSACTION_ID].astype(fr.TEXT)
    return ids.map(joined).astype(fr.TEXT).fillna("").rename(None)


def _pairs(live: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Every ordered pair (a, b) of different payouts that agree on ``keys`` (all known)."""
    side = live[[_P.TRANSACTION_ID, _P.CREATED, *keys]].dropna(subset=keys)
    side = side[side.duplicated(keys, keep=False)]  # only groups of two or more can pair
    merged = side.merge(side, on=keys, suffixes=("_a", "_b"))
    merged = merged.rename(columns={f"{_P.TRANSACTION_ID}_a": "a", f"{_P.TRANSACTION_ID}_b": "b"})
    return merged[merged["a"] != merged["b"]]


def possible_duplicates(work: pd.DataFrame, window: timedelta) -> pd.DataFrame:
    """The classify step: the ``possible_duplicate`` flag, its members and its detail."""
    members = duplicate_members(work, window)
    flagged = members.ne("").to_numpy(dtype=bool)
    rule = (
        f" (the same merchant_reference, or the same bank account or customer and amount within "
        f"{duration_text(window)})"
    )
    detail = (_PREFIX + members + rule).where(flagged, "")
    return work.assign(
        **fr.columns({flag_col(Flag.POSSIBLE_DUPLICATE): flagged, MEMBERS: members, DETAIL: detail})
    )


def _members_in(facts: str) -> frozenset[str]:
    if not facts.startswith(_PREFIX):
        return frozenset()
    listed = facts[len(_PREFIX) :].split(" (", 1)[0]
    return frozenset(m for m in listed.split(";") if m)


def members_grew(before: str, now: str) -> bool:
    """Whether a possible duplicate's facts (its detail) name a member that ``before`` did not."""
    return bool(_members_in(now) - _members_in(before))


__all__ = ["MEMBER_OUTCOMES", "duplicate_members", "members_grew", "possible_duplicates"]
