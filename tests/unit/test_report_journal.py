"""The night's journal entries in the report: journal.csv, the Journal section of report.html, the
Journal sheet and the Summary's lines of report.xlsx, the email's lines; none of it without a
journal configured.

The lines are the core's (:func:`recon.reconcile.journal.journal_entries`) from literal money
facts: tx-001 settles in a closed period with a fee (late), tx-010 settles in SEK; the next run
sees tx-001's fee changed, so it reverses the fee and books the new one.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import openpyxl
import pandas as pd

from recon.reconcile.journal import (
    JournalLine,
    JournalParams,
    PayoutMoney,
    Role,
    booked_entries,
    journal_entries,
)
from recon.report.accounts import combine, split
from recon.report.csvpack import EXCEL_EU, render_csvs
from recon.report.html import render_report
from recon.report.journal import journal_checks, journal_frame, journal_totals, no_journal
from recon.report.model import ReportInput
from recon.report.text import render_text
from recon.report.workbook import render_workbook
from tests.unit.accounts_fixtures import brand_a, brand_b
from tests.unit.report_fixtures import AS_OF, report_input

CODES = {Role.PAYOUTS_PAYABLE: "2890", Role.PROVIDER_BALANCE: "1940", Role.FEE_EXPENSE: "6570"}
SETTLED = datetime(2026, 11, 14, 9, tzinfo=UTC)
MONEY = [
    PayoutMoney("tx-001", "=HYPERLINK(1)", "EUR", 10010, "settled", SETTLED, None, 50, None),
    PayoutMoney("tx-010", "SE-77", "SEK", 123450, "settled", AS_OF, None, None, None),
]
HEADER = ("journal_id,line,posting_date,event_date,account,debit,credit,currency,provider_account,"
          "event,transaction_id,merchant_reference,reverses,late,batch")  # fmt: skip


def lines(account: str = "default") -> list[JournalLine]:
    """Two runs' lines of ``account``: the first books, the second reverses and rebooks a fee."""
    params = JournalParams(account, CODES, ZoneInfo("Europe/Stockholm"), AS_OF,
                           locked_through=date(2026, 11, 15))  # fmt: skip
    first = journal_entries(MONEY, [], params)
    changed = [replace(MONEY[0], fee_minor=60), MONEY[1]]
    return first + journal_entries(changed, booked_entries(first), params, next_number=4)


def with_journal(frame: pd.DataFrame | None = None) -> ReportInput:
    return replace(report_input(), journal=journal_frame(lines()) if frame is None else frame)


def rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))


def test_journal_csv_has_the_contract_columns_and_exact_amounts() -> None:
    """One row per line in entry order; amounts with the currency's digits, 0 on the side a line
    does not book; dates ISO; a reversal names its original; a late line says so; no batch yet;
    a merchant reference that looks like a formula is neutralised."""
    content = render_csvs(with_journal())["journal.csv"]
    assert content.decode().splitlines()[0] == HEADER
    got = rows(content)
    assert len(got) == 10
    first = got[0]
    assert (first["line"], first["account"], first["debit"], first["credit"]) == (
        "1", "2890", "100.10", "0.00"
    )  # fmt: skip
    assert (first["posting_date"], first["event_date"], first["late"]) == (
        "2026-11-16", "2026-11-14", "true"
    )  # fmt: skip
    assert first["merchant_reference"].startswith("'=")
    assert first["batch"] == ""
    reversal = [r for r in got if r["reverses"]]
    assert [(r["event"], r["debit"], r["credit"]) for r in reversal] == [
        ("payout_fee", "0.00", "0.50"), ("payout_fee", "0.50", "0.00")
    ]  # fmt: skip
    assert reversal[0]["reverses"] == got[2]["journal_id"]
    assert sum(1 for r in got if r["currency"] == "SEK") == 2


def test_journal_csv_follows_the_configured_dialect() -> None:
    """excel-eu: ``;`` between cells and a decimal comma in the amounts."""
    text = render_csvs(with_journal(), dialect=EXCEL_EU)["journal.csv"].decode("utf-8-sig")
    assert text.splitlines()[0] == HEADER.replace(",", ";")
    assert ";100,10;0,00;EUR;" in text


