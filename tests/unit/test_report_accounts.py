"""A morning's report over two provider accounts, combined from their nights: literal inputs at
the report's entry (:func:`recon.report.accounts.combine`), each renderer's output read back."""

from __future__ import annotations

import csv
import io
import re

import openpyxl
import pytest
from markupsafe import escape

from recon.reconcile.statement import Section, Step
from recon.report.accounts import by_account, combine, only, over_accounts, split
from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.text import render_text, subject
from recon.report.views import totals_table
from recon.report.workbook import render_workbook
from tests.unit.accounts_fixtures import HOSTILE, LABELS, brand_a, brand_b
from tests.unit.report_fixtures import report_input


def both(b_status: str = "complete") -> object:
    return combine([brand_a(), brand_b(b_status)], labels=LABELS)


def rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))


def test_combined_frames_keep_each_row_with_its_account() -> None:
    """Combined frames keep each row with its account."""
    data = combine([brand_a(), brand_b()], labels=LABELS)
    assert data.accounts == ("brand_a", "brand_b")
    assert data.several
    assert list(data.payouts["provider_account"]) == ["brand_a"] * 3 + ["brand_b"]
    assert list(data.exceptions["provider_account"]) == ["brand_a", "brand_b"]
    assert data.label("brand_a") == "Brand A (DK)"
    assert data.run.status == "complete"
    assert data.run.run_id is None
    assert [n.run_id for n in data.nights] == [12, 13]


def test_totals_add_up_per_account_and_currency_and_per_currency_over_accounts() -> None:
    """Totals add up per account and currency and per currency over accounts."""
    data = combine([brand_a(), brand_b()], labels=LABELS)
    window = data.totals[data.totals["period"] == "window"]
    per_account = by_account(window, ["currency"], ["payouts", "amount_minor"])
    assert per_account.to_dict("records") == [
        {"provider_account": "brand_a", "currency": "EUR", "payouts": 1, "amount_minor": 10000},
        {"provider_account": "brand_a", "currency": "SEK", "payouts": 1, "amount_minor": 100000},
        {"provider_account": "brand_b", "currency": "EUR", "payouts": 1, "amount_minor": 5000},
    ]
    per_currency = over_accounts(window, ["currency"], ["payouts", "amount_minor"])
    assert per_currency.to_dict("records") == [
        {"currency": "EUR", "payouts": 2, "amount_minor": 15000},
        {"currency": "SEK", "payouts": 1, "amount_minor": 100000},
    ]
    table = totals_table(data).set_index(["currency", "outcome"])
    assert table.loc[("EUR", "settled"), "window_minor"] == 15000
    assert table.loc[("EUR", "settled"), "month_minor"] == 49000
    assert table.loc[("SEK", "settled"), "month_minor"] == 100000


def test_the_statement_adds_up_per_currency_and_each_account_keeps_its_own() -> None:
    """The statement adds up per currency and each account keeps its own."""
    data = combine([brand_a(), brand_b()], labels=LABELS)
    now = {(r.currency, r.section, r.step): r for r in data.statement}
    assert now[("EUR", Section.SETTLED, Step.NOW)].amount_minor == 49000
    assert now[("EUR", Section.SETTLED, Step.PREVIOUS)].count == 4
    assert data.statements["brand_b"] == brand_b().statement
    grid = render_csvs(data)["rollforward.csv"].decode().splitlines()
    assert grid[0] == "currency,provider_account,outcome,line,count,amount"
    assert "EUR,brand_a,settled,now,4,400.00" in grid
    assert "EUR,brand_b,settled,now,2,90.00" in grid


def test_the_same_transaction_id_under_two_accounts_stays_two_rows() -> None:
    """The same transaction id under two accounts stays two rows."""
    data = combine([brand_a(), brand_b()], labels=LABELS)
    csvs = render_csvs(data)
    tx1 = [r for r in rows(csvs["payouts.csv"]) if r["transaction_id"] == "tx-1"]
    assert [(r["provider_account"], r["amount"]) for r in tx1] == [
        ("brand_a", "100.00"),
        ("brand_b", "50.00"),
    ]
    exc = rows(csvs["exceptions.csv"])
    assert sorted((r["provider_account"], r["amount"]) for r in exc) == [
        ("brand_a", "100.00"),
        ("brand_b", "50.00"),
    ]
    rets = rows(csvs["returns.csv"])
    assert sorted((r["provider_account"], r["amount"]) for r in rets) == [
        ("brand_a", "10.00"),
        ("brand_b", "7.00"),
    ]
    # Each return joins its own account's payout, not the other's tx-1.
    page = render_report(data, row_cap=50, chart_png=None)
    returns = page.split("<h2>Returns</h2>", 1)[1].split("</section>", 1)[0]
    assert returns.count("100.00 EUR") == 1
    assert returns.count("50.00 EUR") == 1


