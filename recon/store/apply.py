"""Writing a run's decision: payouts' reconciled columns, their history, exceptions, cases,
returns, the provider's side, the roll-forward's lines.

Writes only, in the caller's transaction (a run killed while applying leaves the store as it was).
What changed and who ever failed are the decision's (:mod:`recon.reconcile.record`). Payouts and
their history go in column by column (:func:`recon.store.bulk.execute_columns`): a run writes
every payout it decided, and SQLAlchemy's per-row parameter handling was most of applying.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import Connection, bindparam, insert, update
from sqlalchemy.sql import ClauseElement

from recon import frames as fr
from recon.constants import DEFAULT_ACCOUNT
from recon.decision import Decision
from recon.frames import Compared, Finding, PayoutsDecided
from recon.reconcile.finding import facts_text
from recon.run_frames import CaseReport
from recon.store._batch import ROWS_PER_STATEMENT, chunks, one_of
from recon.store.bulk import DriverValues, execute_columns, sqlite_texts
from recon.store.cases import write_case_decision
from recon.store.provider_items import write_provider_side
from recon.store.rollforward_reads import write_lines
from recon.store.tables import (
    RECORD_SNAPSHOT_COLUMNS,
    outcome_history,
    payouts,
    record_changes,
    run_exceptions,
    run_returns,
)

_P = PayoutsDecided
_EXCEPTION_COLUMNS = [
    Finding.ITEM_ID,
    Finding.ITEM_KIND,
    Finding.FLAG,
    Compared.STATUS,
    Finding.FACTS,
    Compared.DETAIL,
    *CaseReport,
]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (``None`` for missing; timestamps as datetimes).

    Column by column, then zipped: ``DataFrame.to_dict("records")`` boxes every cell separately
    and was most of the time applying spent outside the database.
    """
    keys = [str(c) for c in frame.columns]
    columns = [_plain(frame[c]) for c in frame.columns]
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]


def _columns(frame: pd.DataFrame, sqlite: bool) -> dict[str, list[Any]]:
    """Each column as a list of plain Python values (as :func:`_records`, without the rows); on
    SQLite, UTC timestamp columns as the text stored there already."""
    return {
        str(c): (
            sqlite_texts(frame[c])
            if sqlite and isinstance(frame[c].dtype, pd.DatetimeTZDtype)
            else _plain(frame[c])
        )
        for c in frame.columns
    }


def _write_columns(
    conn: Connection, statement: ClauseElement, frame: pd.DataFrame, size: int
) -> None:
    """``statement`` once per row of ``frame`` (its columns named as the bind parameters), ``size``
    rows at a time; each column converted once for all of them."""
    columns = _columns(frame, conn.dialect.name == "sqlite")
    for start in range(0, len(frame), size):
        part = {name: _rows(values, start, start + size) for name, values in columns.items()}
        execute_columns(conn, statement, part)


def _rows(values: list[Any], start: int, stop: int) -> list[Any]:
    """Rows ``start`` to ``stop`` of a converted column, still :class:`DriverValues` if it was."""
    part = values[start:stop]
    return DriverValues(part) if isinstance(values, DriverValues) else part


