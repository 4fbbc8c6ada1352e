"""Workbook writers compared: report.xlsx for 100,000 and 1,000,000 payouts (docs/decisions.md).

Each measurement is its own child process (``bench.support.measure``: wall time, CPU, peak RSS):

- ``data``: builds the report input only (the baseline the others include);
- ``xlsxwriter``: recon's writer, :func:`recon.report.workbook.render_workbook` (every sheet;
  XlsxWriter in ``constant_memory`` mode, rows in blocks);
- ``pandas-openpyxl``: the Payouts sheet alone through ``DataFrame.to_excel(engine="openpyxl")``,
  typed as the workbook's (amounts as numbers, local times); no per-row formats, no validation,
  so a lower bound of what that route costs.

Run: ``.venv/bin/python -m bench.workbook [ROWS ...] [METHOD ...]`` (default 100000 1000000, every
method). A child that
exceeds ``MEMORY_LIMIT_MB`` of address space fails with a MemoryError and is reported as such.
"""

from __future__ import annotations

import io
import json
import sys
import time
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from bench.support import PYTHON, Measured, measure
from recon.report.model import ReportInput, RunInfo

MEMORY_LIMIT_MB = 8_000.0
METHODS = ("data", "xlsxwriter", "pandas-openpyxl")
_AS_OF = datetime(2026, 11, 20, 5, 0, tzinfo=UTC)


def report_input(rows: int, seed: int = 7) -> ReportInput:
    """``rows`` payouts in EUR and JPY (3% of them with an exception), as a night would report."""
    rng = np.random.default_rng(seed)
    outcomes = np.array(["settled", "pending", "failed", "returned", "delayed"], dtype=object)
    created = pd.Timestamp(_AS_OF) - pd.to_timedelta(rng.integers(0, 30 * 86400, rows), unit="s")
    ids = pd.Series([f"tx{i:09d}Ab" for i in range(rows)], dtype=object)
    currency = pd.Series(np.where(rng.random(rows) < 0.2, "JPY", "EUR"), dtype=object)
    amount = pd.Series(rng.integers(100, 10**8, rows), dtype="Int64")
    payouts = pd.DataFrame(
        {
            "transaction_id": ids,
            "merchant_reference": pd.Series([f"ref-{i:09d}" for i in range(rows)], dtype=object),
            "amount_minor": amount,
            "currency": currency,
            "outcome": pd.Series(outcomes[rng.integers(0, len(outcomes), rows)], dtype=object),
            "state": pd.Series(rng.integers(0, 8, rows), dtype="Int64"),
            "error_code": pd.Series([None] * rows, dtype=object),
            "returned_minor": pd.Series(np.zeros(rows, dtype=np.int64), dtype="Int64"),
            "exceptions": pd.Series([""] * rows, dtype=object),
            "candidate_duplicates": pd.Series([""] * rows, dtype=object),
            "created": pd.Series(created).astype("datetime64[ns, UTC]"),
            "eta": pd.Series(created + pd.Timedelta(minutes=5)).astype("datetime64[ns, UTC]"),
            "bank_account_id": pd.Series([None] * rows, dtype=object),
            "customer_id": pd.Series([None] * rows, dtype=object),
            "prev_outcome": pd.Series([None] * rows, dtype=object),
        }
    )
    flagged = np.flatnonzero(rng.random(rows) < 0.03)
    n = len(flagged)
    exceptions = pd.DataFrame(
        {
            "exception_id": pd.Series([f"E1-{i + 1}" for i in range(n)], dtype=object),
            "item_id": ids.iloc[flagged].reset_index(drop=True),
            "item_kind": pd.Series(["payout"] * n, dtype=object),
            "flag": pd.Series(["stale"] * n, dtype=object),
            "status": pd.Series(["new"] * n, dtype=object),
            "detail": pd.Series(["pending for 9.0 days"] * n, dtype=object),
            "amount_minor": amount.iloc[flagged].reset_index(drop=True),
            "currency": currency.iloc[flagged].reset_index(drop=True),
            "merchant_reference": pd.Series([None] * n, dtype=object),
            "error_code": pd.Series([None] * n, dtype=object),
            "owner": pd.Series([None] * n, dtype=object),
            "note": pd.Series([None] * n, dtype=object),
            "until": pd.Series([pd.NaT] * n, dtype="datetime64[ns, UTC]"),
            "opened_at": pd.Series([_AS_OF] * n, dtype="datetime64[ns, UTC]"),
            "previous_resolution": pd.Series([None] * n, dtype=object),
        }
    )
    empty = pd.DataFrame(
        {c: pd.Series([], dtype=object) for c in ("return_id", "original_id", "currency")}
    ).assign(
        amount_minor=pd.Series([], dtype="Int64"),
        confirmed=pd.Series([], dtype=bool),
        matched=pd.Series([], dtype=bool),
        notified=pd.Series([], dtype=bool),
    )
    changes = pd.DataFrame(
        {c: pd.Series([], dtype=object) for c in ("transaction_id", "previous_outcome", "outcome")}
    ).assign(amount_minor=pd.Series([], dtype="Int64"), currency=pd.Series([], dtype=object))
    run = RunInfo(
        run_id=1, started_at=_AS_OF, finished_at=_AS_OF, as_of=_AS_OF, status="complete",
        duration_seconds=1.0, requests=0, requests_per_second=None, previous_run_id=None,
    )  # fmt: skip
    return ReportInput(run, payouts, exceptions, empty, changes, "Europe/Stockholm")


