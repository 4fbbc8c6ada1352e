"""Builders of small literal frames for the classification tests (no logic under test here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from recon import frames as fr
from recon.reconcile.classify import Classified, ClassifyParams, classify
from recon.report.details import details

AS_OF = pd.Timestamp("2024-03-10 12:00", tz="UTC")
DAY = pd.Timedelta(days=1)
NA: Any = None

# Output columns and their dtypes, so an expected frame is written as plain lists.
_DTYPES: dict[str, Any] = {
    **fr.PayoutsDecided.dtypes(),
    **fr.ReturnsOut.dtypes(),
    **fr.Compared.dtypes(),
}


def payout(tid: str, **overrides: Any) -> dict[str, Any]:
    """A payout row of the store, polled this run, never reconciled before."""
    row: dict[str, Any] = {
        "transaction_id": tid,
        "merchant_reference": f"m-{tid}",
        "amount_minor": 1000,
        "currency": "EUR",
        "bank_account_id": f"b-{tid}",
        "customer_id": f"c-{tid}",
        "created": AS_OF - DAY,
        "eta": AS_OF + DAY,
        "prev_outcome": NA,
        "prev_state": NA,
        "prev_error_code": NA,
        "prev_outcome_since": NA,
        "prev_exceptions": NA,
        "ever_failed": False,
        "polled": True,
    }
    return row | overrides


def answer(tid: str, state: int = 6, **overrides: Any) -> dict[str, Any]:
    """The provider's ``ok`` answer for a EUR 10.00 payout."""
    row: dict[str, Any] = {
        "transaction_id": tid,
        "status": "ok",
        "state": state,
        "type": 1,
        "error_code": NA,
        "amount_minor": 1000,
        "amount_text": "10.00",
        "currency": "EUR",
        "related_transaction_id": NA,
        "original_transaction_id": NA,
    }
    return row | overrides


def not_found(tid: str) -> dict[str, Any]:
    """The provider does not know the id."""
    return _blank(tid, "not_found")


def fetch_error(tid: str) -> dict[str, Any]:
    """No usable answer after the retries."""
    return _blank(tid, "error")


def refused(tid: str) -> dict[str, Any]:
    """The provider refuses the id to this merchant account (401/403 with a working token)."""
    return _blank(tid, "refused")


def wrong_answer(tid: str, about: str) -> dict[str, Any]:
    """An answer about another transaction than the one asked (``about``)."""
    return _blank(tid, "wrong_id") | {"related_transaction_id": about}


def _blank(tid: str, status: str) -> dict[str, Any]:
    return dict.fromkeys(answer(tid), NA) | {"transaction_id": tid, "status": status}


def returned_funds(rid: str, original: str | None, **overrides: Any) -> dict[str, Any]:
    """The provider's ``ok`` answer for a type-13 transaction linked to ``original``."""
    return answer(rid, 6, type=13, related_transaction_id=original, amount_minor=400) | overrides


def notice(rid: str, claimed: str | None, **overrides: Any) -> dict[str, Any]:
    """A row of the returns frame: a stored notification, no provider evidence yet."""
    row: dict[str, Any] = {
        "return_id": rid,
        "claimed_original_id": claimed,
        "notified": True,
        "claimed_amount": NA,
        "obs_status": NA,
        "obs_type": NA,
        "obs_related_transaction_id": NA,
        "obs_original_transaction_id": NA,
        "obs_amount_minor": NA,
        "obs_currency": NA,
    }
    return row | overrides


def _frame(rows: Iterable[Mapping[str, Any]], empty: pd.DataFrame) -> pd.DataFrame:
    rows = list(rows)
    return pd.DataFrame(rows) if rows else empty


def run(
    payouts: Iterable[Mapping[str, Any]],
    observations: Iterable[Mapping[str, Any]] = (),
    returns: Iterable[Mapping[str, Any]] = (),
    *,
    as_of: pd.Timestamp = AS_OF,
    params: ClassifyParams | None = None,
) -> Classified:
    """Classify literal rows; each finding's facts are also put in words (``detail``), as the
    report does."""
    result = classify(
        _frame(payouts, fr.empty(fr.PayoutsIn)),
        _frame(observations, fr.empty(fr.Observations)),
        _frame(returns, fr.empty(fr.ReturnsIn)),
        as_of=as_of,
        params=params,
    )
    words = result.exceptions.assign(detail=details(result.exceptions))
    return replace(result, exceptions=words)


def expected(**columns: list[Any]) -> pd.DataFrame:
    """A literal expected frame, each column in the dtype the classification produces."""
    return pd.DataFrame(
        {name: pd.Series(values, dtype=_DTYPES[name]) for name, values in columns.items()}
    )


def pick(frame: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``frame`` that ``like`` names, in its order, on a fresh index."""
    return frame[list(like.columns)].reset_index(drop=True)


def flags(result: Classified) -> pd.DataFrame:
    """The exceptions without their detail text: item_id, item_kind, flag."""
    return result.exceptions[["item_id", "item_kind", "flag"]]


def flag_rows(*rows: tuple[str, str, str]) -> pd.DataFrame:
    """Expected (item_id, item_kind, flag) rows."""
    ids, kinds, names = (list(col) for col in zip(*rows, strict=True)) if rows else ([], [], [])
    return expected(item_id=ids, item_kind=kinds, flag=names)


def next_run(result: Classified, **overrides: Any) -> list[dict[str, Any]]:
    """The payouts frame the store would give the next run, from this run's result."""
    out = result.payouts
    rows = out.assign(
        prev_outcome=out["outcome"].astype("string"),
        prev_state=out["state"],
        prev_error_code=out["error_code"],
        prev_outcome_since=out["outcome_since"],
        prev_exceptions=out["exceptions"],
        ever_failed=out["ever_failed"] | out["outcome"].isin(["failed", "aborted"]),
    )[fr.PayoutsIn.names()]
    records = rows.astype(object).where(rows.notna(), None).to_dict("records")
    return [
        {str(k): v for k, v in r.items()} | overrides.get(str(r["transaction_id"]), {})
        for r in records
    ]
