"""A small but complete ``ReportInput`` (every outcome, flag status and return case) for tests.

Shared with the run's tests: ``report_input()`` is what a nightly run over a dozen payouts in three
currencies would hand to the report. One merchant reference and one error code carry ``<script>`` so
escaping can be checked, and one reference starts with ``=`` for CSV formula injection.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from recon.report.model import ReportInput, RunInfo

AS_OF = datetime(2026, 11, 20, 5, 0, tzinfo=UTC)
SCRIPT = "<script>alert(1)</script>"

# transaction_id, merchant_reference, amount_minor, currency, outcome, state, error_code,
# returned_minor, exceptions, candidate_duplicates, created (days before AS_OF), eta (days), prev
_PAYOUTS: list[tuple[object, ...]] = [
    ("tx-001", "INV-1001", 10010, "EUR", "settled", 6, None, 0, "", "", 9.5, 9.4, "pending"),
    ("tx-002", "INV-1002", 250000, "EUR", "settled", 6, None, 0, "", "", 2.2, 2.1, "settled"),
    ("tx-003", "INV-1003", 1401, "EUR", "returned", 6, None, 1401, "", "", 4.0, 3.9, "settled"),
    ("tx-004", "=HYPERLINK(\"http://x\")", 1101, "EUR", "aborted", 2, "bank_rejected_transaction",
     0, "", "", 1.5, 1.4, "aborted"),
    ("tx-005", "INV-1005", 1201, "EUR", "failed", 3, None, 0, "", "", 0.5, 0.4, None),
    ("tx-006", "INV-1006", 1301, "EUR", "delayed", 4, "transaction_is_delayed_in_bank", 0,
     "stale", "", 5.0, 4.9, "delayed"),
    ("tx-007", "INV-1007", 5000, "EUR", "pending", 1, None, 0, "", "", 0.2, -0.1, None),
    ("tx-008", "INV-1008", 77700, "EUR", "settled", 6, None, 0, "late_settlement",
     "tx-012", 3.5, 3.4, "failed"),
    ("tx-009", SCRIPT, 4200, "EUR", "failed", 3, SCRIPT, 0, "", "", 1.2, 1.1, "pending"),
    ("tx-010", "SE-77", 123450, "SEK", "settled", 6, None, 0, "", "", 1.0, 0.9, "pending"),
    ("tx-011", "SE-78", 99900, "SEK", "unchecked", None, None, 0, "fetch_failed", "", 8.0, 7.9,
     "pending"),
    ("tx-012", "INV-1008-RETRY", 77700, "EUR", "settled", 6, None, 0, "", "", 2.0, 1.9,
     "settled"),
    ("tx-013", "JP-1", 15000, "JPY", "settled", 6, None, 0, "", "", 0.8, 0.7, None),
    ("tx-014", "JP-2", 3000, "JPY", "unknown", None, None, 0, "unknown_transaction", "", 2.5,
     None, "unknown"),
    ("tx-015", "-5 adjustment", 500, "EUR", "pending", 0, None, 0, "amount_mismatch", "", 0.1,
     0.05, None),
]  # fmt: skip

# item_id, item_kind, flag, status, detail, amount_minor, currency, merchant_reference, error_code
_EXCEPTIONS: list[tuple[object, ...]] = [
    ("tx-008", "payout", "late_settlement", "new",
     "failed in run 41, settled now; candidate duplicates: tx-012", 77700, "EUR", "INV-1008",
     None),
    ("tx-006", "payout", "stale", "persisting", "delayed for 5.0 days", 1301, "EUR", "INV-1006",
     "transaction_is_delayed_in_bank"),
    ("tx-011", "payout", "fetch_failed", "new", "timeout after 4 attempts", 99900, "SEK", "SE-78",
     None),
    ("tx-014", "payout", "unknown_transaction", "persisting", "provider: transaction_not_found",
     3000, "JPY", "JP-2", None),
    ("tx-015", "payout", "amount_mismatch", "new", "provider 5.01, ours 5.00", 500, "EUR",
     "-5 adjustment", None),
    ("rt-900", "return", "return_unverified", "new",
     "transaction.get does not confirm a type-13 transaction", 2000, "EUR", SCRIPT, SCRIPT),
    ("rt-901", "return", "return_without_payout", "persisting", "original tx-999 not in store",
     700, "SEK", None, None),
    ("tx-002", "payout", "stale", "cleared", "settled since the previous run", 250000, "EUR",
     "INV-1002", None),
    ("tx-007", "payout", "amount_mismatch", "acknowledged", "local 5000 minor units, provider 4900",
     5000, "EUR", "INV-1007", None),
    ("tx-016", "payout", "stale", "snoozed", "pending for 9.0 days", 8800, "NOK", "NO-16", None),
    ("tx-017", "payout", "not_a_payout", "resolved", "provider type 13, not 1 (payout)", 1200,
     "EUR", "INV-1017", None),
]  # fmt: skip

# exception_id, owner, note, until (days after AS_OF), opened_at (days before AS_OF),
# previous_resolution; one row per _EXCEPTIONS row, in the same order
_CASES: list[tuple[object, ...]] = [
    ("E42-1", None, None, None, 0.0, None),
    ("E40-2", None, None, None, 2.0, None),
    ("E42-2", None, None, None, 0.0, None),
    ("E39-1", None, None, None, 3.0, None),
    ("E42-3", None, None, None, 0.0,
     "resolved by anna on 2026-11-18: provider confirmed 5.00 (facts changed since)"),
    ("E42-4", None, None, None, 0.0, None),
    ("E41-2", None, None, None, 1.0, None),
    ("E38-1", None, None, None, 6.0, None),
    ("E40-1", "maria", "provider is correcting the amount", None, 2.0, None),
    ("E37-1", "anna", "waiting for the bank's answer", 3.0, 9.0, None),
    ("E36-1", "olof", "known test payout of type 13", None, 12.0, None),
]  # fmt: skip

# return_id, original_id, amount_minor, currency, confirmed, matched, notified
_RETURNS: list[tuple[object, ...]] = [
    ("rt-100", "tx-003", 1401, "EUR", True, True, True),
    ("rt-900", "tx-001", 2000, "EUR", False, True, True),
    ("rt-901", "tx-999", 700, "SEK", False, False, True),
]

# transaction_id, previous_outcome, outcome, amount_minor, currency
_CHANGES: list[tuple[object, ...]] = [
    ("tx-001", "pending", "settled", 10010, "EUR"),
    ("tx-008", "failed", "settled", 77700, "EUR"),
    ("tx-009", "pending", "failed", 4200, "EUR"),
    ("tx-010", "pending", "settled", 123450, "SEK"),
    ("tx-005", None, "failed", 1201, "EUR"),
    ("tx-007", None, "pending", 5000, "EUR"),
    ("tx-013", None, "settled", 15000, "JPY"),
    ("tx-015", None, "pending", 500, "EUR"),
]


def _times(days_before: list[object]) -> pd.Series:
    as_of = pd.Timestamp(AS_OF)
    stamps = [
        pd.NaT if d is None else as_of - pd.Timedelta(days=float(str(d))) for d in days_before
    ]
    return pd.Series(pd.to_datetime(stamps, utc=True)).astype("datetime64[ns, UTC]")


def _after(days_after: list[object]) -> pd.Series:
    return pd.Series(
        [pd.NaT if d is None else pd.Timestamp(AS_OF) + pd.Timedelta(days=float(d))  # type: ignore[arg-type]
         for d in days_after],
        dtype="datetime64[ns, UTC]",
    )  # fmt: skip


def payouts_frame(rows: list[tuple[object, ...]] = _PAYOUTS) -> pd.DataFrame:
    """The payouts frame of the contract from literal rows (see ``_PAYOUTS`` for the order)."""
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in range(13)]
    return pd.DataFrame(
        {
            "transaction_id": pd.Series(cols[0], dtype=object),
            "merchant_reference": pd.Series(cols[1], dtype=object),
            "amount_minor": pd.Series(cols[2], dtype="Int64"),
            "currency": pd.Series(cols[3], dtype=object),
            "outcome": pd.Series(cols[4], dtype=object),
            "state": pd.Series(cols[5], dtype="Int64"),
            "error_code": pd.Series(cols[6], dtype=object),
            "returned_minor": pd.Series(cols[7], dtype="Int64"),
            "exceptions": pd.Series(cols[8], dtype=object),
            "candidate_duplicates": pd.Series(cols[9], dtype=object),
            "created": _times(list(cols[10])),
            "eta": _times(list(cols[11])),
            "bank_account_id": pd.Series([f"ba-{i % 4}" for i in range(len(rows))], dtype=object),
            "customer_id": pd.Series([f"cu-{i % 5}" for i in range(len(rows))], dtype=object),
            "prev_outcome": pd.Series(cols[12], dtype=object),
        }
    )


def report_input(
    timezone: str = "Europe/Stockholm", payouts: pd.DataFrame | None = None
) -> ReportInput:
    """The fixture report: run 42 compared with run 41, as of 2026-11-20 05:00 UTC."""
    exc = list(zip(*_EXCEPTIONS, strict=True))
    cases = list(zip(*_CASES, strict=True))
    ret = list(zip(*_RETURNS, strict=True))
    chg = list(zip(*_CHANGES, strict=True))
    return ReportInput(
        run=RunInfo(
            run_id=42,
            started_at=AS_OF,
            finished_at=AS_OF + timedelta(seconds=84.5),
            as_of=AS_OF,
            status="complete",
            duration_seconds=84.5,
            requests=1234,
            requests_per_second=14.6,
            previous_run_id=41,
        ),
        payouts=payouts_frame() if payouts is None else payouts,
        exceptions=pd.DataFrame(
            {
                "item_id": pd.Series(exc[0], dtype=object),
                "item_kind": pd.Series(exc[1], dtype=object),
                "flag": pd.Series(exc[2], dtype=object),
                "status": pd.Series(exc[3], dtype=object),
                "detail": pd.Series(exc[4], dtype=object),
                "amount_minor": pd.Series(exc[5], dtype="Int64"),
                "currency": pd.Series(exc[6], dtype=object),
                "merchant_reference": pd.Series(exc[7], dtype=object),
                "error_code": pd.Series(exc[8], dtype=object),
                "exception_id": pd.Series(cases[0], dtype=object),
                "owner": pd.Series(cases[1], dtype=object),
                "note": pd.Series(cases[2], dtype=object),
                "until": _after(list(cases[3])),
                "opened_at": _times(list(cases[4])),
                "previous_resolution": pd.Series(cases[5], dtype=object),
                # One finding, one problem: each about its item alone, its amount at stake.
                "members": pd.Series(exc[0], dtype=object),
                "at_stake_minor": pd.Series(exc[5], dtype="Int64"),
            }
        ),
        returns=pd.DataFrame(
            {
                "return_id": pd.Series(ret[0], dtype=object),
                "original_id": pd.Series(ret[1], dtype=object),
                "amount_minor": pd.Series(ret[2], dtype="Int64"),
                "currency": pd.Series(ret[3], dtype=object),
                "confirmed": pd.Series(ret[4], dtype=bool),
                "matched": pd.Series(ret[5], dtype=bool),
                "notified": pd.Series(ret[6], dtype=bool),
            }
        ),
        changes=pd.DataFrame(
            {
                "transaction_id": pd.Series(chg[0], dtype=object),
                "previous_outcome": pd.Series(chg[1], dtype=object),
                "outcome": pd.Series(chg[2], dtype=object),
                "amount_minor": pd.Series(chg[3], dtype="Int64"),
                "currency": pd.Series(chg[4], dtype=object),
            }
        ),
        timezone=timezone,
    )


def many_payouts(n: int, seed: int = 7) -> pd.DataFrame:
    """``n`` random payouts in EUR and JPY, for the speed of the CSV writer."""
    rng = np.random.default_rng(seed)
    outcomes = np.array(["settled", "pending", "failed", "returned", "delayed"], dtype=object)
    created = pd.Timestamp(AS_OF) - pd.to_timedelta(rng.integers(0, 30 * 86400, n), unit="s")
    return pd.DataFrame(
        {
            "transaction_id": pd.Series([f"tx-{i}" for i in range(n)], dtype=object),
            "merchant_reference": pd.Series([f"REF-{i}" for i in range(n)], dtype=object),
            "amount_minor": pd.Series(rng.integers(-1000, 10**9, n), dtype="Int64"),
            "currency": pd.Series(np.where(rng.random(n) < 0.2, "JPY", "EUR"), dtype=object),
            "outcome": pd.Series(outcomes[rng.integers(0, len(outcomes), n)], dtype=object),
            "state": pd.Series(rng.integers(0, 8, n), dtype="Int64"),
            "error_code": pd.Series([None] * n, dtype=object),
            "returned_minor": pd.Series(np.zeros(n, dtype=np.int64), dtype="Int64"),
            "exceptions": pd.Series([""] * n, dtype=object),
            "candidate_duplicates": pd.Series([""] * n, dtype=object),
            "created": pd.Series(created).astype("datetime64[ns, UTC]"),
            "eta": pd.Series(created + pd.Timedelta(minutes=5)).astype("datetime64[ns, UTC]"),
            "bank_account_id": pd.Series([None] * n, dtype=object),
            "customer_id": pd.Series([None] * n, dtype=object),
            "prev_outcome": pd.Series([None] * n, dtype=object),
        }
    )


def with_string_dtypes(data: ReportInput) -> ReportInput:
    """The same report with pandas ``string`` text columns (``pd.NA`` for missing), as the store
    builds it."""

    def convert(frame: pd.DataFrame) -> pd.DataFrame:
        text = [c for c in frame.columns if frame[c].dtype == object]
        return frame.astype(dict.fromkeys(text, "string"))

    return ReportInput(
        run=data.run,
        payouts=convert(data.payouts),
        exceptions=convert(data.exceptions),
        returns=convert(data.returns),
        changes=convert(data.changes),
        timezone=data.timezone,
    )


# The columns the store reads as categoricals (recon.store.reconcile, payouts_at_run and
# outcome_changes): a handful of distinct values each.
CATEGORICAL_PAYOUT_COLUMNS = (
    "currency", "outcome", "prev_outcome", "error_code", "exceptions", "candidate_duplicates",
)  # fmt: skip
CATEGORICAL_CHANGE_COLUMNS = ("previous_outcome", "outcome", "currency")


def _categorical(values: pd.Series) -> pd.Series:
    """``values`` as a categorical whose categories are in reverse order, with one unused.

    Neither the order nor an unused category may change a report: the store's categories are
    sorted, but nothing in the report may depend on that.
    """
    present = sorted({str(v) for v in values.dropna()}, reverse=True)
    dtype = pd.CategoricalDtype(pd.Index([*present, "zz-unused"], dtype=object))
    return values.astype(object).astype(dtype)


def with_categoricals(data: ReportInput) -> ReportInput:
    """The same report with the store's categorical columns (NaN for missing)."""
    payouts = data.payouts.assign(
        **{c: _categorical(data.payouts[c]) for c in CATEGORICAL_PAYOUT_COLUMNS}
    )
    changes = data.changes.assign(
        **{c: _categorical(data.changes[c]) for c in CATEGORICAL_CHANGE_COLUMNS}
    )
    return ReportInput(
        run=data.run,
        payouts=payouts,
        exceptions=data.exceptions,
        returns=data.returns,
        changes=changes,
        timezone=data.timezone,
    )
