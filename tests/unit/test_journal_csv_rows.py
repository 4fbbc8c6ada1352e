"""One way a journal line becomes a CSV row: ``recon journal export --format csv``'s file for a
batch and the report pack's journal.csv for the same lines differ only in ``batch``; and one sum
per currency behind the manifest's totals and the report's journal checks.

The lines are literal: a late settlement with a merchant reference that looks like a formula and
a ledger code that starts with a minus, its fee, a reversal of the fee, and a yen line (no minor
digits) with a reference holding the separator, a quote and a line break.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from recon.reconcile.journal import Event, JournalLine, Role
from recon.reconcile.journal_check import currency_totals
from recon.report.csvpack import EXCEL_EU, STANDARD, CsvDialect, render_csvs
from recon.report.journal import journal_checks, journal_frame
from recon.report.journal_files import CSV_COLUMNS, csv_file, manifest_file
from tests.unit.report_fixtures import report_input

_CREATED = datetime(2026, 11, 21, 2, tzinfo=UTC)
_SETTLED = JournalLine(
    provider_account="default",
    journal_id="J-default-1",
    line=1,
    number=1,
    event=Event.PAYOUT_SETTLED,
    transaction_id="tx-1",
    merchant_reference="=HYPERLINK(1)",
    version=1,
    event_date=date(2026, 11, 14),
    posting_date=date(2026, 11, 16),
    late=True,
    reverses=None,
    role=Role.PAYOUTS_PAYABLE,
    account="-2890",
    debit_minor=10010,
    credit_minor=0,
    currency="EUR",
)
LINES = [
    _SETTLED,
    replace(_SETTLED, line=2, role=Role.PROVIDER_BALANCE, account="1940", debit_minor=0,
            credit_minor=10010),
    replace(_SETTLED, journal_id="J-default-2", number=2, event=Event.PAYOUT_FEE, late=False,
            role=Role.FEE_EXPENSE, account="6570", debit_minor=50, merchant_reference=None),
    replace(_SETTLED, journal_id="J-default-2", number=2, line=2, event=Event.PAYOUT_FEE,
            late=False, role=Role.PROVIDER_BALANCE, account="1940", credit_minor=50,
            debit_minor=0, merchant_reference=None),
    replace(_SETTLED, journal_id="J-default-3", number=3, event=Event.PAYOUT_FEE, late=False,
            reverses="J-default-2", role=Role.PROVIDER_BALANCE, account="1940", debit_minor=50),
    replace(_SETTLED, journal_id="J-default-3", number=3, line=2, event=Event.PAYOUT_FEE,
            late=False, reverses="J-default-2", role=Role.FEE_EXPENSE, account="6570",
            debit_minor=0, credit_minor=50),
    replace(_SETTLED, journal_id="J-default-4", number=4, transaction_id="tx-9",
            merchant_reference='a,b;"c"\nd', currency="JPY", debit_minor=1500, late=False),
]  # fmt: skip


def _rows(content: bytes, dialect: CsvDialect) -> list[dict[str, str]]:
    text = content.decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=dialect.separator))


@pytest.mark.parametrize("dialect", [STANDARD, EXCEL_EU], ids=lambda d: d.name)
def test_the_export_csv_and_the_pack_journal_csv_differ_only_in_the_batch(
    dialect: CsvDialect,
) -> None:
    """For the same lines in either dialect: the same header, the same BOM and line ends, and
    row by row the same cells (dates, exact amounts, late, neutralised text) but ``batch``, which
    the export fills in and the run's own pack leaves empty."""
    exported = csv_file(7, LINES, dialect)
    data = replace(report_input(), journal=journal_frame(LINES))
    packed = render_csvs(data, dialect=dialect)["journal.csv"]
    assert exported.startswith(b"\xef\xbb\xbf") == packed.startswith(b"\xef\xbb\xbf") == dialect.bom
    assert exported.count(b"\r\n") == packed.count(b"\r\n")
    left, right = _rows(exported, dialect), _rows(packed, dialect)
    assert list(left[0]) == list(right[0]) == CSV_COLUMNS
    assert len(left) == len(right) == len(LINES)
    for mine, theirs in zip(left, right, strict=True):
        assert (mine.pop("batch"), theirs.pop("batch")) == ("7", "")
        assert mine == theirs
    assert left[0]["merchant_reference"].startswith("'=")
    assert [row["late"] for row in left[:3]] == ["true", "true", "false"]
    assert (left[6]["debit"], left[6]["merchant_reference"]) == ("1500", 'a,b;"c"\nd')
    assert exported.replace(b"7", b"") == packed.replace(b"7", b"")


def test_the_manifest_and_the_report_add_up_the_same_totals_per_currency() -> None:
    """One sum per currency: the manifest's totals and the report's journal checks give the same
    lines, debits and credits; entries, reversals and late entries are counted once each."""
    document = json.loads(
        manifest_file(
            batch=7,
            fmt="csv",
            provider_account=None,
            created_at=_CREATED,
            lines=LINES,
            files=[],
            options={},
        )
    )
    checks = journal_checks(replace(report_input(), journal=journal_frame(LINES)))
    assert [(t["currency"], t["lines"], t["debit"], t["credit"]) for t in document["totals"]] == [
        ("EUR", 6, "101.10", "101.10"), ("JPY", 1, "1500", "0")
    ]  # fmt: skip
    eur_check = checks.to_dict("records")[0]
    counts = ("currency", "entries", "reversals", "late", "lines", "debit_minor", "credit_minor")
    assert [eur_check[c] for c in counts] == ["EUR", 3, 1, 1, 6, 10110, 10110]
    assert checks["balanced"].tolist() == [True, False]
    eur = currency_totals(LINES)["EUR"]
    assert (eur.entries, eur.balanced) == (3, True)
