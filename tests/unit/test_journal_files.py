"""The journal's export files against their published rules: the CSV's columns, Xero's manual
journal template (columns, dd/mm/yyyy dates, signed amounts, 300 lines a file, an entry never
split), SIE 4 (#VER sums to zero, code page 437, quoting), and the checks a batch passes first."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from recon.reconcile.journal import (
    JournalLine,
    JournalParams,
    PayoutMoney,
    Role,
    booked_entries,
    journal_entries,
)
from recon.reconcile.journal_check import unbalanced
from recon.report.csvpack import EXCEL_EU
from recon.report.journal_files import (
    CSV_COLUMNS,
    XERO_COLUMNS,
    csv_file,
    manifest_file,
    sie_field,
    sie_files,
    xero_files,
)

CODES = {
    Role.PAYOUTS_PAYABLE: "2890",
    Role.PROVIDER_BALANCE: "1940",
    Role.FEE_EXPENSE: "6570",
    Role.SUSPENSE: "2999",
}
SETTLED = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _payout(tid: str, amount: int = 10000, fee: int | None = 75, **more: object) -> PayoutMoney:
    values: dict[str, object] = {
        "transaction_id": tid,
        "merchant_reference": f"ref-{tid}",
        "currency": "EUR",
        "amount_minor": amount,
        "outcome": "settled",
        "settled_at": SETTLED,
        "settled_since": SETTLED,
        "fee_minor": fee,
        "returned_minor": None,
        **more,
    }
    return PayoutMoney(**values)  # type: ignore[arg-type]


def _params(day: int = 21) -> JournalParams:
    return JournalParams(
        provider_account="nordlys",
        codes=CODES,
        zone=ZoneInfo("Europe/Stockholm"),
        as_of=datetime(2026, 11, day, 2, 0, tzinfo=UTC),
    )


def _lines(*payouts: PayoutMoney) -> list[JournalLine]:
    return journal_entries(payouts, [], _params())


def _rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))


def test_csv_has_the_documented_columns_and_exact_amounts() -> None:
    """Header exactly the contract; a settlement's two lines and a fee's, amounts in cents."""
    lines = _lines(_payout("tx-1"))
    rows = _rows(csv_file(7, lines))
    assert list(rows[0]) == CSV_COLUMNS
    assert [(r["event"], r["account"], r["debit"], r["credit"]) for r in rows] == [
        ("payout_settled", "2890", "100.00", "0.00"),
        ("payout_settled", "1940", "0.00", "100.00"),
        ("payout_fee", "6570", "0.75", "0.00"),
        ("payout_fee", "1940", "0.00", "0.75"),
    ]
    assert {r["batch"] for r in rows} == {"7"}
    assert rows[0]["posting_date"] == "2026-11-20"
    assert rows[0]["late"] == "false"


def test_csv_in_the_excel_eu_dialect_and_formulas_neutralised() -> None:
    """excel-eu: BOM, ';', decimal comma, CRLF; a reference starting '=' gets a leading quote."""
    lines = _lines(_payout("tx-1", fee=None, merchant_reference="=HYPERLINK(1)"))
    content = csv_file(1, lines, EXCEL_EU).decode("utf-8")
    assert content.startswith("\ufeffjournal_id;line;")
    assert content.endswith("\r\n")
    first = content.split("\r\n")[1].split(";")
    assert first[CSV_COLUMNS.index("debit")] == "100,00"
    assert first[CSV_COLUMNS.index("merchant_reference")] == "'=HYPERLINK(1)"


def test_xero_columns_dates_and_signed_amounts() -> None:
    """Xero's template header; Date as dd/mm/yyyy; a debit positive, a credit negative; the
    narration starts with the journal_id and is the same on an entry's lines."""
    lines = _lines(_payout("tx-1"))
    [(name, content)] = xero_files(3, lines, date_format="%d/%m/%Y", tax_rate="Tax Exempt")
    assert name == "journal-batch-3-xero-EUR-1.csv"
    rows = _rows(content)
    assert list(rows[0]) == XERO_COLUMNS
    assert [(r["*AccountCode"], r["*Amount"]) for r in rows] == [
        ("2890", "100.00"),
        ("1940", "-100.00"),
        ("6570", "0.75"),
        ("1940", "-0.75"),
    ]
    assert {r["*Date"] for r in rows} == {"20/11/2026"}
    assert {r["*TaxRate"] for r in rows} == {"Tax Exempt"}
    assert rows[0]["*Narration"] == rows[1]["*Narration"]
    assert rows[0]["*Narration"].startswith(lines[0].journal_id + " ")
    for k in range(0, len(rows), 2):  # each journal (same narration and date) sums to zero
        assert Decimal(rows[k]["*Amount"]) + Decimal(rows[k + 1]["*Amount"]) == 0


