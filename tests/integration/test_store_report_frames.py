"""The report's frames read from the store (payouts_at_run, outcome_changes), part by part.

They are read in parts and hold their few-valued text columns as categoricals, to keep a
1,000,000-payout report under 1 GB (BENCHMARKS.md); the reports must not change for it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import Engine, insert

from recon.constants import RunStatus
from recon.counts import RunCounts
from recon.report.build import from_store
from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.text import render_text
from recon.store import typed_read
from recon.store.db import write_transaction
from recon.store.payouts import upsert_payouts
from recon.store.report_reads import outcome_changes, payouts_at_run
from recon.store.runs import finish_run, start_run
from recon.store.tables import outcome_history

T0 = datetime(2026, 11, 18, 5, 0, 0, 250000, tzinfo=UTC)
CATEGORICAL = ("currency", "outcome", "prev_outcome", "error_code", "exceptions",
               "candidate_duplicates")  # fmt: skip

# transaction_id, amount_minor, currency, created, eta
_PAYOUTS = [
    ("tx-1", 10010, "EUR", T0, T0 + timedelta(hours=1)),
    ("tx-2", 2000, "SEK", T0 - timedelta(days=3), None),
    ("Tx-2", 300, "JPY", None, None),
    ("tx-3", 4500, "EUR", T0 - timedelta(days=1), T0),
    ("tx-4", 99, "EUR", T0, T0),
    ("tx-5", 12345, "SEK", T0, T0),
    ("tx-6", 700, "EUR", T0, T0),  # never reconciled: in no report
]
# run (1 or 2), transaction_id, previous_outcome, outcome, state, error_code, returned_minor,
# exceptions, candidate_duplicates
_HISTORY = [
    (1, "tx-1", None, "pending", 1, None, 0, "", ""),
    (1, "tx-2", None, "failed", 3, "bank_rejected_transaction", 0, "", ""),
    (1, "Tx-2", None, "unknown", None, None, None, "unknown_transaction", ""),
    (1, "tx-3", None, "settled", 6, None, 0, "", ""),
    (2, "tx-1", "pending", "settled", 6, None, 0, "late_settlement", "tx-3"),
    (2, "tx-2", "failed", "failed", 3, "other_code", 0, "stale", ""),  # not an outcome change
    (2, "tx-4", None, "delayed", 4, "transaction_is_delayed_in_bank", 0, "stale;fetch_failed", ""),
    (2, "tx-5", None, "returned", 6, None, 12345, "", ""),
]


def _store(engine: Engine) -> tuple[int, int]:
    rows = [
        {"transaction_id": t, "merchant_reference": f"ref {t}", "amount_minor": a, "currency": c,
         "created": created, "eta": eta, "customer_id": "cu-1" if a > 1000 else None}
        for t, a, c, created, eta in _PAYOUTS
    ]  # fmt: skip
    run_ids: list[int] = []
    with write_transaction(engine) as conn:
        upsert_payouts(conn, rows, now=T0)
        for night in (1, 2):
            as_of = T0 + timedelta(days=night)
            run_id = start_run(conn, as_of=as_of, started_at=as_of, host="test", pid=1)
            history = [
                {"transaction_id": t, "run_id": run_id, "previous_outcome": prev, "outcome": out,
                 "state": state, "error_code": code, "returned_minor": returned,
                 "exceptions": flags, "candidate_duplicates": dups, "outcome_since": as_of,
                 "changed_at": as_of}
                for n, t, prev, out, state, code, returned, flags, dups in _HISTORY
                if n == night
            ]  # fmt: skip
            conn.execute(insert(outcome_history), history)
            finish_run(
                conn, run_id, status=RunStatus.COMPLETE, finished_at=as_of, counts=RunCounts()
            )
            run_ids.append(run_id)
    return run_ids[0], run_ids[1]


def _as_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as the store read it before categoricals: pandas ``string`` text columns."""
    cats = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype(dict.fromkeys(cats, "string"))


def test_payouts_at_run_is_each_payout_as_that_run_left_it(engine: Engine) -> None:
    """Reconciled columns from the latest history row at or before the run; prev_outcome too."""
    first, second = _store(engine)
    with engine.connect() as conn:
        before = payouts_at_run(conn, first)
        after = payouts_at_run(conn, second)
    assert list(before["transaction_id"]) == ["Tx-2", "tx-1", "tx-2", "tx-3"]
    assert list(after["transaction_id"]) == ["Tx-2", "tx-1", "tx-2", "tx-3", "tx-4", "tx-5"]
    rows = after.astype(object).where(after.notna(), None).set_index("transaction_id")
    assert list(rows.loc["tx-1", ["outcome", "prev_outcome", "exceptions"]]) == [
        "settled", "pending", "late_settlement",
    ]  # fmt: skip
    assert list(rows.loc["tx-2", ["outcome", "prev_outcome", "error_code"]]) == [
        "failed", "failed", "other_code",
    ]  # fmt: skip
    assert list(rows.loc["tx-3", ["outcome", "prev_outcome"]]) == ["settled", "settled"]
    assert rows.loc["tx-4", "prev_outcome"] is None
    assert rows.loc["Tx-2", "state"] is None
    assert rows.loc["Tx-2", "returned_minor"] is None
    assert rows.loc["tx-5", "returned_minor"] == 12345
    assert rows.loc["tx-1", "created"] == pd.Timestamp(T0)
    assert rows.loc["Tx-2", "created"] is None
    for column in CATEGORICAL:
        assert isinstance(after[column].dtype, pd.CategoricalDtype), column
    assert after["amount_minor"].dtype == "Int64"
    assert after["transaction_id"].dtype == "string"


def test_reading_in_parts_gives_the_same_frames(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parts of two rows (categories unified across parts) equal a read in one part."""
    _, second = _store(engine)
    with engine.connect() as conn:
        whole = payouts_at_run(conn, second)
        changes = outcome_changes(conn, second)
        monkeypatch.setattr(typed_read, "PART_ROWS", 2)
        pd.testing.assert_frame_equal(payouts_at_run(conn, second), whole)
        pd.testing.assert_frame_equal(outcome_changes(conn, second), changes)
    assert changes.astype(object).where(changes.notna(), None).values.tolist() == [
        ["tx-1", "pending", "settled", 10010, "EUR"],
        ["tx-4", None, "delayed", 99, "EUR"],
        ["tx-5", None, "returned", 12345, "SEK"],
    ]


def test_a_run_without_payouts_gives_empty_frames(engine: Engine) -> None:
    """No history at all: empty frames with the report's columns."""
    with write_transaction(engine) as conn:
        run_id = start_run(conn, as_of=T0, started_at=T0, host="test", pid=1)
    with engine.connect() as conn:
        payouts = payouts_at_run(conn, run_id)
        changes = outcome_changes(conn, run_id)
    assert payouts.empty
    assert changes.empty
    assert list(changes.columns) == [
        "transaction_id", "previous_outcome", "outcome", "amount_minor", "currency",
    ]  # fmt: skip
    assert "prev_outcome" in payouts.columns


def test_the_reports_are_those_of_string_columns(engine: Engine) -> None:
    """Every CSV, report.html and the text email equal those of the same frames as strings."""
    _, second = _store(engine)
    data = from_store(engine, timezone="Europe/Stockholm", run_id=second)
    strings = replace(data, payouts=_as_strings(data.payouts), changes=_as_strings(data.changes))
    reports: list[Any] = [
        lambda d: render_csvs(d),
        lambda d: render_report(d, row_cap=200, chart_png=None),
        lambda d: render_text(d),
    ]
    for render in reports:
        assert render(data) == render(strings)
