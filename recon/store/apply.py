"""Writing a run's decision: payouts' reconciled columns, their history, exceptions, returns.

Writes only, in the caller's transaction (a run killed while applying leaves the store as it was).
What changed and who ever failed are the decision's (:mod:`recon.reconcile.record`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import Connection, bindparam, insert, update

from recon import frames as fr
from recon.decision import CASE_REPORT_COLUMNS, Decision
from recon.frames import ExceptionCol, PayoutCol
from recon.store._batch import chunks
from recon.store.cases import write_case_decision
from recon.store.tables import outcome_history, payouts, run_exceptions, run_returns

_P = PayoutCol
_EXCEPTION_COLUMNS = [
    ExceptionCol.ITEM_ID,
    ExceptionCol.ITEM_KIND,
    ExceptionCol.FLAG,
    ExceptionCol.STATUS,
    ExceptionCol.DETAIL,
    *CASE_REPORT_COLUMNS,
]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (``None`` for missing; timestamps as datetimes).

    Column by column, then zipped: ``DataFrame.to_dict("records")`` boxes every cell separately
    and was most of the time applying spent outside the database.
    """
    keys = [str(c) for c in frame.columns]
    columns = [_plain(frame[c]) for c in frame.columns]
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]


def _plain(column: pd.Series) -> list[Any]:
    """One column as plain Python values: ``None`` for missing, ``datetime`` for timestamps."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return [None if v is pd.NaT else v for v in pd.DatetimeIndex(column).to_pydatetime()]
    values: list[Any] = column.astype(object).where(column.notna(), None).tolist()
    return values


def apply_decision(
    conn: Connection, *, run_id: int, as_of: datetime, checked_at: datetime, decision: Decision
) -> int:
    """Store the decision of run ``run_id``; returns the number of payout rows written."""
    pay = decision.payouts
    new = pd.DataFrame(
        {
            "outcome": pay[_P.OUTCOME].astype("string"),
            "state": pay[_P.STATE].astype("Int64"),
            "error_code": pay[_P.ERROR_CODE].astype("string"),
            "returned_minor": pay[_P.RETURNED_MINOR].astype("Int64"),
            "exceptions": pay[_P.EXCEPTIONS].astype("string").fillna(""),
            "candidate_duplicates": pay[_P.CANDIDATE_DUPLICATES].astype("string").fillna(""),
        }
    )
    write = pay[_P.WRITE].to_numpy()
    rows = new.assign(
        b_id=pay[_P.TRANSACTION_ID],
        outcome_since=pay[_P.OUTCOME_SINCE],
        ever_failed=pay[_P.EVER_FAILED_NOW],
        next_check_at=pay[_P.NEXT_CHECK_AT],
        created=pay[_P.CREATED],  # the record's, or the provider's where the record had none
        eta=pay[_P.ETA],
        _polled=pay[_P.POLLED],
    )[write]
    p = payouts.c
    base = update(payouts).where(p.transaction_id == bindparam("b_id"))
    values: dict[str, Any] = {
        c: bindparam(c)
        for c in [*new.columns, "outcome_since", "ever_failed", "next_check_at", "created", "eta"]
    }
    values["last_run_id"] = run_id
    checked: list[dict[str, Any]] = []
    unchecked: list[dict[str, Any]] = []
    for record in _records(rows):
        (checked if record.pop("_polled") else unchecked).append(record)
    for part in chunks(checked, 5000):
        conn.execute(base.values(**values, last_checked_at=checked_at), list(part))
    for part in chunks(unchecked, 5000):
        conn.execute(base.values(**values), list(part))

    # Assign on the whole frame, then filter: assigning a Series to an EMPTY frame adopts the
    # Series' index, which turned "nothing changed" into one all-null history row per payout.
    history = new.assign(
        transaction_id=pay[_P.TRANSACTION_ID],
        run_id=run_id,
        previous_outcome=pay[_P.PREV_OUTCOME].astype("string"),
        outcome_since=pay[_P.OUTCOME_SINCE],
        changed_at=as_of,
    )[pay[_P.RECORD_CHANGED].to_numpy()]
    for part in chunks(_records(history)):
        conn.execute(insert(outcome_history), list(part))

    exc = decision.exceptions[_EXCEPTION_COLUMNS]
    text = [c for c in _EXCEPTION_COLUMNS if c not in ("until", "opened_at")]
    exc = exc.astype(dict.fromkeys(text, "string"))
    for part in chunks(_records(exc.assign(run_id=run_id))):
        conn.execute(insert(run_exceptions), list(part))
    write_case_decision(conn, decision.cases)

    ret = decision.returns[[str(c) for c in fr.RETURNS_OUT]]
    for part in chunks(_records(ret.assign(run_id=run_id))):
        conn.execute(insert(run_returns), list(part))
    return int(write.sum())