def test_xero_splits_at_300_lines_without_splitting_an_entry() -> None:
    """151 two-line entries (302 lines): 150 entries (300 lines) in file 1, one in file 2; with
    an odd limit no entry is cut; each currency has its own files."""
    payouts = [_payout(f"tx-{i:03d}", fee=None) for i in range(151)]
    lines = _lines(*payouts) + _lines(_payout("tx-sek", fee=None, currency="SEK"))
    files = xero_files(5, lines, date_format="%d/%m/%Y", tax_rate="Tax Exempt")
    assert [name for name, _ in files] == [
        "journal-batch-5-xero-EUR-1.csv",
        "journal-batch-5-xero-EUR-2.csv",
        "journal-batch-5-xero-SEK-1.csv",
    ]
    assert [len(_rows(content)) for _, content in files] == [300, 2, 2]
    odd = xero_files(5, lines[:10], date_format="%d/%m/%Y", tax_rate="T", lines_per_file=3)
    for _, content in odd:
        narrations = [r["*Narration"] for r in _rows(content)]
        assert len(narrations) == 2
        assert narrations[0] == narrations[1]


def test_xero_date_format_follows_the_setting() -> None:
    """Another date format (dd mmm yyyy, which Xero also reads) is written as set."""
    [(_, content)] = xero_files(1, _lines(_payout("tx-1")), date_format="%d %b %Y", tax_rate="T")
    assert _rows(content)[0]["*Date"] == "20 Nov 2026"


def _ver_blocks(text: str) -> list[tuple[str, list[Decimal]]]:
    blocks, lines = [], text.split("\r\n")
    for i, line in enumerate(lines):
        if line.startswith("#VER"):
            assert lines[i + 1] == "{"
            amounts = []
            j = i + 2
            while lines[j] != "}":
                assert lines[j].startswith("#TRANS ")
                amounts.append(Decimal(lines[j].split(" ")[-1]))
                j += 1
            blocks.append((line, amounts))
    return blocks


def test_sie_header_ver_numbers_and_sums_to_zero() -> None:
    """The 4I header in order; one #VER per entry with the series, number, posting date and
    journal_id; each #VER's #TRANS amounts sum to zero; CRLF line ends."""
    lines = _lines(_payout("tx-1"), _payout("tx-2", fee=None))
    [(name, content)] = sie_files(
        4,
        lines,
        series={"nordlys": "R"},
        names={"nordlys": "Nordlys"},
        program=("recon", "0.1.0"),
        generated="20261121",
    )
    assert name == "journal-batch-4-nordlys-EUR.si"
    text = content.decode("cp437")
    assert text.split("\r\n")[:7] == [
        "#FLAGGA 0",
        "#PROGRAM recon 0.1.0",
        "#FORMAT PC8",
        "#GEN 20261121",
        "#SIETYP 4",
        "#FNAMN Nordlys",
        "#VALUTA EUR",
    ]
    assert "\n" not in text.replace("\r\n", "")
    blocks = _ver_blocks(text)
    assert len(blocks) == 3
    first = lines[0]
    assert blocks[0][0] == f'#VER R {first.number} 20261120 "{first.journal_id} payout_settled"'
    assert blocks[0][1] == [Decimal("100.00"), Decimal("-100.00")]
    assert all(sum(amounts) == 0 for _, amounts in blocks)


