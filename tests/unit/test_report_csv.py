"""The CSV pack: the column contract, exact amounts, formula neutralisation, speed."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.money import format_minor
from recon.report.csvpack import (
    exceptions_csv,
    payouts_csv,
    render_csvs,
    returns_csv,
    summary_csv,
)
from recon.report.fmt import amounts_text, text_array
from recon.report.views import headline
from recon.textsafe import neutralise
from tests.unit.report_fixtures import (
    SCRIPT,
    many_payouts,
    payouts_frame,
    report_input,
    with_string_dtypes,
)

CONTRACT = {
    "fees.csv": [
        "provider_account", "transaction_id", "merchant_reference", "currency", "amount",
        "outcome", "fee_id", "fee_charged", "fee_expected", "fee_difference", "fee_entry",
        "created",
    ],
    "rollforward.csv": ["currency", "provider_account", "outcome", "line", "count", "amount"],
    "payouts.csv": [
        "transaction_id", "provider_account", "merchant_reference", "amount", "currency",
        "outcome", "state", "error_code", "returned_amount", "exceptions",
    ],
    "summary.csv": ["currency", "outcome", "count", "amount", "returned_amount", "net"],
    "exceptions.csv": [
        "exception_id", "provider_account", "transaction_id", "exception", "status", "amount",
        "currency", "merchant_reference", "error_code", "action",
    ],
    "returns.csv": [
        "return_transaction_id", "provider_account", "original_transaction_id", "amount",
        "currency", "matched", "confirmed",
    ],
}  # fmt: skip


def rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))


def by_id(content: bytes, key: str = "transaction_id") -> dict[str, dict[str, str]]:
    return {r[key]: r for r in rows(content)}


def test_every_csv_starts_with_the_contract_columns() -> None:
    """Each file's header begins with the columns finance builds spreadsheets on."""
    for name, content in render_csvs(report_input()).items():
        header = next(csv.reader(io.StringIO(content.decode("utf-8"))))
        assert header[: len(CONTRACT[name])] == CONTRACT[name], name


def test_amounts_keep_the_currency_digits_exactly() -> None:
    """10010 EUR minor units is written 100.10, JPY has no decimals, SEK keeps two."""
    payouts = by_id(payouts_csv(report_input()))
    assert payouts["tx-001"]["amount"] == "100.10"
    assert payouts["tx-013"]["amount"] == "15000"
    assert payouts["tx-010"]["amount"] == "1234.50"
    assert payouts["tx-003"]["returned_amount"] == "14.01"
    assert payouts["tx-013"]["returned_amount"] == "0"


def test_summary_has_one_row_per_currency_and_outcome_with_exact_totals() -> None:
    """summary.csv sums minor units per currency and outcome present, nothing else."""
    summary = {(r["currency"], r["outcome"]): r for r in rows(summary_csv(report_input()))}
    assert summary[("EUR", "settled")] == {
        "currency": "EUR",
        "outcome": "settled",
        "count": "4",
        "amount": "4154.10",
        "returned_amount": "0.00",
        "net": "4154.10",
    }
    assert summary[("EUR", "returned")]["returned_amount"] == "14.01"
    assert summary[("EUR", "returned")]["net"] == "0.00"
    assert summary[("EUR", "failed")]["returned_amount"] == ""  # no money reached anyone
    assert summary[("JPY", "unknown")]["amount"] == "3000"
    assert ("SEK", "failed") not in summary
    assert len(summary) == 10


def test_returns_on_unsettled_payouts_count_in_no_returned_total_or_net() -> None:
    """A return confirmed on a failed payout is an exception, not money back: the summary and
    the headline count returns on settled payouts only, so net never goes below zero for it."""
    data = report_input()
    failed = data.payouts["transaction_id"] == "tx-005"
    data.payouts.loc[failed, "returned_minor"] = 1201
    summary = {(r["currency"], r["outcome"]): r for r in rows(summary_csv(data))}
    assert (summary[("EUR", "failed")]["returned_amount"], summary[("EUR", "failed")]["net"]) == (
        "",
        "",
    )
    eur = headline(data.payouts).set_index("currency").loc["EUR"]
    assert (eur["returned_minor"], eur["net_minor"]) == (1401, eur["settled_minor"] - 1401)


