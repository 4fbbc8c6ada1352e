"""Every human output of a demo night reads in words: amounts with their currency,
states by name, no empty values printed as None.

The demo (`recon demo`, what `make demo` runs) makes two nights with every kind of finding it can;
then the report files, the text of the mail, and `recon show`, `exceptions history` and
`exceptions list` on its store are scanned for "minor units", "state <digit>" and "None".
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import openpyxl
import pytest

from recon.report.build import from_store
from recon.report.text import render_text
from recon.store.db import make_engine
from tests.e2e.run_support import recon

_RAW = re.compile(r"minor units|\bstate \d|\bNone\b")
_HUMAN_CSV_COLUMNS = ("detail", "action")


def _raw_words(where: str, text: str) -> list[str]:
    return [f"{where}: {line.strip()[:160]}" for line in text.splitlines() if _RAW.search(line)]


@pytest.mark.timeout(600)
def test_every_human_output_of_a_demo_night_shows_money_and_states_in_words(
    tmp_path: Path,
) -> None:
    """No "minor units", no "state 6", no "None" in the report, CSV detail/action, workbook,
    mail text, show, history or list."""
    env = {"PATH": str(Path(sys.executable).parent), "COLUMNS": "200"}
    done = recon(env, "demo", "--dir", str(tmp_path), "--payouts", "40", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    report = tmp_path / "report"
    found = _raw_words("demo output", done.stdout)
    found += _raw_words("report.html", (report / "report.html").read_text(encoding="utf-8"))
    for name in ("exceptions.csv", "payouts.csv"):
        with (report / name).open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                for column in _HUMAN_CSV_COLUMNS:
                    found += _raw_words(f"{name} {column}", row.get(column) or "")
    book = openpyxl.load_workbook(report / "report.xlsx", read_only=True)
    for sheet in book.worksheets:
        for row in sheet.iter_rows(values_only=True):
            found += _raw_words(
                f"report.xlsx {sheet.title}", " | ".join(map(str, filter(None, row)))
            )
    database_url = f"sqlite:///{tmp_path / 'recon-demo.db'}"
    engine = make_engine(database_url)
    try:
        for account in ("nordlys", "fjord"):  # the demo's two brands
            data = from_store(engine, timezone="UTC", account=account)
            found += _raw_words(f"mail text of {account}", render_text(data))
    finally:
        engine.dispose()
    # The demo's store and its two brands, as the line the demo ends with points at them.
    env["RECON_CONFIG"] = str(tmp_path / "recon.toml")
    env["CREDENTIALS_DIRECTORY"] = str(tmp_path / "credentials")
    with (report / "exceptions.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {"late_settlement", "double_payment"} <= {r["exception"] for r in rows}
    listed = recon(env, "exceptions", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    found += _raw_words("exceptions list", listed.stdout)
    assert "Paid after a failure" in listed.stdout  # the label; the code name is the CSVs'
    assert "late_settlement" not in listed.stdout
    one_per_finding = {r["exception"]: r for r in rows}.values()
    for row in one_per_finding:
        # A balance statement's item (EUR/2026-11-01/2026-11-30) is shown by recon balance show.
        if row["item_kind"] == "balance":
            shown = recon(
                env, "balance", "show", "--account", row["provider_account"], cwd=tmp_path
            )
        else:
            shown = recon(env, "show", "--", row["transaction_id"], cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        found += _raw_words(f"show {row['exception']}", shown.stdout)
        if row["exception_id"]:
            history = recon(env, "exceptions", "history", row["exception_id"], cwd=tmp_path)
            assert history.returncode == 0, history.stderr
            found += _raw_words(f"history {row['exception']}", history.stdout)
    assert found == []
    late = next(r for r in rows if r["exception"] == "late_settlement")
    assert re.search(r"now settled", late["detail"]), late["detail"]
    assert late["action"].startswith("Paid after a failure — ")
    # The reference finance has finds the payout, as `show demo-00023` would.
    by_reference = recon(env, "show", "--", late["merchant_reference"], cwd=tmp_path)
    assert by_reference.returncode == 0, by_reference.stderr
    assert f"Payout {late['transaction_id']}" in by_reference.stdout
