"""One problem, one finding: what a finding takes in, and which live case carries it on.

A finding names its members: the payouts (or other items) of its problem; a finding about one item
has that item alone. A finding of a kind that absorbs others (:data:`recon.reconcile.kinds.ABSORBS`:
a double payment takes in its late settlement and the possible duplicates that make it) takes in
tonight's findings of those kinds that share a member with it: they are its members, not findings
of their own.

A finding that shares a member with live cases of its own kind, or of a kind it absorbs, is the
same problem: it is filed under the earliest live case of its own kind (a group stays one case as
members come and go), and every other such case ends, merged into it, its people's owner and note
carried over and the merge written in both histories.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from recon.frames import Finding
from recon.reconcile.finding import Facts, read_facts
from recon.reconcile.kinds import ABSORBS, kind_of

Key = tuple[str, str, str]  # item kind, item id, kind name


def members_of(item_id: object, facts: Facts | None) -> frozenset[str]:
    """A finding's members: those its facts name, else its item alone."""
    named = (facts or {}).get("members") or []
    return frozenset(str(m) for m in named) or frozenset({str(item_id)})


def with_members_and_stake(found: pd.DataFrame) -> pd.DataFrame:
    """Every finding naming its members (its item alone, unless its rule named more) and the
    money at stake (its amount, unless its rule said otherwise; none without an amount)."""
    facts = [
        None
        if not isinstance(f, dict)
        else {
            **f,
            "members": f.get("members") or [str(i)],
            "at_stake_minor": f.get("at_stake_minor", f.get("amount_minor")),
        }
        for i, f in zip(found[Finding.ITEM_ID], found[Finding.FACTS], strict=True)
    ]
    return found.assign(**{str(Finding.FACTS): pd.Series(facts, index=found.index)})


def absorb(found: pd.DataFrame) -> pd.DataFrame:
    """Tonight's findings, each absorbing finding having taken in those it absorbs (their rows
    gone, their members among its own)."""
    if found.empty:
        return found
    flags = found[Finding.FLAG].astype(str).tolist()
    items = found[Finding.ITEM_ID].astype(str).tolist()
    facts: list[Any] = found[Finding.FACTS].tolist()
    gone: set[int] = set()
    for i, flag in enumerate(flags):
        takes = ABSORBS.get(flag)
        if not takes or facts[i] is None:
            continue
        mine = set(members_of(items[i], facts[i]))
        for j, other in enumerate(flags):
            if j == i or j in gone or other not in takes:
                continue
            theirs = members_of(items[j], facts[j] if isinstance(facts[j], dict) else None)
            if mine & theirs:
                gone.add(j)
                mine |= theirs
        facts[i] = {**facts[i], "members": sorted(mine)}
    kept = [i for i in range(len(found)) if i not in gone]
    out = found.assign(**{str(Finding.FACTS): pd.Series(facts, index=found.index)})
    return out.iloc[kept]


@dataclass(frozen=True)
class Merge:
    """A live case carried into tonight's finding ``into`` (its key after filing)."""

    case: dict[Any, Any]
    into: Key


def carry_over(found: pd.DataFrame, cases: pd.DataFrame) -> tuple[pd.DataFrame, list[Merge]]:
    """Tonight's findings, each filed under the live case of its own kind it shares a member with
    (the earliest), and the other live cases they carry on (see the module docstring)."""
    if found.empty or cases.empty:
        return found, []
    live = [
        (c, members_of(c["item_id"], read_facts(c["facts"])))
        for c in cases.sort_values("exception_id", key=_case_order).to_dict("records")
    ]
    items = found[Finding.ITEM_ID].astype(str).tolist()
    kinds = found[Finding.ITEM_KIND].astype(str).tolist()
    flags = found[Finding.FLAG].astype(str).tolist()
    facts = found[Finding.FACTS].tolist()
    tonight = set(zip(kinds, items, flags, strict=True))
    taken: set[str] = set()
    merges: list[Merge] = []
    for n, flag in enumerate(flags):
        kind = kind_of(flag)
        takes = ABSORBS.get(flag, frozenset())
        if kind is None or not (kind.grows or takes) or not isinstance(facts[n], dict):
            continue
        mine = members_of(items[n], facts[n])
        sharing = [
            c for c, m in live if m & mine and _id(c) not in taken and _key(c) not in tonight
        ]
        own = [c for c in sharing if c["flag"] == flag]
        if (kinds[n], items[n], flag) not in {_key(c) for c, _ in live} and own:
            kinds[n], items[n] = str(own[0]["item_kind"]), str(own[0]["item_id"])
            taken.add(_id(own[0]))
            own = own[1:]
        into = (kinds[n], items[n], flag)
        for c in [*own, *(c for c in sharing if c["flag"] in takes)]:
            taken.add(_id(c))
            merges.append(Merge(case=c, into=into))
    out = found.assign(
        **{
            str(Finding.ITEM_ID): pd.Series(items, index=found.index, dtype="string"),
            str(Finding.ITEM_KIND): pd.Series(kinds, index=found.index).astype(
                found[Finding.ITEM_KIND].dtype
            ),
        }
    )
    return out, merges


def _case_order(ids: pd.Series) -> pd.Series:
    """Exception ids in the order they were opened (E2-10 after E2-9)."""
    parts = ids.astype(str).str.extract(r"E(\d+)-(\d+)").astype(float).fillna(0)
    return parts[0] * 1_000_000 + parts[1]


def _id(case: Mapping[Any, Any]) -> str:
    return str(case["exception_id"])


def _key(case: Mapping[Any, Any]) -> Key:
    return (str(case["item_kind"]), str(case["item_id"]), str(case["flag"]))
