"""The nightly run's reads and writes: which ids to poll, the frames to classify, and the result.

Gather reads here; the decision (:mod:`recon.reconcile.classify`) is pure; apply writes here, in
one transaction, so a run killed while applying leaves the store as it was before.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import Connection, bindparam, func, insert, or_, select, update

from recon.constants import NotificationKind, Outcome, TxType
from recon.reconcile import frames as fr
from recon.reconcile.classify import Classified
from recon.reconcile.frames import ExceptionCol, ObsCol, PayoutCol, ReturnCol
from recon.store._batch import chunks, one_of
from recon.store.runs import RunStatus
from recon.store.tables import (
    notifications,
    observations,
    outcome_history,
    payouts,
    run_exceptions,
    run_returns,
    runs,
)
from recon.store.typed_read import column_parts, typed_frame

_FAILED = (Outcome.FAILED.value, Outcome.ABORTED.value)
APPLIED = RunStatus.APPLIED.value  # a run's outcomes are written but its reports not yet
# Extra input columns the run passes through the classifier to know what changed.
PREV_RETURNED = "prev_returned_minor"
PREV_DUPLICATES = "prev_candidate_duplicates"


# --- selection -------------------------------------------------------------------------------


def return_ids_to_poll(conn: Connection, this_run: pd.DataFrame) -> list[str]:
    """Returned-funds ids to ask about: announced or named by a payout, and not yet confirmed.

    Confirmed means some run saw the id answered as a type-13 transaction. The ids named by a
    payout come from this run's answers (``related_transaction_id`` of a payout observation);
    ``this_run`` holds them (see :func:`load_run_rows`).
    """
    n, o = notifications.c, observations.c
    announced = select(n.transaction_id).where(n.kind == NotificationKind.RETURNED_FUNDS.value)
    confirmed = select(o.transaction_id).where(
        o.status == "ok", o.type == int(TxType.RETURNED_FUNDS)
    )
    payout_rows = this_run[(this_run["status"] == "ok") & (this_run["type"] == int(TxType.PAYOUT))]
    named = set(payout_rows["related_transaction_id"].dropna())
    answered = set(this_run.loc[this_run["status"].isin(["ok", "not_found"]), "transaction_id"])
    candidates = set(conn.scalars(announced.distinct())) | named
    done = set(conn.scalars(confirmed.distinct())) | answered
    return sorted(candidates - done)


# --- gather ----------------------------------------------------------------------------------


def _frame(conn: Connection, query: Any) -> pd.DataFrame:
    result = conn.execute(query)
    # Plain tuples: pandas probing SQLAlchemy's Row objects costs ~30% more (bench/findings.md).
    return pd.DataFrame([tuple(row) for row in result], columns=list(result.keys()))


def load_payouts(conn: Connection, polled: Collection[str]) -> pd.DataFrame:
    """Every payout with its previous reconciled state, as the classifier's ``payouts`` frame."""
    p = payouts.c
    query = select(
        p.transaction_id,
        p.merchant_reference,
        p.amount_minor,
        p.currency,
        p.bank_account_id,
        p.customer_id,
        p.created,
        p.eta,
        p.outcome.label(PayoutCol.PREV_OUTCOME),
        p.state.label(PayoutCol.PREV_STATE),
        p.error_code.label(PayoutCol.PREV_ERROR_CODE),
        p.outcome_since.label(PayoutCol.PREV_OUTCOME_SINCE),
        p.exceptions.label(PayoutCol.PREV_EXCEPTIONS),
        p.ever_failed,
        p.returned_minor.label(PREV_RETURNED),
        p.candidate_duplicates.label(PREV_DUPLICATES),
    ).order_by(p.transaction_id)
    frame = _frame(conn, query)
    frame[PayoutCol.POLLED] = frame[PayoutCol.TRANSACTION_ID].isin(polled)
    return fr.conform(frame, fr.PAYOUTS_IN, name="payouts", optional=fr.PAYOUTS_OPTIONAL)


