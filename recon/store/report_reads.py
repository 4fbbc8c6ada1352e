"""A stored run as its reports show it: payouts as the run left them, its returns, its changes.

Reads in parts into typed frames (:mod:`recon.store.typed_read`), so a report over a million
payouts stays well under a gigabyte.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Connection, func, or_, select

from recon import frames as fr
from recon.store.tables import outcome_history, payouts, run_returns
from recon.store.typed_read import column_parts, frame_of, typed_frame

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
    return fr.conform(frame_of(conn, query), fr.RETURNS_OUT, name="stored returns")


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
