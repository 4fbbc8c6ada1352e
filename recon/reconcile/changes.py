"""What a run makes of the changes imports made to reconciled records. Pure.

The record is evidence too: an import that changes a compared field (:data:`EVIDENCE_FIELDS`:
amount, currency, bank account, merchant_reference) of a payout a run already reconciled is kept
with both values (:mod:`recon.records`), and then:

- it is a finding on its payout, every night, until a person resolves that
  finding's case: a change imported before the resolution is closed by the next run (the case
  then ends, listed once); one imported after it stands and reopens the case (its facts, the
  detail, changed);
- the payout is asked about (poll reason "record changed") until a run has an answer about it;
  the mismatch checks compare that answer with the new record, as with any record;
- while no answer has come, each run that decides the payout writes its history row, so the
  record each run saw is kept with it (a run's report is rebuilt with its own figures).

A change of another field (customer, country, created, eta) is no finding: the first run that
decides the payout writes its history row with the new record, and closes the change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from recon.constants import CaseState
from recon.frames import ItemKind
from recon.reconcile.finding import Found, Kind, findings, no_findings
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.records import EVIDENCE_FIELDS
from recon.run_frames import Cases, RecordChanges

RECORD_CHANGED = Kind(
    name="record_changed",
    items=(ItemKind.PAYOUT,),
    label="Record changed after it was checked",
    action=(
        "Our record of this payout changed after it was reconciled (both values in the detail): "
        "find out who changed it and why, compare it with the provider's answer, and resolve "
        "it once the booking is right; do not pay again on the new figures alone."
    ),
    detail=(
        "the record changed after it was reconciled: {% for c in changes %}{{ c.field }}: "
        "{{ c.before if c.before is not none else '(empty)' }} -> "
        "{{ c.after if c.after is not none else '(empty)' }} (imported {{ c.imported_at|time }})"
        "{% if not loop.last %}; {% endif %}{% endfor %}"
    ),
    same_when=("changes", *PAYOUT_FACTS),
)


@dataclass(frozen=True)
class ChangeVerdict:
    """``exceptions``: one ``record_changed`` per payout (EXCEPTIONS columns). ``snapshot``: ids
    of payouts whose history row the run writes whatever else changed. ``answered`` and
    ``closed``: change ids the store marks with this run."""

    exceptions: pd.DataFrame
    snapshot: frozenset[str]
    answered: tuple[int, ...]
    closed: tuple[int, ...]


def _resolved_at(cases: pd.DataFrame) -> pd.Series:
    """Per payout, when a person resolved its live ``record_changed`` case."""
    mine = cases[
        (cases[Cases.ITEM_KIND].astype(str) == ItemKind.PAYOUT.value)
        & (cases[Cases.FLAG].astype(str) == RECORD_CHANGED.name)
        & (cases[Cases.STATE].astype(str) == CaseState.RESOLVED.value)
    ]
    at = pd.to_datetime(mine[Cases.STATE_AT], utc=True).astype("datetime64[us, UTC]")
    return pd.Series(at.array, index=pd.Index(mine[Cases.ITEM_ID].astype(str)))


def follow_changes(
    changes: pd.DataFrame,
    decided: frozenset[str],
    answered: frozenset[str],
    cases: pd.DataFrame,
) -> ChangeVerdict:
    """The run's verdict on the live record ``changes`` (``RunInputs.record_changes``), given the
    payouts it ``decided``, those it has an ``answered`` about, and the live ``cases``."""
    if changes.empty:  # no live record change (most nights): nothing to close, answer or keep
        return ChangeVerdict(exceptions=no_findings(), snapshot=frozenset(), answered=(), closed=())
    ids = changes[RecordChanges.TRANSACTION_ID].astype(str)
    on_decided = ids.isin(decided).to_numpy()
    evidence = changes[RecordChanges.FIELD].astype(str).isin(EVIDENCE_FIELDS).to_numpy()
    resolved = pd.Series(_resolved_at(cases).reindex(ids.to_numpy()).array, index=ids.index)
    imported = pd.to_datetime(changes[RecordChanges.IMPORTED_AT], utc=True).astype(
        "datetime64[us, UTC]"
    )
    covered = (resolved.notna() & (imported <= resolved).fillna(False)).to_numpy(dtype=bool)
    closed = (evidence & covered) | (~evidence & on_decided)
    was_answered = (
        changes[RecordChanges.ANSWERED].astype("boolean").fillna(False).to_numpy(dtype=bool)
    )
    answered_now = evidence & ~was_answered & ids.isin(answered).to_numpy()
    snapshot = on_decided & (~evidence | ~was_answered)
    standing = changes[evidence & ~covered & on_decided].sort_values(
        [RecordChanges.TRANSACTION_ID, RecordChanges.ID]
    )
    groups = [
        (str(tid), group)
        for tid, group in standing.groupby(RecordChanges.TRANSACTION_ID, sort=True)
    ]
    changed = pd.DataFrame(
        {
            "changes": [
                [
                    {"field": f, "before": b, "after": a, "imported_at": at}
                    for f, b, a, at in zip(
                        g[RecordChanges.FIELD],
                        g[RecordChanges.BEFORE],
                        g[RecordChanges.AFTER],
                        g[RecordChanges.IMPORTED_AT],
                        strict=True,
                    )
                ]
                for _, g in groups
            ]
        },
        dtype=object,
    )
    exceptions = findings(
        RECORD_CHANGED,
        ItemKind.PAYOUT,
        pd.Series([tid for tid, _ in groups], dtype="string"),
        Found(np.ones(len(groups), dtype=bool), changed),
    )
    return ChangeVerdict(
        exceptions=exceptions,
        snapshot=frozenset(ids[snapshot]),
        answered=tuple(int(i) for i in changes[RecordChanges.ID][answered_now]),
        closed=tuple(int(i) for i in changes[RecordChanges.ID][closed]),
    )
