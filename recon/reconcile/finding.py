"""What a finding is: one declaration per kind, its facts as values, and how two sightings compare.

Each kind is declared once, beside its rule (:class:`Kind`), and collected in urgency order by
:mod:`recon.reconcile.kinds`. A rule returns where its kind stands (a mask) and the facts of each
finding (a frame of values: amounts in minor units with their currency, states by number, times
in UTC, ids); the words finance reads are rendered from those facts at the edge
(:mod:`recon.report.details`), from the kind's ``detail`` template. A person's case reopens when the
facts named by ``same_when`` change, or when a list named by ``grows`` gains a member: never
because a sentence was reworded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon import frames as fr
from recon.frames import Finding, Findings, ItemKind

Facts = dict[str, Any]
Mask = npt.NDArray[np.bool_]


class Ends(StrEnum):
    """What ends a finding besides a person: the facts going away, or only an answer."""

    FACTS = "facts"  # the run judged its item and did not find it again
    ANSWER = "answer"  # an answer about its item came (a fetch that failed, a wrong answer)
    EXPORT = "export"  # the provider's export was read for its item (the night's match saw it)


class Money(StrEnum):
    """How the money at stake of a kind reads in the morning's first line."""

    PAID_TWICE = "paid twice"  # paid more than once: recover it
    POSSIBLY_TWICE = "possibly paid twice"  # may be paid more than once: check it
    RETURNED = "returned to check"  # money coming back that the provider does not confirm as said
    OTHER = "other"


@dataclass(frozen=True)
class Kind:
    """One kind of finding, declared once.

    ``name`` is the code name (the CSVs' ``exception`` column, a contract); ``items`` what it can be
    about; ``label`` and ``action`` what finance reads beside it; ``detail`` the Jinja template of
    the sentence rendered from its facts (:mod:`recon.report.details` gives its filters). Two
    sightings are the same finding while the facts in ``same_when`` are equal and the lists in
    ``grows`` gain no member. ``carried``: the finding stands on a provider answer and is kept
    while the payout is not fetched. ``provider_advice``: the provider's advice for the payout's
    error code goes with it. ``repay_advice``: False when the money is booked as paid, so the
    ordinary advice for a failed payout (ask why, then pay again) must not go with it. ``alarm``:
    shown first and marked, before every other finding. ``money``: which sum of the morning's first
    line its money at stake counts in. ``from_export``: the facts the provider's export gives it;
    a sighting with one of them set was found by the export and ends as one of ``Ends.EXPORT``
    does, and a night that does not read the export about its item keeps them as last seen.
    """

    name: str
    items: tuple[ItemKind, ...]
    label: str
    action: str
    detail: str
    same_when: tuple[str, ...] = ()
    grows: tuple[str, ...] = ()
    ends: Ends = Ends.FACTS
    carried: bool = False
    provider_advice: bool = False
    repay_advice: bool = True
    alarm: bool = False
    money: Money = Money.OTHER
    facts: tuple[str, ...] = field(default=())  # every fact its rule returns, for the reader
    from_export: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Found:
    """Where one kind stands over a frame: ``mask`` (rows it is found on) and ``facts`` (one column
    per fact, on the frame's index; only the masked rows are read). ``known``: where the facts
    count for comparison tonight (None: the caller's default, for a payout its answer)."""

    mask: Mask
    facts: pd.DataFrame
    known: Mask | None = None


def fact_value(value: Any) -> Any:
    """One value as a fact holds it (see :func:`_plain`)."""
    return _plain(value)


# A rule over the classifier's working frame: the night's clock and rules, and what the rules run
# before it found (a double payment reads the late settlements).
Rule = Callable[[pd.DataFrame, Any, Mapping["Kind", Found]], Found]


def _plain(value: Any) -> Any:
    """A fact as JSON holds it: None for missing, int, str, bool, a list, ISO-8601 UTC time."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return None
    if isinstance(value, pd.Timestamp | datetime):
        return pd.Timestamp(value).tz_convert("UTC").isoformat()
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def fact_rows(facts: pd.DataFrame) -> list[Facts]:
    """Each row of a facts frame as a plain mapping (missing values are None)."""
    names = [str(c) for c in facts.columns]
    return [
        {n: _plain(v) for n, v in zip(names, row, strict=True)}
        for row in facts.itertuples(index=False, name=None)
    ]


def findings(
    kind: Kind,
    item: ItemKind,
    ids: pd.Series,
    found: Found,
    known: Mask | None = None,
) -> pd.DataFrame:
    """The findings of one kind as rows of :class:`recon.frames.Findings` (``known``: the facts
    count for comparison tonight; every row when None)."""
    rows = found.mask
    if not rows.any():  # most kinds find nothing on most nights: half the cost of building none
        return no_findings()
    facts = fact_rows(found.facts[rows])
    frame = pd.DataFrame(
        {
            Finding.ITEM_ID: ids[rows].astype(fr.TEXT).to_numpy(),
            Finding.ITEM_KIND: item.value,
            Finding.FLAG: kind.name,
            Finding.FACTS: pd.Series(facts, dtype=object).to_numpy(),
            Findings.KNOWN: np.ones(int(rows.sum()), dtype=bool)
            if known is None
            else np.asarray(known, dtype=bool)[rows],
        }
    )
    return frame.astype(fr.Findings.dtypes())


def one_per_item(found: pd.DataFrame) -> pd.DataFrame:
    """One finding per item and kind: where two checks found the same kind on the same item (the
    price and the export on a payout's fee), one row whose facts are the first's, each fact it
    lacks (None) taken from the next; its facts count when either's do."""
    key = [Finding.ITEM_KIND, Finding.ITEM_ID, Finding.FLAG]
    twice = found.duplicated(key, keep=False).to_numpy()
    if not twice.any():
        return found
    merged = []
    for _, group in found[twice].groupby(key, sort=False):
        facts: dict[str, Any] = {}
        for each in group[Finding.FACTS]:
            for name, value in (each or {}).items():
                if facts.get(name) is None:
                    facts[name] = value
        row = group.iloc[[0]].copy()
        row[Finding.FACTS] = pd.Series([facts], index=row.index, dtype=object)
        row[Findings.KNOWN] = bool(group[Findings.KNOWN].any())
        merged.append(row)
    return pd.concat([found[~twice], *merged], ignore_index=True).astype(found.dtypes)


def no_findings() -> pd.DataFrame:
    """An empty findings frame."""
    return fr.empty(fr.Findings)


# The fact that marks a finding carried without an answer tonight: its other facts are its case's
# last ones, shown (money at stake, members, the sentence) and never compared.
KEPT = "kept"


def facts_text(facts: Mapping[str, Any] | None) -> str | None:
    """Facts as stored: canonical JSON (sorted keys), None for none."""
    if facts is None:
        return None
    return json.dumps({k: _plain(v) for k, v in facts.items()}, sort_keys=True, ensure_ascii=False)


def read_facts(text: object) -> Facts | None:
    """Stored facts back as a mapping (None: none stored, or words an older version stored)."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def facts_differ(kind: Kind, before: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """Whether tonight's facts make a different finding from ``before``: a fact of ``same_when``
    changed, or a list of ``grows`` gained a member. A fact missing on either side (stored by an
    older version) is not compared."""
    for name in kind.same_when:
        if name in before and name in now and before[name] != now[name]:
            return True
    for name in kind.grows:
        if name in before and name in now and set(now[name] or ()) - set(before[name] or ()):
            return True
    return False


def names(kinds: Iterable[Kind]) -> list[str]:
    """The code names of some kinds."""
    return [k.name for k in kinds]
