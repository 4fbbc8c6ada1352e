"""Possible duplicates: recorded payouts that may be one intent paid twice (issue 25, item 3). Pure.

Two recorded payouts *pair* when they share a ``merchant_reference``, or go to the same bank
account or the same customer with the same amount and currency, created within the window of each
other (``RECON_DUPLICATE_WINDOW``, 24 h by default). Only payouts settled (settled, returned) or in
flight (pending, delayed, unchecked) pair: a failed, aborted or unknown attempt followed by its
retry is how one pays once. A payout that pairs with any other is possibly paid twice, its facts
naming every payout it pairs with, sorted: the same members keep a person's resolution
("intended"), a new member reopens it, a member that fails leaves.

Choices where the issue is silent:

- A ``merchant_reference`` pairs at any distance in time and any amount: one reference is one
  intent, and a retry a week later pays it twice all the same.
- The account or customer rule needs both ``created`` (the record's, else the provider's): without
  one the window cannot be measured, and pairing every same-amount payout to an account ever made
  (a monthly salary) would bury the real ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import OPEN_OUTCOMES, RETURN_WATCHED_OUTCOMES
from recon.frames import ItemKind, PayoutCol
from recon.reconcile.finding import Found, Kind
from recon.reconcile.outcomes import Tonight
from recon.reconcile.work import mask

_P = PayoutCol
# Settled (settled, returned) or in flight (pending, delayed, unchecked).
MEMBER_OUTCOMES = frozenset(o.value for o in OPEN_OUTCOMES | RETURN_WATCHED_OUTCOMES)
PARTIES = (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID)

POSSIBLE_DUPLICATE = Kind(
    name="possible_duplicate",
    items=(ItemKind.PAYOUT,),
    label="Possibly paid twice",
    action=(
        "Settled or in flight beside the payouts named in the detail (same merchant_reference, or "
        "same bank account or customer and amount): check whether the customer was meant to be "
        "paid more than once; if not, recover the duplicate; if so, resolve it as intended."
    ),
    detail=(
        "also settled or in flight: {{ members|join(';') }} (the same merchant_reference, or the "
        "same bank account or customer and amount within {{ window_seconds|duration }})"
    ),
    # The same members keep a person's resolution ("intended"); a member that fails leaves.
    grows=("members",),
)


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


def possible_duplicate(work: pd.DataFrame, tonight: Tonight, _: Mapping[Kind, Found]) -> Found:
    """Where a payout pairs with others: the members (sorted) and the window of the rule."""
    window = tonight.params.duplicate_window
    members = duplicate_members(work, window)
    return Found(
        members.ne("").to_numpy(dtype=bool),
        pd.DataFrame(
            {
                "members": [m.split(";") if m else [] for m in members],
                "window_seconds": int(pd.Timedelta(window).total_seconds()),
            },
            index=work.index,
        ),
        # The members come from the record and tonight's outcomes: known whether or not the
        # payout was answered tonight.
        known=np.ones(len(work), dtype=bool),
    )


__all__ = ["MEMBER_OUTCOMES", "POSSIBLE_DUPLICATE", "duplicate_members", "possible_duplicate"]
