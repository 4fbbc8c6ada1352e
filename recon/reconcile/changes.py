"""What a run makes of the changes imports made to reconciled records (issue 25 item 5). Pure.

The record is evidence too: an import that changes a compared field (:data:`EVIDENCE_FIELDS`:
amount, currency, bank account, merchant_reference) of a payout a run already reconciled is kept
with both values (:mod:`recon.records`), and then:

- it is the finding ``record_changed`` on its payout, every night, until a person resolves that
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

import pandas as pd

from recon.constants import CaseState, Flag
from recon.frames import ExceptionCol, ItemKind
from recon.records import EVIDENCE_FIELDS


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
        (cases["item_kind"].astype(str) == ItemKind.PAYOUT.value)
        & (cases["flag"].astype(str) == Flag.RECORD_CHANGED.value)
        & (cases["state"].astype(str) == CaseState.RESOLVED.value)
    ]
    at = pd.to_datetime(mine["state_at"], utc=True).astype("datetime64[us, UTC]")
    return pd.Series(at.array, index=pd.Index(mine["item_id"].astype(str)))


def _detail(rows: pd.DataFrame) -> str:
    parts = [
        f"{field}: {before if not pd.isna(before) else '(empty)'} -> "
        f"{after if not pd.isna(after) else '(empty)'} "
        f"(imported {pd.Timestamp(at):%Y-%m-%d %H:%M} UTC)"
        for field, before, after, at in zip(
            rows["field"], rows["before"], rows["after"], rows["imported_at"], strict=True
        )
    ]
    return "the record changed after it was reconciled: " + "; ".join(parts)


def follow_changes(
    changes: pd.DataFrame,
    decided: frozenset[str],
    answered: frozenset[str],
    cases: pd.DataFrame,
) -> ChangeVerdict:
    """The run's verdict on the live record ``changes`` (``RunInputs.record_changes``), given the
    payouts it ``decided``, those it has an ``answered`` about, and the live ``cases``."""
    ids = changes["transaction_id"].astype(str)
    on_decided = ids.isin(decided).to_numpy()
    evidence = changes["field"].astype(str).isin(EVIDENCE_FIELDS).to_numpy()
    resolved = pd.Series(_resolved_at(cases).reindex(ids.to_numpy()).array, index=ids.index)
    imported = pd.to_datetime(changes["imported_at"], utc=True).astype("datetime64[us, UTC]")
    covered = (resolved.notna() & (imported <= resolved).fillna(False)).to_numpy(dtype=bool)
    closed = (evidence & covered) | (~evidence & on_decided)
    was_answered = changes["answered"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    answered_now = evidence & ~was_answered & ids.isin(answered).to_numpy()
    snapshot = on_decided & (~evidence | ~was_answered)
    standing = changes[evidence & ~covered & on_decided].sort_values(["transaction_id", "id"])
    rows = [
        {
            ExceptionCol.ITEM_ID: str(tid),
            ExceptionCol.ITEM_KIND: ItemKind.PAYOUT.value,
            ExceptionCol.FLAG: Flag.RECORD_CHANGED.value,
            ExceptionCol.DETAIL: _detail(group),
        }
        for tid, group in standing.groupby("transaction_id", sort=True)
    ]
    exceptions = pd.DataFrame(
        rows,
        columns=[
            ExceptionCol.ITEM_ID,
            ExceptionCol.ITEM_KIND,
            ExceptionCol.FLAG,
            ExceptionCol.DETAIL,
        ],
    )
    return ChangeVerdict(
        exceptions=exceptions.astype("string"),
        snapshot=frozenset(ids[snapshot]),
        answered=tuple(int(i) for i in changes["id"][answered_now]),
        closed=tuple(int(i) for i in changes["id"][closed]),
    )