def test_a_text_cell_that_looks_like_a_formula_is_neutralised() -> None:
    """Cells starting with = or - get a leading quote; the rest of the text is kept."""
    payouts = by_id(payouts_csv(report_input()))
    assert payouts["tx-004"]["merchant_reference"] == '\'=HYPERLINK("http://x")'
    assert payouts["tx-015"]["merchant_reference"] == "'-5 adjustment"
    assert payouts["tx-009"]["merchant_reference"] == SCRIPT


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_start_character_is_neutralised(start: str) -> None:
    """All six characters OWASP lists as formula starts are prefixed."""
    cells = neutralise(text_array(pd.Series([f"{start}1+1", "safe", None], dtype=object)))
    assert cells.tolist() == [f"'{start}1+1", "safe", ""]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("x;=cmd|' /C calc'!A0;y", "x;'=cmd|' /C calc'!A0;y"),
        ("a,+1+1", "a,'+1+1"),
        ("a\t@SUM(1)", "a\t'@SUM(1)"),
        ("line\n-2+3+cmd|' /C calc'!A0", "line\n'-2+3+cmd|' /C calc'!A0"),
        ('x; "=1+1"', 'x;\' "=1+1"'),
        (' "=1+1"', '\' "=1+1"'),
        ("stale;amount_mismatch", "stale;amount_mismatch"),
        ("a-b, c=d", "a-b, c=d"),
    ],
)
def test_a_formula_after_any_list_separator_is_neutralised(text: str, written: str) -> None:
    """A spreadsheet splitting at , ; tab or a line break gets a cell starting with ' there."""
    assert neutralise(text_array(pd.Series([text], dtype=object))).tolist() == [written]


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("-8f3a2c", "-8f3a2c"),
        ("-12345", "-12345"),
        ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"),
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("-a;=1", "'-a;'=1"),
    ],
)
def test_an_id_of_a_minus_and_letters_or_digits_is_written_bare(cell: str, written: str) -> None:
    """In id columns "-8f3a2c" stays as it is (it computes nothing); more is neutralised."""
    frame = payouts_frame(
        [(cell, "REF", 500, "EUR", "settled", 6, None, 0, "", "", 1.0, 1.0, None)]
    )
    (row,) = rows(payouts_csv(report_input(payouts=frame)))
    assert row["transaction_id"] == written
    assert neutralise(text_array(pd.Series([cell], dtype=object))).tolist()[0].startswith("'")


def test_a_findings_members_are_ids_written_bare_as_its_transaction_id_is() -> None:
    """exceptions.csv's members (";"-joined payout ids) keep an id starting with "-" as it is,
    as the transaction_id column does; a member that is more than an id is neutralised."""

    def members_written(members: str) -> str:
        data = report_input()
        first = data.exceptions.index[0]
        data.exceptions.loc[first, ["item_id", "members"]] = ["-8f3a2c", members]
        (row,) = [r for r in rows(exceptions_csv(data)) if r["transaction_id"] == "-8f3a2c"]
        return row["members"]

    assert members_written("-8f3a2c;tx-2") == "-8f3a2c;tx-2"
    assert members_written("-1+cmd|' /C calc'!A0") == "'-1+cmd|' /C calc'!A0"


def test_negative_amounts_stay_numbers() -> None:
    """An amount column is numeric: -5.00 is written as -5.00, not '-5.00."""
    frame = payouts_frame(
        [("tx-n", "REF", -500, "EUR", "settled", 6, None, 0, "", "", 1.0, 1.0, None)]
    )
    data = report_input(payouts=frame)
    (row,) = rows(payouts_csv(data))
    assert row["amount"] == "-5.00"
    assert row["state"] == "6"


def test_exceptions_csv_lists_open_ones_first_with_catalogue_actions() -> None:
    """What needs action comes first (by urgency), then the owned, the resolved, the cleared; a
    stale payout delayed in bank quotes the provider's advice."""
    exc = rows(exceptions_csv(report_input()))
    groups = {"new": 0, "persisting": 0, "acknowledged": 1, "snoozed": 1, "resolved": 2}
    statuses = [r["status"] for r in exc]
    assert statuses == sorted(statuses, key=lambda s: groups.get(s, 3))
    assert {r["status"] for r in exc[:5]} == {"new", "persisting"}
    assert "cleared" in statuses
    stale = next(r for r in exc if r["exception"] == "stale" and r["status"] != "cleared")
    assert stale["error_code"] == "transaction_is_delayed_in_bank"
    assert "Wait for settlement" in stale["action"]
    assert all(r["action"] for r in exc)


def test_failed_payouts_carry_the_error_catalogue_action() -> None:
    """payouts.csv's action column quotes the catalogue for a failed payout with a code."""
    payouts = by_id(payouts_csv(report_input()))
    assert payouts["tx-004"]["action"].startswith("Check the request")
    assert payouts["tx-001"]["action"] == ""