def _pandas_openpyxl(data: ReportInput) -> bytes:
    p = data.payouts
    digits = np.where(p["currency"].to_numpy() == "JPY", 0, 2)
    local = {c: p[c].dt.tz_convert(data.timezone).dt.tz_localize(None) for c in ("created", "eta")}
    frame = pd.DataFrame(
        {
            "transaction_id": p["transaction_id"],
            "merchant_reference": p["merchant_reference"],
            "amount": p["amount_minor"].to_numpy(dtype=np.float64) / np.power(10.0, digits),
            "currency": p["currency"],
            "outcome": p["outcome"],
            "state": p["state"],
            "error_code": p["error_code"],
            "returned_amount": p["returned_minor"].to_numpy(dtype=np.float64),
            "exceptions": p["exceptions"],
            "candidate_duplicates": p["candidate_duplicates"],
            "created": local["created"],
            "eta": local["eta"],
            "previous_outcome": p["prev_outcome"],
            "action": pd.Series([""] * len(p), dtype=object),
        }
    )
    out = io.BytesIO()
    with pd.ExcelWriter(out, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Payouts", index=False, freeze_panes=(1, 0))
    return out.getvalue()


def child(method: str, rows: int) -> None:
    """Build the input, write the workbook one way, print one JSON line."""
    started = time.perf_counter()
    data = report_input(rows)
    built = time.perf_counter()
    size = 0
    if method == "xlsxwriter":
        from recon.report.workbook import render_workbook

        size = len(render_workbook(data))
    elif method == "pandas-openpyxl":
        size = len(_pandas_openpyxl(data))
    done = time.perf_counter()
    print(json.dumps({"build_s": built - started, "write_s": done - built, "bytes": size}))


def run(rows: int, method: str) -> tuple[Measured, dict[str, float] | None]:
    """One child process; its measurement and its JSON line (None if it failed)."""
    cmd = [PYTHON, "-m", "bench.workbook", "--child", method, str(rows)]
    result = measure(cmd, timeout=1_800.0, check=False, memory_limit_mb=MEMORY_LIMIT_MB)
    return result, (result.json() if result.returncode == 0 else None)


def main(argv: list[str]) -> None:
    """The table of docs/decisions.md, "Workbook writer"."""
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]))
        return
    sizes = [int(a) for a in argv if a.isdigit()] or [100_000, 1_000_000]
    methods = [a for a in argv if a in METHODS] or list(METHODS)
    print("| payouts | writer | write s | total s | peak MB | file MB |")
    print("|---:|---|---:|---:|---:|---:|")
    for rows in sizes:
        for method in methods:
            result, out = run(rows, method)
            if out is None:
                reason = result.stderr.strip().splitlines()[-1:] or ["?"]
                print(f"| {rows:,} | {method} | failed: {reason[0][:60]} | | "
                      f"{result.peak_mb:,.0f} | |")  # fmt: skip
                continue
            print(
                f"| {rows:,} | {method} | {out['write_s']:.1f} | {result.seconds:.1f} | "
                f"{result.peak_mb:,.0f} | {out['bytes'] / 1e6:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
