"""Two provider accounts' nights as literal report inputs: "brand_a" pays out in EUR and SEK,
"brand_b" in EUR; both hold a payout ``tx-1`` (the same provider id under two accounts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from recon.reconcile.statement import Row, Section, Step
from recon.report.model import ReportInput, RunInfo
from recon.rollforward_lines import frame as lines_frame
from tests.unit.report_fixtures import payouts_frame

AS_OF = datetime(2026, 11, 20, 5, 0, tzinfo=UTC)
HOSTILE = "=cmd|' /C calc'!A0 <script>alert(1)</script>"
LABELS = {"brand_a": "Brand A (DK)", "brand_b": HOSTILE}


def _exceptions(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    """item_id, flag, status, amount_minor, currency, exception_id: a payout's finding each."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    n = len(rows)
    return pd.DataFrame(
        {
            "item_id": pd.Series(cols[0], dtype=object),
            "item_kind": pd.Series(["payout"] * n, dtype=object),
            "flag": pd.Series(cols[1], dtype=object),
            "status": pd.Series(cols[2], dtype=object),
            "detail": pd.Series(["as the test says"] * n, dtype=object),
            "amount_minor": pd.Series(cols[3], dtype="Int64"),
            "currency": pd.Series(cols[4], dtype=object),
            "merchant_reference": pd.Series(["REF"] * n, dtype=object),
            "error_code": pd.Series([None] * n, dtype=object),
            "exception_id": pd.Series(cols[5], dtype=object),
            "owner": pd.Series([None] * n, dtype=object),
            "note": pd.Series([None] * n, dtype=object),
            "until": pd.Series([pd.NaT] * n, dtype="datetime64[us, UTC]"),
            "opened_at": pd.Series([AS_OF - timedelta(days=1)] * n, dtype="datetime64[us, UTC]"),
            "previous_resolution": pd.Series([None] * n, dtype=object),
            "members": pd.Series(cols[0], dtype=object),
            "at_stake_minor": pd.Series(cols[3], dtype="Int64"),
        }
    )


def _returns(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    cols = list(zip(*rows, strict=True))
    return pd.DataFrame(
        {
            "return_id": pd.Series(cols[0], dtype=object),
            "original_id": pd.Series(cols[1], dtype=object),
            "amount_minor": pd.Series(cols[2], dtype="Int64"),
            "currency": pd.Series(cols[3], dtype=object),
            "confirmed": pd.Series([True] * len(rows), dtype=bool),
            "matched": pd.Series([True] * len(rows), dtype=bool),
            "notified": pd.Series([False] * len(rows), dtype=bool),
        }
    )


def _changes(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    cols = list(zip(*rows, strict=True))
    return pd.DataFrame(
        {
            "transaction_id": pd.Series(cols[0], dtype=object),
            "previous_outcome": pd.Series(cols[1], dtype=object),
            "outcome": pd.Series(cols[2], dtype=object),
            "amount_minor": pd.Series(cols[3], dtype="Int64"),
            "currency": pd.Series(cols[4], dtype=object),
        }
    )


def _totals(rows: list[tuple[str, str, str, int, int]]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=["period", "currency", "outcome", "payouts", "amount_minor"])
    return out.astype({"period": "string", "currency": "string", "outcome": "string"})


def _run(account: str, run_id: int, status: str = "complete") -> RunInfo:
    return RunInfo(
        run_id=run_id,
        started_at=AS_OF,
        finished_at=AS_OF + timedelta(seconds=60),
        as_of=AS_OF,
        status=status,  # type: ignore[arg-type]
        duration_seconds=60.0,
        requests=100,
        requests_per_second=1.7,
        previous_run_id=run_id - 2,
        provider_account=account,
    )


def _p(tx: str, amount: int, currency: str, outcome: str, prev: str | None) -> tuple[object, ...]:
    state = {"settled": 6, "pending": 1, "failed": 3}[outcome]
    return (tx, f"REF-{tx}", amount, currency, outcome, state, None, 0, "", "", 1.0, 0.9, prev)


def brand_a(status: str = "complete") -> ReportInput:
    """EUR and SEK: tx-1 settles 100.00 EUR, tx-2 1,000.00 SEK, tx-3 failed EUR."""
    return ReportInput(
        run=_run("brand_a", 12, status),
        payouts=payouts_frame(
            [
                _p("tx-1", 10000, "EUR", "settled", "pending"),
                _p("tx-2", 100000, "SEK", "settled", "pending"),
                _p("tx-3", 2500, "EUR", "failed", "pending"),
            ]
        ),
        exceptions=_exceptions([("tx-1", "amount_mismatch", "new", 10000, "EUR", "E12-1")]),
        returns=_returns([("rt-1", "tx-1", 1000, "EUR")]),
        changes=_changes(
            [
                ("tx-1", "pending", "settled", 10000, "EUR"),
                ("tx-3", "pending", "failed", 2500, "EUR"),
            ]
        ),
        timezone="Europe/Copenhagen",
        totals=_totals(
            [
                ("window", "EUR", "settled", 1, 10000),
                ("window", "SEK", "settled", 1, 100000),
                ("month", "EUR", "settled", 4, 40000),
                ("month", "SEK", "settled", 1, 100000),
            ]
        ),
        rollforward=lines_frame(
            [
                ("EUR", "settled", "previous", 3, 30000),
                ("EUR", "settled", "moved_in", 1, 10000),
                ("EUR", "settled", "now", 4, 40000),
                ("", "findings", "now", 1, None),
            ]
        ),
        statement=(
            Row("EUR", Section.SETTLED, Step.PREVIOUS, 3, 30000),
            Row("EUR", Section.SETTLED, Step.SETTLED_SINCE, 1, 10000),
            Row("EUR", Section.SETTLED, Step.NOW, 4, 40000),
        ),
    )


def brand_b(status: str = "complete") -> ReportInput:
    """EUR only: its own tx-1 settles 50.00 EUR."""
    return ReportInput(
        run=_run("brand_b", 13, status),
        payouts=payouts_frame([_p("tx-1", 5000, "EUR", "settled", "pending")]),
        exceptions=_exceptions([("tx-1", "amount_mismatch", "new", 5000, "EUR", "E13-1")]),
        returns=_returns([("rt-1", "tx-1", 700, "EUR")]),
        changes=_changes([("tx-1", "pending", "settled", 5000, "EUR")]),
        timezone="Europe/Copenhagen",
        totals=_totals(
            [("window", "EUR", "settled", 1, 5000), ("month", "EUR", "settled", 2, 9000)]
        ),
        rollforward=lines_frame(
            [
                ("EUR", "settled", "previous", 1, 4000),
                ("EUR", "settled", "moved_in", 1, 5000),
                ("EUR", "settled", "now", 2, 9000),
                ("", "findings", "now", 1, None),
            ]
        ),
        statement=(
            Row("EUR", Section.SETTLED, Step.PREVIOUS, 1, 4000),
            Row("EUR", Section.SETTLED, Step.SETTLED_SINCE, 1, 5000),
            Row("EUR", Section.SETTLED, Step.NOW, 2, 9000),
        ),
    )