def _plain(column: pd.Series) -> list[Any]:
    """One column as plain Python values: ``None`` for missing, ``datetime`` for timestamps."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return [None if v is pd.NaT else v for v in pd.DatetimeIndex(column).to_pydatetime()]
    values: list[Any] = column.astype(object).where(column.notna(), None).tolist()
    return values


def _mark_changes(conn: Connection, run_id: int, decision: Decision) -> None:
    """Record changes this run had an answer about, and those it closed."""
    c = record_changes.c
    marks = (
        ("answered_run_id", decision.changes_answered),
        ("closed_run_id", decision.changes_closed),
    )
    for column, ids in marks:
        for part in chunks(sorted(ids)):
            conn.execute(update(record_changes).where(c.id.in_(part)).values({column: run_id}))


def apply_decision(
    conn: Connection,
    *,
    run_id: int,
    as_of: datetime,
    checked_at: datetime,
    decision: Decision,
    account: str = DEFAULT_ACCOUNT,
) -> int:
    """Store the decision of run ``run_id``, a night of ``account``; returns the number of payout
    rows written."""
    pay = decision.payouts
    new = pd.DataFrame(
        {
            "outcome": pay[_P.OUTCOME].astype("string"),
            "state": pay[_P.STATE].astype("Int64"),
            "error_code": pay[_P.ERROR_CODE].astype("string"),
            "returned_minor": pay[_P.RETURNED_MINOR].astype("Int64"),
            "exceptions": pay[_P.EXCEPTIONS].astype("string").fillna(""),
            "candidate_duplicates": pay[_P.CANDIDATE_DUPLICATES].astype("string").fillna(""),
            "fee_minor": pay[_P.FEE_MINOR].astype("Int64"),
            "fee_id": pay[_P.FEE_ID].astype("string"),
            "fee_expected_minor": pay[_P.FEE_EXPECTED_MINOR].astype("Int64"),
            "fee_entry": pay[_P.FEE_ENTRY].astype("string"),
        }
    )
    write = pay[_P.WRITE].to_numpy()
    rows = new.assign(
        b_id=pay[_P.TRANSACTION_ID],
        outcome_since=pay[_P.OUTCOME_SINCE],
        ever_failed=pay[_P.EVER_FAILED_NOW],
        settled_since=pay[_P.SETTLED_SINCE_NOW],
        settled_at=pay[_P.SETTLED_AT],
        next_check_at=pay[_P.NEXT_CHECK_AT],
        eta=pay[_P.ETA],  # the record's, or the answer's where the record had none
        _answered=pay[_P.ANSWERED],
    )[write]
    p = payouts.c
    base = update(payouts).where(
        p.provider_account == account, p.transaction_id == bindparam("b_id")
    )
    values: dict[str, Any] = {
        c: bindparam(c)
        for c in [
            *new.columns,
            *("outcome_since", "ever_failed", "settled_since", "settled_at", "next_check_at"),
            "eta",
        ]
    }
    # On SQLite, setting the foreign key last_run_id in the same UPDATE made each row dearer
    # (docs/decisions.md, "A run's bulk writes"): there it is set apart, for 1,000 ids at a time.
    # Elsewhere one UPDATE, not two row versions.
    apart = conn.dialect.name == "sqlite"
    if not apart:
        values["last_run_id"] = run_id
    # Only an answer spends evidence (a callback since the last check): a failed fetch leaves it.
    answered = rows["_answered"].to_numpy(dtype=bool)
    rows = rows.drop(columns="_answered")
    _write_columns(conn, base.values(**values, last_checked_at=checked_at), rows[answered], 5000)
    _write_columns(conn, base.values(**values), rows[~answered], 5000)
    # created changes only where an answer filled in the one the record lacked: written apart,
    # as it is in both party indexes, which every payout's write would otherwise redo.
    filled = pd.DataFrame({"b_id": pay[_P.TRANSACTION_ID], "created": pay[_P.CREATED]})
    filled = filled[pay[_P.CREATED_FILLED].to_numpy(dtype=bool)]
    _write_columns(conn, base.values(created=bindparam("created")), filled, 5000)
    if apart:
        ids = rows["b_id"].tolist()
        for part in chunks(ids):
            mark = update(payouts).where(
                p.provider_account == account, one_of(conn, p.transaction_id, part)
            )
            conn.execute(mark.values(last_run_id=run_id))

    # Assign on the whole frame, then filter: assigning a Series to an EMPTY frame adopts the
    # Series' index, which turned "nothing changed" into one all-null history row per payout.
    # Each history row keeps the record as the run saw it (the provider's created/eta included).
    history = new.assign(
        transaction_id=pay[_P.TRANSACTION_ID],
        run_id=run_id,
        previous_outcome=pay[_P.PREV_OUTCOME].astype("string"),
        outcome_since=pay[_P.OUTCOME_SINCE],
        changed_at=as_of,
        **{c: pay[c] for c in RECORD_SNAPSHOT_COLUMNS},
    )[pay[_P.RECORD_CHANGED].to_numpy()]
    stamped = insert(outcome_history).values(provider_account=account)
    _write_columns(conn, stamped, history, ROWS_PER_STATEMENT)
    _mark_changes(conn, run_id, decision)

    exc = decision.exceptions[_EXCEPTION_COLUMNS]
    text = [c for c in _EXCEPTION_COLUMNS if c not in ("until", "opened_at", Finding.FACTS)]
    stored = pd.Series([facts_text(f) for f in exc[Finding.FACTS]], index=exc.index)
    exc = exc.astype(dict.fromkeys(text, "string")).assign(**{str(Finding.FACTS): stored})
    for part in chunks(_records(exc.assign(run_id=run_id, provider_account=account))):
        conn.execute(insert(run_exceptions), list(part))
    write_case_decision(conn, decision.cases, account=account)

    ret = decision.returns[fr.ReturnsOut.names()]
    for part in chunks(_records(ret.assign(run_id=run_id, provider_account=account))):
        conn.execute(insert(run_returns), list(part))
    if decision.provider is not None:
        write_provider_side(conn, decision.provider, as_of=as_of, account=account)
    if decision.rollforward is not None:
        write_lines(conn, run_id, decision.rollforward.lines, decision.rollforward.mark)
    return int(write.sum())