def test_totals_per_account_currency_and_ledger_account_balance() -> None:
    """EUR: payable 100.10 debit, provider balance 0.50 debit (the reversal) and 101.20 credit,
    fee expense 1.10 debit and 0.50 credit; debits equal credits per currency."""
    data = with_journal()
    totals = journal_totals(data)
    eur = totals[totals["currency"] == "EUR"]
    assert list(zip(eur["account"], eur["debit_minor"], eur["credit_minor"], strict=True)) == [
        ("2890", 10010, 0), ("1940", 50, 10120), ("6570", 110, 50)
    ]  # fmt: skip
    checks = journal_checks(data).set_index("currency")
    assert checks.loc["EUR", "entries"] == 4
    assert checks.loc["EUR", "reversals"] == 1
    assert checks.loc["EUR", "late"] == 3
    assert checks.loc["EUR", "debit_minor"] == checks.loc["EUR", "credit_minor"] == 10170
    assert bool(checks["balanced"].all())


def test_the_html_section_marks_reversals_and_late_entries_and_checks_the_totals() -> None:
    """The Journal section lists the entries with reversal and late badges and the original a
    reversal takes back, then each currency's totals and a balanced check; the footer names
    journal.csv."""
    page = render_report(with_journal(), row_cap=50, chart_png=None)
    section = page[
        page.index("<h2>Journal</h2>") : page.index("</section>", page.index("<h2>Journal"))
    ]
    assert section.count('<span class="badge reversal">reversal</span>') == 2  # the legend's too
    assert section.count('<span class="badge late">late</span>') == 4
    assert "reverses J" in section
    assert "event 2026-11-14: that period is closed" in section
    assert "<strong>EUR total</strong>" in section
    assert "<strong>SEK total</strong>" in section
    assert section.count('<span class="badge yes">balanced</span>') == 2
    assert "debits 101.70 EUR = credits 101.70 EUR" in section
    assert "fees, journal) hold every row" in page
    assert "badge.reversal" in page  # its styles are in


def test_the_journal_section_caps_its_lines() -> None:
    """Past RECON_REPORT_ROW_CAP lines the section says how many more journal.csv holds; the
    totals still count every line."""
    page = render_report(with_journal(), row_cap=3, chart_png=None)
    assert "Showing 3 of 10 rows; 7 more are in journal.csv." in page
    assert "debits 1,234.50 SEK = credits 1,234.50 SEK" in page


def test_an_unbalanced_journal_is_shown_as_not_balancing() -> None:
    """A line whose credit does not match its debit: the total says it does not balance, and
    by how much."""
    frame = journal_frame(lines())
    frame.loc[1, "credit_minor"] = 10000
    data = with_journal(frame)
    page = render_report(data, row_cap=50, chart_png=None)
    assert '<span class="badge no">does not balance</span>' in page
    assert "DO NOT BALANCE, difference 0.10 EUR" in page
    assert "DO NOT BALANCE" in render_text(data)


def test_a_journal_without_entries_tonight_says_so() -> None:
    """Configured, no lines: journal.csv is its header alone, the section and the email say
    there are no entries, the Journal sheet is its header."""
    data = with_journal(no_journal())
    assert render_csvs(data)["journal.csv"].decode() == HEADER + "\n"
    assert "<p>No entries tonight.</p>" in render_report(data, row_cap=50, chart_png=None)
    assert "JOURNAL\nNo entries tonight." in render_text(data)
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(data)))
    assert [c.value for c in book["Journal"][1]] == HEADER.split(",")
    assert book["Journal"].max_row == 1


