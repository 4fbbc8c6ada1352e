"""What the payouts cost, as finance reads it: fees.csv's columns and rows, the per-currency fee
totals with the effective rate, and a fee always adding to money out."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from decimal import Decimal

import openpyxl
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from recon.report.csvpack import fees_csv
from recon.report.fees import fee_lines, fee_totals, money_out_minor
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.workbook import render_workbook
from tests.unit.report_fixtures import report_input

COLUMNS = ["provider_account", "transaction_id", "merchant_reference", "currency", "amount",
           "outcome", "fee_id", "fee_charged", "fee_expected", "fee_difference", "fee_entry",
           "created"]  # fmt: skip
ENTRY = "2026-11-01 EUR all accounts"
# transaction id: (fee charged, fee id, agreed fee, entry); the others have none.
FEES = {
    "tx-001": (150, "F-1", 75, ENTRY),  # settled 100.10 EUR, overcharged
    "tx-004": (30, "F-4", 0, ENTRY),  # aborted, yet charged
    "tx-012": (None, None, 414, ENTRY),  # settled 777.00 EUR, no fee yet
    "tx-013": (75, "F-13", None, None),  # settled 15000 JPY, no price for JPY
}


def with_fees() -> ReportInput:
    data = report_input()
    p = data.payouts
    ids = p["transaction_id"]

    def column(i: int, dtype: str) -> pd.Series:
        return pd.Series([FEES.get(t, (None,) * 4)[i] for t in ids], index=p.index, dtype=dtype)

    payouts = p.assign(
        fee_minor=column(0, "Int64"),
        fee_id=column(1, "object"),
        fee_expected_minor=column(2, "Int64"),
        fee_entry=column(3, "object"),
    )
    return replace(data, payouts=payouts)


def rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(fees_csv(with_fees()).decode("utf-8"))))


def test_fees_csv_has_its_columns_in_order_and_a_row_per_payout_with_a_fee() -> None:
    """Exactly the contract's columns; the four payouts with a fee charged or agreed, by id."""
    header = fees_csv(with_fees()).decode("utf-8").splitlines()[0]
    assert header.split(",") == COLUMNS
    assert [r["transaction_id"] for r in rows()] == ["tx-001", "tx-004", "tx-012", "tx-013"]


def test_fees_csv_gives_charged_agreed_and_their_difference_exactly() -> None:
    """An overcharge is above zero; no fee yet counts 0 against the agreed one; no price: empty."""
    by_id = {r["transaction_id"]: r for r in rows()}
    over = by_id["tx-001"]
    assert (over["provider_account"], over["fee_id"], over["fee_entry"]) == (
        "default",
        "F-1",
        ENTRY,
    )
    assert (over["fee_charged"], over["fee_expected"], over["fee_difference"]) == (
        "1.50", "0.75", "0.75")  # fmt: skip
    assert by_id["tx-004"]["fee_difference"] == "0.30"
    assert (by_id["tx-012"]["fee_charged"], by_id["tx-012"]["fee_difference"]) == ("", "-4.14")
    assert (by_id["tx-013"]["fee_charged"], by_id["tx-013"]["fee_expected"]) == ("75", "")


def test_a_report_without_fees_has_an_empty_fees_csv_and_no_fee_table() -> None:
    """A run that knew no fees: the header alone, and report.html shows no Fees section."""
    data = report_input()
    assert fees_csv(data).decode("utf-8").splitlines() == [",".join(COLUMNS)]
    assert "<h2>Fees</h2>" not in render_report(data, row_cap=50, chart_png=None)


def test_the_totals_give_per_currency_fees_and_the_effective_rate_in_basis_points() -> None:
    """EUR: 5 settled (tx-001, tx-002, tx-008, tx-012 and the returned tx-003) for 4,168.11;
    fees 1.80 charged, 4.89 agreed; 1.80 over 4,168.11 is 4.32 bp."""
    totals = {t["currency"]: t for t in fee_totals(with_fees()).to_dict("records")}
    eur = totals["EUR"]
    assert (eur["settled_count"], eur["settled_minor"]) == (5, 416811)
    assert (eur["charged_minor"], eur["expected_minor"], eur["difference_minor"]) == (
        180,
        489,
        -309,
    )
    assert eur["rate_bps"] == "4.32"
    assert totals["JPY"]["rate_bps"] == "50.00"  # 75 over 15,000 JPY
    assert "<h2>Fees</h2>" in render_report(with_fees(), row_cap=50, chart_png=None)
    assert fee_lines(with_fees())[0][0] == "Fees EUR"


def test_the_totals_difference_is_the_rows_a_fee_no_entry_prices_is_no_overcharge() -> None:
    """tx-002 (settled EUR) charged 0.40 with no entry pricing it (the price starts later): it
    counts in the fees charged, and the difference stays the rows' own (fees.csv's sum)."""
    data = with_fees()
    p = data.payouts
    unpriced = (p["transaction_id"] == "tx-002").to_numpy()
    charged = p.assign(fee_minor=p["fee_minor"].mask(unpriced, 40))
    data = replace(data, payouts=charged.assign(fee_id=p["fee_id"].mask(unpriced, "F-2")))
    eur = fee_totals(data).set_index("currency").loc["EUR"]
    assert (eur["charged_minor"], eur["expected_minor"]) == (220, 489)
    in_csv = [r for r in csv.DictReader(io.StringIO(fees_csv(data).decode("utf-8")))
              if r["currency"] == "EUR" and r["fee_difference"]]  # fmt: skip
    in_rows = sum(Decimal(r["fee_difference"]) * 100 for r in in_csv)
    assert eur["difference_minor"] == -309 == in_rows


@given(st.integers(0, 10**12), st.one_of(st.none(), st.integers(0, 10**9)))
def test_a_fee_always_adds_to_money_out(amount: int, fee: int | None) -> None:
    """Never an offset: what a payout costs is its amount and its fee, at least its amount."""
    out = money_out_minor(amount, fee)
    assert out == amount + (fee or 0)
    assert out >= amount


def test_the_settled_payouts_cost_their_amount_and_their_fees() -> None:
    """The totals' money out is the amount settled plus every fee charged."""
    eur = fee_totals(with_fees()).set_index("currency").loc["EUR"]
    assert eur["money_out_minor"] == 416811 + 180


def test_the_workbook_summary_gives_each_currencys_fees_in_a_line() -> None:
    """Summary's lines: one per currency with fees, the agreed price only where one applies."""
    book = openpyxl.load_workbook(io.BytesIO(render_workbook(with_fees())))
    summary = book["Summary"]
    lines = {row[0].value: row[1].value for row in summary.iter_rows(max_col=2) if row[0].value}
    assert lines["Fees EUR"].startswith("5 payouts settled, 4,168.11 EUR; fees charged 1.80 EUR,")
    assert "agreed 4.89 EUR, difference -3.09 EUR" in lines["Fees EUR"]
    assert "effective rate 4.32 bp" in lines["Fees EUR"]
    assert "no agreed price" in lines["Fees JPY"]