def test_every_csv_has_provider_account_after_its_first_column() -> None:
    """Every csv has provider account after its first column."""
    for data in (report_input(), combine([brand_a(), brand_b()])):
        csvs = render_csvs(data)
        for name in ("payouts.csv", "exceptions.csv", "returns.csv", "rollforward.csv"):
            header = csvs[name].decode().splitlines()[0].split(",")
            assert header[1] == "provider_account", name
    assert rows(render_csvs(report_input())["payouts.csv"])[0]["provider_account"] == "default"


def test_the_html_has_a_filter_and_a_section_per_account_with_labels_escaped() -> None:
    """The html has a filter and a section per account with labels escaped."""
    page = render_report(both(), row_cap=50, chart_png=None)
    nav = page.split('<nav class="accounts"', 1)[1].split("</nav>", 1)[0]
    assert nav.count("<a href=") == 2
    assert 'href="#account-brand_a"' in nav
    assert 'href="#account-brand_b"' in nav
    assert '<section class="account" id="account-brand_a">' in page
    assert '<section class="account" id="account-brand_b">' in page
    assert "<script>" not in page
    assert str(escape(HOSTILE)) in page
    # Every exception row names its account.
    needs = page.split("<h2>Needs action</h2>", 1)[1].split("</section>", 1)[0]
    assert needs.count('<span class="acct">') == 2
    assert '<span class="acct">Brand A (DK)</span>' in needs


def test_one_account_keeps_todays_look() -> None:
    """One account keeps todays look."""
    page = render_report(report_input(), row_cap=50, chart_png=None)
    assert "<nav" not in page
    assert 'class="acct"' not in page
    assert 'id="account-' not in page
    assert "Accounts:" not in render_text(report_input())


def test_an_incomplete_account_is_named_in_the_headline_subject_and_text() -> None:
    """An incomplete account is named in the headline subject and text."""
    data = both("incomplete")
    assert data.run.status == "incomplete"
    assert "[incomplete: " + HOSTILE + "]" in subject(data)
    page = render_report(data, row_cap=50, chart_png=None)
    assert "Not complete: " + str(escape(HOSTILE)) in page
    text = render_text(data)
    assert "Accounts: Brand A (DK) (run 12, complete); " in text
    assert "BY ACCOUNT" in text
    assert "[Brand A (DK)] " in text


def test_the_workbook_labels_each_row_and_neutralises_a_hostile_label() -> None:
    """The workbook labels each row and neutralises a hostile label."""
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(both())))
    header = [c.value for c in book["Payouts"][1]]
    assert header[:3] == ["transaction_id", "provider_account", "account"]
    sheet = book["Exceptions"]
    header = [c.value for c in sheet[1]]
    at = header.index("provider_account")
    assert header[at + 1] == "account"
    labels = {str(sheet.cell(r, at + 2).value) for r in range(2, sheet.max_row + 1)}
    assert labels == {"Brand A (DK)", "'" + HOSTILE}
    single = openpyxl.load_workbook(io.BytesIO(render_workbook(report_input())))
    assert "account" not in [c.value for c in single["Payouts"][1]]
    summary = book["Summary"]  # its lines name the accounts too
    accounts = str(summary.cell(1, 2).value)
    assert ";' " + HOSTILE in accounts  # the CSVs' rule: a quote after the separator
    assert "; " + HOSTILE not in accounts


def test_split_and_only_give_each_account_back() -> None:
    """Split and only give each account back."""
    data = combine([brand_a(), brand_b()], labels=LABELS)
    a, b = split(data)
    assert list(a.payouts["transaction_id"]) == ["tx-1", "tx-2", "tx-3"]
    assert b.statement == brand_b().statement
    alone = only(data, ["brand_b"])
    assert not alone.several
    assert alone.accounts == ("brand_b",)
    assert alone.label("brand_b") == HOSTILE
    with pytest.raises(ValueError, match="--account brand_c: not in this report"):
        only(data, ["brand_c"])


def test_combine_refuses_an_account_twice_and_different_zones() -> None:
    """Combine refuses an account twice and different zones."""
    with pytest.raises(ValueError, match="account brand_a given more than once"):
        combine([brand_a(), brand_a()])
    other = report_input(timezone="UTC")
    with pytest.raises(ValueError, match="differ in timezone"):
        combine([brand_a(), other])


def test_an_account_label_never_reaches_a_csv_cell_unneutralised() -> None:
    """Labels stay out of the CSVs (they carry the account's name); the name is an identifier."""
    for content in render_csvs(both()).values():
        assert HOSTILE.encode() not in content
    assert not re.search(rb"(^|,)=", render_csvs(both())["payouts.csv"])


def test_the_export_keeps_only_the_accounts_asked_for() -> None:
    """``recon export payouts --account``: parts read with their account, filtered as written;
    a part read without one is the default account's."""
    from recon.report.export import _csv_blocks

    parts = [
        combine([brand_a(), brand_b()]).payouts,
        report_input().payouts.drop(columns="provider_account"),
    ]
    text = b"".join(_csv_blocks(parts, "UTC", accounts={"brand_b", "default"})).decode()
    accounts = {r["provider_account"] for r in rows(text.encode())}
    assert accounts == {"brand_b", "default"}