def test_the_workbook_journal_sheet_has_numbers_and_dates() -> None:
    """Sheet Journal, last: journal.csv's columns; debit and credit numbers with the currency's
    decimals, dates as dates, the line a number; the Summary has a line per currency."""
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(with_journal())))
    assert book.sheetnames[-1] == "Journal"
    sheet = book["Journal"]
    assert [c.value for c in sheet[1]] == HEADER.split(",")
    first = list(sheet[2])
    assert first[1].value == 1
    assert first[2].value == datetime(2026, 11, 16)  # noqa: DTZ001 - Excel's dates have no zone
    assert first[2].number_format == "yyyy-mm-dd"
    assert (first[5].value, first[6].value) == (100.1, 0)
    assert first[5].number_format == "#,##0.00"
    assert first[13].value is True
    summary = {r[0].value: r[1].value for r in book["Summary"].iter_rows(max_row=20)}
    assert "debits 101.70 EUR = credits 101.70 EUR, balanced" in summary["Journal EUR"]
    assert "6570 fee expense: debit 1.10 EUR, credit 0.50 EUR" in summary["Journal EUR"]


def test_the_email_names_the_entries_and_whether_they_balance() -> None:
    """One line per currency in the text email, after the roll-forward."""
    text = render_text(with_journal())
    assert "EUR: 4 entries (1 reversal, 3 late): debits 101.70 EUR = credits 101.70 EUR" in text
    assert "SEK: 1 entry: debits 1,234.50 SEK = credits 1,234.50 SEK, balanced" in text


def test_without_a_journal_the_report_has_none_of_it() -> None:
    """No [journal]: no journal.csv, no section or styles, no sheet or Summary line, no email
    block."""
    data = report_input()
    assert "journal.csv" not in render_csvs(data)
    page = render_report(data, row_cap=50, chart_png=None)
    assert "Journal" not in page
    assert "journal" not in page
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(data)))
    assert "Journal" not in book.sheetnames
    assert not any("Journal" in str(r[0].value) for r in book["Summary"].iter_rows(max_row=20))
    assert "JOURNAL" not in render_text(data)


def test_accounts_combined_keep_their_own_lines_and_totals() -> None:
    """Two accounts' nights: journal.csv holds both accounts' lines, each with its account; the
    totals are per account; each account's part has its own lines back; one night without a
    journal (it failed) leaves the others'."""
    one = replace(brand_a(), journal=journal_frame(lines("brand_a")))
    other = replace(brand_b(), journal=journal_frame(lines("brand_b")[:2]))
    data = combine([one, other], labels={"brand_a": "Brand A (DK)"})
    got = rows(render_csvs(data)["journal.csv"])
    assert [r["provider_account"] for r in got] == ["brand_a"] * 10 + ["brand_b"] * 2
    checks = journal_checks(data)
    assert list(zip(checks["provider_account"], checks["currency"], strict=True)) == [
        ("brand_a", "EUR"), ("brand_a", "SEK"), ("brand_b", "EUR")
    ]  # fmt: skip
    parts = split(data)
    assert [len(p.journal) for p in parts if p.journal is not None] == [10, 2]
    page = render_report(data, row_cap=50, chart_png=None)
    assert '<span class="acct">Brand A (DK)</span> <strong>EUR total</strong>' in page
    assert combine([one, brand_b()]).journal is not None  # a night that failed: no lines
    assert combine([report_input()]).journal is None


def test_two_accounts_journal_sheet_keeps_the_ledger_account_beside_the_label() -> None:
    """Of several accounts, the Journal sheet's ``account`` is still the ledger's code, and each
    row's label stands beside ``provider_account`` as ``account_label``; the other sheets keep
    ``account`` for the label."""
    one = replace(brand_a(), journal=journal_frame(lines("brand_a")))
    other = replace(brand_b(), journal=journal_frame(lines("brand_b")[:2]))
    data = combine([one, other], labels={"brand_a": "Brand A (DK)"})
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(data)))
    header = [c.value for c in book["Journal"][1]]
    assert header.count("account") == 1
    assert header[header.index("provider_account") + 1] == "account_label"
    first = {name: cell.value for name, cell in zip(header, book["Journal"][2], strict=True)}
    assert (first["account"], first["account_label"]) == ("2890", "Brand A (DK)")
    payouts = [c.value for c in book["Payouts"][1]]
    assert payouts[payouts.index("provider_account") + 1] == "account"