def test_sie_is_code_page_437_and_quotes_fields() -> None:
    """A name with å and ö round-trips through cp437; a '"' is escaped \\"; a character cp437
    lacks loses its accent (or is '?'); control characters go; a backslash cannot end a quoted
    field."""
    lines = _lines(_payout("tx-1", fee=None))
    [(_, content)] = sie_files(
        1,
        lines,
        series={"nordlys": "R"},
        names={"nordlys": 'Nordlys "Å" Sjö'},
        program=("recon", "0.1.0"),
        generated="20261121",
    )
    assert '#FNAMN "Nordlys \\"Å\\" Sjö"'.encode("cp437") in content
    assert content.decode("cp437").count("Sjö") == 1
    assert b"\x94" in content  # ö in code page 437
    assert sie_field("Łódź") == "?ódz"  # ó is in cp437, ź loses its accent, Ł has no plain form
    assert sie_field("a\tb\x07c") == "abc"
    assert sie_field("end\\") == "end/"
    assert sie_field("") == '""'


def test_manifest_totals_and_files() -> None:
    """The manifest's lines, entries, per-currency totals and the files it is given."""
    lines = _lines(_payout("tx-1"), _payout("tx-2", currency="SEK", fee=None))
    files = [{"name": "journal-batch-1.csv", "sha256": "ab" * 32, "bytes": 10}]
    document = json.loads(
        manifest_file(
            batch=1,
            fmt="csv",
            provider_account=None,
            created_at=datetime(2026, 11, 21, 3, 0, tzinfo=UTC),
            lines=lines,
            files=files,
            options={"dialect": "standard"},
        )
    )
    assert document["lines"] == 6
    assert document["entries"] == 3
    assert document["totals"] == [
        {"currency": "EUR", "lines": 4, "debit": "100.75", "credit": "100.75"},
        {"currency": "SEK", "lines": 2, "debit": "100.00", "credit": "100.00"},
    ]
    assert document["files"] == files


def test_checks_pass_the_core_s_entries_and_reversals() -> None:
    """Entries the core makes, and their reversals, pass both checks."""
    lines = _lines(_payout("tx-1"))
    later = journal_entries(
        [_payout("tx-1", fee=120)], booked_entries(lines), _params(day=23), next_number=3
    )
    assert any(line.reverses for line in later)
    assert unbalanced([*lines, *later]) == []


def test_checks_refuse_an_unbalanced_entry_and_a_fee_on_the_wrong_side() -> None:
    """A changed amount unbalances its entry; a fee crediting the expense and debiting the
    provider balance balances but is refused; a reversal of a fee must debit it."""
    lines = _lines(_payout("tx-1"))
    edited = [replace(lines[0], debit_minor=9999), *lines[1:]]
    [problem] = unbalanced(edited)
    assert problem.journal_id == lines[0].journal_id
    assert "debits 99.99 EUR and credits 100.00 EUR differ" in str(problem)
    fee = [line for line in lines if line.event == "payout_fee"]
    swapped = [replace(x, debit_minor=x.credit_minor, credit_minor=x.debit_minor) for x in fee]
    [wrong] = unbalanced(swapped)
    assert wrong.journal_id == fee[0].journal_id
    assert "wrong side" in wrong.reason
    reversal = [replace(x, reverses="Jorig") for x in fee]  # a reversal with a fee's own sides
    assert "must be a debit" in unbalanced(reversal)[0].reason
    assert unbalanced([replace(x, reverses="Jorig") for x in swapped]) == []


def test_dates_in_a_closed_period_post_late() -> None:
    """A line's posting date, not its event date, is what Xero and SIE book on."""
    params = replace(_params(), locked_through=date(2026, 11, 20))
    lines = journal_entries([_payout("tx-1", fee=None)], [], params)
    [(_, content)] = xero_files(1, lines, date_format="%d/%m/%Y", tax_rate="T")
    assert {r["*Date"] for r in _rows(content)} == {"21/11/2026"}
