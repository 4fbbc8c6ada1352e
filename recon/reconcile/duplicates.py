"""Possible duplicates: recorded payouts that may be one intent paid twice. Pure.

Two recorded payouts *pair* when they share a ``merchant_reference``, or go to the same bank
account or the same customer with the same amount and currency, created within the window of each
other (``RECON_DUPLICATE_WINDOW``, 24 h by default). Only payouts settled (settled, returned) or in
flight (pending, delayed, unchecked) pair: a failed, aborted or unknown attempt followed by its
retry is how one pays once. Payouts that pair, directly or through each other, are one group: one
finding, filed under its first member (the earliest created, then the lowest id), naming every
member. The same members keep a person's resolution ("intended"), a new member reopens it, a
member that fails leaves. The money at stake is what the group paid beyond its largest payout
(in that payout's currency): at most one of them was meant.

Choices made here, which the rule alone leaves open:

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
from recon.frames import ItemKind, PayoutsOut
from recon.reconcile.finding import Found, Kind, Money
from recon.reconcile.outcomes import Tonight
from recon.reconcile.work import mask

_P = PayoutsOut
# Settled (settled, returned) or in flight (pending, delayed, unchecked).
MEMBER_OUTCOMES = frozenset(o.value for o in OPEN_OUTCOMES | RETURN_WATCHED_OUTCOMES)
PARTIES = (_P.BANK_ACCOUNT_ID, _P.CUSTOMER_ID)

POSSIBLE_DUPLICATE = Kind(
    name="possible_duplicate",
    items=(ItemKind.PAYOUT,),
    label="Possibly paid twice",
    action=(
        "Settled or in flight together (same merchant_reference, or same bank account or customer "
        "and amount): check whether the customer was meant to be paid more than once; if not, "
        "recover the duplicates; if so, resolve it as intended."
    ),
    detail=(
        "{{ members|length }} payouts settled or in flight: {{ members|join(', ') }} (the same "
        "merchant_reference, or the same bank account or customer and amount within "
        "{{ window_seconds|duration }})"
    ),
    # The same members keep a person's resolution ("intended"); a member that fails leaves.
    grows=("members",),
    money=Money.POSSIBLY_TWICE,
)


def duplicate_members(payouts: pd.DataFrame, window: timedelta) -> pd.Series:
    """Per payout (on ``payouts``' index), the others it pairs with, sorted and joined by ``;``
    ("" when none); see the module docstring for the rule.

    ``payouts``: ``transaction_id``, ``merchant_reference``, ``amount_minor``, ``currency``,
    ``bank_account_id``, ``customer_id``, ``created``, ``outcome``.
    """
    cols = [_P.TRANSACTION_ID, _P.MERCHANT_REFERENCE, _P.AMOUNT_MINOR, _P.CURRENCY, *PARTIES]
    live = payouts.loc[mask(payouts[_P.OUTCOME].isin(MEMBER_OUTCOMES)), [*cols, _P.CREATED]]
    pairs = [_pairs(live, [_P.MERCHANT_REFERENCE])]
    for party in PARTIES:
        same = _pairs(live, [party, _P.AMOUNT_MINOR, _P.CURRENCY])
        apart = (same[f"{_P.CREATED}_a"] - same[f"{_P.CREATED}_b"]).abs()
        pairs.append(same[mask(apart <= pd.Timedelta(window))])
    if not any(len(p) for p in pairs):  # most nights no payout pairs: nothing to join by id
        return pd.Series("", index=payouts.index, dtype=fr.TEXT)
    both = pd.concat(pairs)[["a", "b"]].drop_duplicates().sort_values(["a", "b"])
    joined = both.groupby("a")["b"].agg(";".join).astype(fr.TEXT)
    ids = payouts[_P.TRANSACTION_ID].astype(fr.TEXT)
    return ids.map(joined).astype(fr.TEXT).fillna("").rename(None)


def _pairs(live: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Every ordered pair (a, b) of different payouts that agree on ``keys`` (all known)."""
    # Only rows whose keys are all known and shared with another row can pair: found on the keys
    # alone, before the other columns are copied (most keys are unique, or unknown).
    key = live[keys]
    shared = key.duplicated(keep=False).to_numpy() & key.notna().all(axis=1).to_numpy()
    side = live.loc[shared, [_P.TRANSACTION_ID, _P.CREATED, *keys]]
    if side.empty:  # no two agree: no pairs, without a merge to find none
        ids, created = side[_P.TRANSACTION_ID], side[_P.CREATED]
        return pd.DataFrame(
            {"a": ids, "b": ids, f"{_P.CREATED}_a": created, f"{_P.CREATED}_b": created}
        )
    merged = side.merge(side, on=keys, suffixes=("_a", "_b"))
    merged = merged.rename(columns={f"{_P.TRANSACTION_ID}_a": "a", f"{_P.TRANSACTION_ID}_b": "b"})
    return merged[merged["a"] != merged["b"]]


def duplicate_groups(payouts: pd.DataFrame, window: timedelta) -> pd.Series:
    """Per payout (on ``payouts``' index), the id of its group's first member ("" when it pairs
    with none): the connected pairs of :func:`duplicate_members`, each group under its earliest
    created member (then the lowest id)."""
    paired = duplicate_members(payouts, window)
    members = paired.tolist()
    # Only the members' ids and times: made for every payout, they were most of the cost.
    at = np.flatnonzero(paired.ne("").to_numpy(dtype=bool)).tolist()
    ids = payouts[_P.TRANSACTION_ID].iloc[at].astype(str).tolist()
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, n in zip(ids, at, strict=True):
        for other in filter(None, members[n].split(";")):
            if other in parent:
                parent[root(other)] = root(i)
    created = dict(zip(ids, payouts[_P.CREATED].iloc[at].tolist(), strict=True))

    def order(i: str) -> tuple[bool, pd.Timestamp, str]:
        at = created[i]
        return (pd.isna(at), pd.Timestamp(0, tz="UTC") if pd.isna(at) else at, i)

    groups: dict[str, list[str]] = {}
    for i in parent:
        groups.setdefault(root(i), []).append(i)
    first = {m: min(group, key=order) for group in groups.values() for m in group}
    group_of = [""] * len(payouts)  # every member is in a group: the rest pair with none
    for i, n in zip(ids, at, strict=True):
        group_of[n] = first[i]
    return pd.Series(group_of, index=payouts.index, dtype=fr.TEXT)


def possible_duplicate(work: pd.DataFrame, tonight: Tonight, _: Mapping[Kind, Found]) -> Found:
    """One finding per group, on its first member: the members (sorted), the window of the rule,
    and the money at stake."""
    window = tonight.params.duplicate_window
    group = duplicate_groups(work, window)
    in_group = group.ne("").to_numpy(dtype=bool)
    first = in_group.copy()
    currency = work[_P.CURRENCY].astype("string")
    listed = np.full(len(work), None, dtype=object)  # a list only where read: the masked rows
    stake = pd.Series(pd.NA, index=work.index, dtype="Int64")
    if in_group.any():  # most nights no payout pairs: no groups to list or sum
        ids = work[_P.TRANSACTION_ID].astype(str)
        first &= group.eq(ids).to_numpy(dtype=bool)
        grouped = pd.DataFrame(
            {
                "group": group,
                "id": ids,
                "amount": work[_P.AMOUNT_MINOR].astype("Int64"),
                "currency": currency,
            }
        )[in_group]
        members = grouped.sort_values("id").groupby("group")["id"].agg(list)
        # At stake: what the group paid beyond its largest payout, in the first member's currency
        # (every first member is in ``grouped``: its own group).
        mine = grouped["currency"].groupby(grouped["id"]).first()
        own = grouped.assign(mine=grouped["group"].map(mine))
        same = own[own["currency"].eq(own["mine"]).fillna(False).to_numpy(dtype=bool)]
        paid = same.groupby("group")["amount"]
        stake = group.map((paid.sum() - paid.max()).astype("Int64")).astype("Int64").where(first)
        names = group.tolist()
        for at in np.flatnonzero(first).tolist():  # only the first members list their group
            listed[at] = members.get(names[at], [])
    return Found(
        first,
        pd.DataFrame(
            {
                "members": listed,
                "window_seconds": int(pd.Timedelta(window).total_seconds()),
                "at_stake_minor": stake,
                "currency": currency,
            },
            index=work.index,
        ),
        # The members come from the record and tonight's outcomes: known whether or not the
        # payout was answered tonight.
        known=np.ones(len(work), dtype=bool),
    )


__all__ = [
    "MEMBER_OUTCOMES",
    "POSSIBLE_DUPLICATE",
    "duplicate_groups",
    "duplicate_members",
    "possible_duplicate",
]