RUN_ROW_COLUMNS = (
    "id",
    "transaction_id",
    "status",
    "state",
    "type",
    "error_code",
    "amount_minor",
    "amount",
    "currency",
    "related_transaction_id",
    "original_transaction_id",
)


def load_run_rows(conn: Connection, run_id: int) -> pd.DataFrame:
    """This run's stored answers (every row; a resumed run has answers from before the crash)."""
    o = observations.c
    query = select(*(o[c] for c in RUN_ROW_COLUMNS)).where(o.run_id == run_id)
    return _frame(conn, query).astype({"state": "Int64", "type": "Int64", "amount_minor": "Int64"})


def run_rows_from(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Answers kept in memory (a dry run stores nothing) in the shape of :func:`load_run_rows`."""
    frame = pd.DataFrame(list(rows), columns=[c for c in RUN_ROW_COLUMNS if c != "id"])
    frame.insert(0, "id", range(len(frame)))
    return frame.astype({"state": "Int64", "type": "Int64", "amount_minor": "Int64"})


def observations_frame(this_run: pd.DataFrame) -> pd.DataFrame:
    """The classifier's ``observations``: this run's latest answer per id."""
    latest = this_run.sort_values(["transaction_id", "id"]).drop_duplicates(
        "transaction_id", keep="last"
    )
    frame = latest.drop(columns="id").rename(columns={"amount": ObsCol.AMOUNT_TEXT})
    return fr.conform(frame, fr.OBSERVATIONS_IN, name="observations").reset_index(drop=True)


def load_returns(conn: Connection, this_run: pd.DataFrame, run_id: int | None) -> pd.DataFrame:
    """Every returned-funds transaction known from any side, with the best provider evidence.

    Known ids: those announced by a notification, those some run saw answered as type 13, and
    those a payout answer of this run names in ``related_transaction_id``. Evidence: this run's
    answer, else the latest earlier ``ok`` answer.
    """
    n, o = notifications.c, observations.c
    notified = _frame(
        conn,
        select(
            n.transaction_id.label(ReturnCol.RETURN_ID),
            n.original_transaction_id.label(ReturnCol.CLAIMED_ORIGINAL_ID),
            n.amount.label(ReturnCol.CLAIMED_AMOUNT),
        )
        .where(n.kind == NotificationKind.RETURNED_FUNDS.value)
        .order_by(n.id),
    ).assign(**{ReturnCol.NOTIFIED: True})
    seen13 = select(o.transaction_id).where(o.status == "ok", o.type == int(TxType.RETURNED_FUNDS))
    ok_rows = this_run[this_run["status"] == "ok"]
    ids = set(notified[ReturnCol.RETURN_ID]) | set(conn.scalars(seen13.distinct()))
    ids |= set(ok_rows["related_transaction_id"].dropna())
    ids |= set(ok_rows.loc[ok_rows["type"] == int(TxType.RETURNED_FUNDS), "transaction_id"])
    if not ids:
        return fr.empty_returns()
    evidence = _return_evidence(conn, this_run, run_id, sorted(ids))
    known = pd.DataFrame({ReturnCol.RETURN_ID: sorted(ids)})
    frame = known.merge(notified, how="left", on=ReturnCol.RETURN_ID)
    frame[ReturnCol.NOTIFIED] = frame[ReturnCol.NOTIFIED].astype("boolean").fillna(False)
    frame = frame.merge(evidence, how="left", on=ReturnCol.RETURN_ID)
    frame = frame.merge(_confirmed_before(conn, run_id), how="left", on=ReturnCol.RETURN_ID)
    # Drop ids that are neither announced nor ever answered as type 13 (e.g. a payout's
    # related_transaction_id naming another payout).
    is13 = frame[ReturnCol.OBS_TYPE].astype("Int64") == int(TxType.RETURNED_FUNDS)
    keep = frame[ReturnCol.NOTIFIED].astype(bool) | is13.fillna(False).astype(bool)
    return fr.conform(frame[keep], fr.RETURNS_IN, name="returns", optional=fr.RETURNS_OPTIONAL)


def _confirmed_before(conn: Connection, run_id: int | None) -> pd.DataFrame:
    """Per return: the payout the latest earlier run confirmed it for (a confirmation holds)."""
    r = run_returns.c
    latest = select(r.return_id, func.max(r.run_id).label("rid")).where(r.confirmed.is_(True))
    if run_id is not None:
        latest = latest.where(r.run_id < run_id)
    sub = latest.group_by(r.return_id).subquery()
    query = select(
        r.return_id.label(ReturnCol.RETURN_ID),
        r.original_id.label(ReturnCol.CONFIRMED_ORIGINAL_ID),
    ).join_from(run_returns, sub, (sub.c.return_id == r.return_id) & (sub.c.rid == r.run_id))
    return _frame(conn, query)


def _return_evidence(
    conn: Connection, this_run: pd.DataFrame, run_id: int | None, ids: Sequence[str]
) -> pd.DataFrame:
    """Per id: this run's ok/not_found answer, else the latest earlier ok, else this run's error."""
    o = observations.c
    cols = [
        "transaction_id",
        "status",
        "type",
        "related_transaction_id",
        "original_transaction_id",
        "amount_minor",
        "currency",
    ]
    earlier_parts = []
    for part in chunks(list(ids)):
        query = select(o.id, *(o[c] for c in cols)).where(
            one_of(conn, o.transaction_id, part), o.status == "ok"
        )
        if run_id is not None:
            query = query.where(o.run_id != run_id)
        earlier_parts.append(_frame(conn, query))
    earlier = pd.concat(earlier_parts, ignore_index=True).assign(_rank=1)
    current = this_run[this_run["transaction_id"].isin(ids)][["id", *cols]]
    current = current.assign(
        _rank=current["status"].isin(["ok", "not_found"]).map({True: 0, False: 2})
    )
    both = pd.concat([current, earlier], ignore_index=True).astype(
        {"type": "Int64", "amount_minor": "Int64", "_rank": "int64"}
    )
    best = both.sort_values(["transaction_id", "_rank", "id"], ascending=[True, True, False])
    best = best.drop_duplicates("transaction_id")
    return best.rename(
        columns={
            "transaction_id": ReturnCol.RETURN_ID,
            "status": ReturnCol.OBS_STATUS,
            "type": ReturnCol.OBS_TYPE,
            "related_transaction_id": ReturnCol.OBS_RELATED_TRANSACTION_ID,
            "original_transaction_id": ReturnCol.OBS_ORIGINAL_TRANSACTION_ID,
            "amount_minor": ReturnCol.OBS_AMOUNT_MINOR,
            "currency": ReturnCol.OBS_CURRENCY,
        }
    ).drop(columns=["id", "_rank"])


def previous_complete_run(
    conn: Connection, before_run_id: int | None, *, include_applied: bool = False
) -> int | None:
    """The latest run before ``before_run_id`` that finished (``include_applied``: or applied)."""
    r = runs.c
    done = ["complete", "incomplete", *([APPLIED] if include_applied else [])]
    query = select(func.max(r.id)).where(r.status.in_(done))
    if before_run_id is not None:
        query = query.where(r.id < before_run_id)
    value = conn.scalar(query)
    return int(value) if value is not None else None


def load_exceptions(conn: Connection, run_id: int | None, *, open_only: bool) -> pd.DataFrame:
    """A run's exceptions (``open_only``: without those it reported resolved)."""
    if run_id is None:
        return fr.empty(fr.COMPARED)
    e = run_exceptions.c
    query = select(e.item_id, e.item_kind, e.flag, e.detail, e.status).where(e.run_id == run_id)
    if open_only:
        query = query.where(e.status != "resolved")
    return fr.conform(_frame(conn, query), fr.COMPARED, name="stored exceptions")


# --- apply -----------------------------------------------------------------------------------


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (``None`` for missing; timestamps as datetimes).

    Column by column, then zipped: ``DataFrame.to_dict("records")`` boxes every cell separately
    and was most of the time ``apply_outcomes`` spent outside the database.
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


def _differs(a: pd.Series, b: pd.Series) -> pd.Series:
    """Elementwise "not equal", where two missing values are equal."""
    same = (a == b).fillna(False).astype(bool) | (a.isna() & b.isna())
    return ~same


def apply_outcomes(
    conn: Connection,
    *,
    run_id: int,
    as_of: datetime,
    checked_at: datetime,
    classified: Classified,
    compared_exceptions: pd.DataFrame,
) -> int:
    """Write a run's decision: payouts' reconciled columns, their history, exceptions, returns.

    History gets a row whenever a payout's reconciled columns change (not only its outcome), so
    any past run can be reported from the store. Returns the number of payouts changed.
    """
    pay = classified.payouts
    new = pd.DataFrame(
        {
            "outcome": pay[PayoutCol.OUTCOME].astype("string"),
            "state": pay[PayoutCol.STATE].astype("Int64"),
            "error_code": pay[PayoutCol.ERROR_CODE].astype("string"),
            "returned_minor": pay[PayoutCol.RETURNED_MINOR].astype("Int64"),
            "exceptions": pay[PayoutCol.EXCEPTIONS].astype("string").fillna(""),
            "candidate_duplicates": pay[PayoutCol.CANDIDATE_DUPLICATES].astype("string").fillna(""),
        }
    )
    old = pd.DataFrame(
        {
            "outcome": pay[PayoutCol.PREV_OUTCOME].astype("string"),
            "state": pay[PayoutCol.PREV_STATE].astype("Int64"),
            "error_code": pay[PayoutCol.PREV_ERROR_CODE].astype("string"),
            "returned_minor": pay[PREV_RETURNED].astype("Int64"),
            "exceptions": pay[PayoutCol.PREV_EXCEPTIONS].astype("string").fillna(""),
            "candidate_duplicates": pay[PREV_DUPLICATES].astype("string").fillna(""),
        }
    )
    changed = pd.Series(False, index=pay.index)
    for column in new.columns:
        changed |= _differs(new[column], old[column])
    was_failed = pay[PayoutCol.EVER_FAILED].astype(bool)
    ever_failed = was_failed | new["outcome"].isin(_FAILED).fillna(False).astype(bool)
    polled = pay[PayoutCol.POLLED].astype(bool)
    write = changed | polled | (ever_failed != was_failed)

    rows = new.assign(
        b_id=pay[PayoutCol.TRANSACTION_ID],
        outcome_since=pay[PayoutCol.OUTCOME_SINCE],
        ever_failed=ever_failed,
        _polled=polled,
    )[write]
    p = payouts.c
    base = update(payouts).where(p.transaction_id == bindparam("b_id"))
    values: dict[str, Any] = {
        c: bindparam(c) for c in [*new.columns, "outcome_since", "ever_failed"]
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
        transaction_id=pay[PayoutCol.TRANSACTION_ID],
        run_id=run_id,
        previous_outcome=old["outcome"],
        outcome_since=pay[PayoutCol.OUTCOME_SINCE],
        changed_at=as_of,
    )[changed]
    for part in chunks(_records(history)):
        conn.execute(insert(outcome_history), list(part))

    exc = compared_exceptions[
        [
            ExceptionCol.ITEM_ID,
            ExceptionCol.ITEM_KIND,
            ExceptionCol.FLAG,
            ExceptionCol.STATUS,
            ExceptionCol.DETAIL,
        ]
    ].astype("string")
    for part in chunks(_records(exc.assign(run_id=run_id))):
        conn.execute(insert(run_exceptions), list(part))

    ret = classified.returns[[str(c) for c in fr.RETURNS_OUT]]
    for part in chunks(_records(ret.assign(run_id=run_id))):
        conn.execute(insert(run_returns), list(part))
    return int(write.sum())


# --- stored results (reports) ------------------------------------------------------------------

# How each column of a report frame is stored. "category" is for text with a handful of distinct
# values (currencies, outcomes, flags): one small code per row instead of one Python string each.
_PAYOUT_DTYPES: dict[str, str] = {
    "transaction_id": "string",
    "merchant_reference": "string",
    "amount_minor": "Int64",
    "currency": "category",
    "outcome": "category",
    "state": "Int64",
    "error_code": "category",
    "returned_minor": "Int64",
    "exceptions": "category",
    "candidate_duplicates": "category",
    "created": "utc",
    "eta": "utc",
    "bank_account_id": "string",
    "customer_id": "string",
    "prev_outcome": "category",
}
_CHANGE_DTYPES: dict[str, str] = {
    "transaction_id": "string",
    "previous_outcome": "category",
    "outcome": "category",
    "amount_minor": "Int64",
    "currency": "category",
}


def payouts_at_run(conn: Connection, run_id: int) -> pd.DataFrame:
    """Every payout reconciled by run ``run_id`` or earlier, as that run left it.

    The reconciled columns come from the latest history row at or before the run; ``prev_outcome``
    is what the run changed the outcome from (the outcome itself when it did not change).
    """
    h, p = outcome_history.c, payouts.c
    latest = (
        select(h.transaction_id, func.max(h.id).label("hid"))
        .where(h.run_id <= run_id)
        .group_by(h.transaction_id)
        .subquery()
    )
    query = (
        select(
            p.transaction_id,
            p.merchant_reference,
            p.amount_minor,
            p.currency,
            h.outcome,
            h.state,
            h.error_code,
            h.returned_minor,
            h.exceptions,
            h.candidate_duplicates,
            p.created,
            p.eta,
            p.bank_account_id,
            p.customer_id,
            h.run_id.label("_hist_run"),
            h.previous_outcome.label("_hist_prev"),
        )
        .join_from(payouts, latest, latest.c.transaction_id == p.transaction_id)
        .join(outcome_history, h.id == latest.c.hid)
        .order_by(p.transaction_id)
    )

    def with_prev(parts: Iterable[dict[str, Sequence[Any]]]) -> Iterator[dict[str, Sequence[Any]]]:
        for part in parts:
            hist = zip(part["outcome"], part["_hist_prev"], part["_hist_run"], strict=True)
            part["prev_outcome"] = [prev if hrun == run_id else now for now, prev, hrun in hist]
            yield part

    return typed_frame(with_prev(column_parts(conn, query)), _PAYOUT_DTYPES)


def run_returns_frame(conn: Connection, run_id: int) -> pd.DataFrame:
    """The returned-funds transactions as run ``run_id`` judged them."""
    r = run_returns.c
    query = select(*(r[str(c)] for c in fr.RETURNS_OUT)).where(r.run_id == run_id)
    return fr.conform(_frame(conn, query), fr.RETURNS_OUT, name="stored returns")


def outcome_changes(conn: Connection, run_id: int) -> pd.DataFrame:
    """Outcome changes a run recorded (transaction_id, previous_outcome, outcome, amount...)."""
    h, p = outcome_history.c, payouts.c
    query = (
        select(
            h.transaction_id,
            h.previous_outcome,
            h.outcome,
            p.amount_minor,
            p.currency,
        )
        .join_from(outcome_history, payouts, h.transaction_id == p.transaction_id)
        .where(
            h.run_id == run_id,
            or_(h.previous_outcome.is_(None), h.previous_outcome != h.outcome),
        )
        .order_by(h.transaction_id)
    )
    return typed_frame(column_parts(conn, query), _CHANGE_DTYPES)