def test_returns_csv_says_whether_each_return_is_matched_and_confirmed() -> None:
    """Booleans are true/false, and a return without payout keeps its original id."""
    returns = by_id(returns_csv(report_input()), "return_transaction_id")
    assert returns["rt-100"]["confirmed"] == "true"
    assert returns["rt-900"]["confirmed"] == "false"
    assert returns["rt-901"]["matched"] == "false"
    assert returns["rt-901"]["original_transaction_id"] == "tx-999"


def test_times_are_written_in_the_report_time_zone() -> None:
    """created is ISO 8601 local time with its offset (Stockholm is UTC+1 in November)."""
    payouts = by_id(payouts_csv(report_input("Europe/Stockholm")))
    assert payouts["tx-001"]["created"] == "2026-11-10T18:00:00+01:00"
    assert payouts["tx-014"]["eta"] == ""
    utc = by_id(payouts_csv(report_input("UTC")))
    assert utc["tx-001"]["created"] == "2026-11-10T17:00:00+00:00"


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=-(10**15), max_value=10**15),
            st.sampled_from(["EUR", "JPY", "KWD", "CLF", "SEK"]),
        ),
        max_size=30,
    )
)
def test_vectorised_amounts_equal_the_exact_decimal_formatting(
    values: list[tuple[int, str]],
) -> None:
    """amounts_text agrees with money.format_minor for any amount and currency."""
    minor = pd.Series([v for v, _ in values], dtype="Int64")
    currency = pd.Series([c for _, c in values], dtype=object)
    assert amounts_text(minor, currency).tolist() == [format_minor(v, c) for v, c in values]


def test_a_large_pack_has_one_line_per_payout() -> None:
    """payouts.csv for 250,000 rows has every row (its speed is measured by `make bench`)."""
    data = report_input(payouts=many_payouts(250_000))
    content = payouts_csv(data)
    assert content.count(b"\n") == 250_001
    assert content.startswith(b"transaction_id,")


def test_a_cell_with_a_comma_or_quote_is_quoted() -> None:
    """RFC 4180: the exceptions detail with a comma survives a round trip through a CSV reader."""
    exc = rows(exceptions_csv(report_input()))
    late = next(r for r in exc if r["exception"] == "late_settlement")
    assert late["detail"] == "failed in run 41, settled now; candidate duplicates: tx-012"
    payouts = by_id(payouts_csv(report_input()))
    assert payouts["tx-004"]["merchant_reference"].endswith('("http://x")')


def test_string_dtype_columns_give_the_same_csvs() -> None:
    """Frames with pandas ``string`` columns and ``pd.NA`` give byte-identical CSVs."""
    assert render_csvs(with_string_dtypes(report_input())) == render_csvs(report_input())


def test_every_payout_with_a_finding_has_an_action_the_most_urgent_first() -> None:
    """A late settlement (the double-payment risk) and every other flagged payout has an action;
    with several flags the most urgent one's line comes first; a failed one keeps its catalogue
    line; a payout with nothing to do has none."""
    frame = payouts_frame(
        [
            ("tx-a", "A", 500, "EUR", "settled", 6, None, 0, "late_settlement", "tx-b", 2.0, 1.9,
             "failed"),
            ("tx-b", "B", 500, "EUR", "settled", 6, None, 0, "", "", 1.0, 0.9, None),
            ("tx-c", "C", 700, "EUR", "failed", 3, "bank_rejected_transaction", 0,
             "amount_mismatch;stale", "", 9.0, 8.9, "pending"),
            ("tx-d", "D", 800, "EUR", "delayed", 4, "transaction_is_delayed_in_bank", 0,
             "stale", "", 9.0, 8.9, "delayed"),
        ]
    )  # fmt: skip
    payouts = by_id(payouts_csv(report_input(payouts=frame)))
    assert "do not pay again" in payouts["tx-a"]["action"]
    assert "recover the duplicate" in payouts["tx-a"]["action"]
    assert payouts["tx-b"]["action"] == ""
    c = payouts["tx-c"]["action"]
    assert c.index("The provider's amount differs") < c.index("Open for longer than")
    assert "Check the request" in c
    assert "Provider: Wait for settlement" in payouts["tx-d"]["action"]
    every = rows(payouts_csv(report_input()))
    needing = [r for r in every if r["exceptions"] or r["outcome"] in ("failed", "aborted")]
    assert all(r["action"] for r in needing)
