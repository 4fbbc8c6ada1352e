"""Reading the provider's export file through the [export] mapping: literal bytes in, rows,
problems or a refusal out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from recon.errors import InputError, exit_code_of
from recon.export_rows import ExportKind
from recon.export_settings import ExportColumns, ExportMapping, ExportTypes
from recon.ingest.provider_export import RowProblem, check_lines, read_export
from recon.sandbox import exports

T0, T1 = "1767225600", "1767225601.5"
SANDBOX = exports.render(
    [
        ["tx-1", "1", "6", "12.50", "eur", "ref-1", T0, T1, "0.25", "fee-1", ""],
        ["fee-1", "fee", "6", "0.25", "eur", "ref-1", T1, T1, "", "", "tx-1"],
        ["tx-2", "13", "6", "500", "jpy", "ref-2", T0, T0, "", "", "tx-0"],
        ["mv-1", "top_up", "6", "1000.00", "eur", "", T0, T0, "", "", ""],
        ["mv-2", "merchant_withdrawal", "6", "40.00", "eur", "", T0, T0, "", "", ""],
    ]
)  # fmt: skip

STOCKHOLM = ExportMapping(
    delimiter=";",
    decimal_separator=",",
    times="%Y-%m-%d %H:%M:%S",
    time_zone="Europe/Stockholm",
    columns=ExportColumns(
        transaction_id="Transaction ID",
        type="Type",
        state="Status",
        amount="Amount",
        currency="Currency",
        merchant_reference="Merchant reference",
        settled="Settled at",
    ),
    types=ExportTypes(payout=("1",), fee=("Fee",), top_up=("Top-up",)),
)
STOCKHOLM_FILE = (
    "\ufeffTransaction ID;Type;Status;Amount;Currency;Merchant reference;Settled at;Channel\r\n"
    "tx-1;1;STATE_SETTLED;1250,00;sek;order-77;2026-03-02 09:15:00;web\r\n"
    "tx-1-fee;Fee;settled;2,5;SEK;order-77;2026-07-02 09:15:00;web\r\n"
    "tx-2;1;STATE_FAILED;-0,10;SEK;;2026-03-02 10:00:00;app\r\n"
    "x-9;Adjustment;6;3,00;SEK;;;\r\n"
).encode()


def test_the_default_mapping_reads_the_sandboxs_own_file() -> None:
    """Every column of the sandbox's file is matched; kinds, minor units, UTC times, states."""
    export = read_export(SANDBOX, ExportMapping(), source="sandbox.csv")
    assert export.headers == exports.COLUMNS
    assert set(export.matched.values()) == set(exports.COLUMNS)
    assert export.leftover == ()
    assert export.problems == ()
    payout, fee, returned, top_up, withdrawal = export.rows
    assert (payout.line, payout.kind, payout.amount_minor, payout.currency) == (
        2, ExportKind.PAYOUT, 1250, "EUR"
    )  # fmt: skip
    assert payout.state == 6
    assert payout.fee_amount_minor == 25
    assert payout.fee_id == "fee-1"
    assert payout.created == datetime(2026, 1, 1, tzinfo=UTC)
    assert payout.settled == datetime(2026, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)
    assert payout.related_transaction_id is None
    assert (fee.kind, fee.amount_minor, fee.related_transaction_id) == (ExportKind.FEE, 25, "tx-1")
    assert (returned.kind, returned.amount_minor, returned.currency) == (
        ExportKind.RETURNED_FUNDS, 500, "JPY"
    )  # fmt: skip
    assert top_up.kind == ExportKind.TOP_UP
    assert withdrawal.kind == ExportKind.MERCHANT_WITHDRAWAL


def test_the_default_mapping_names_the_sandboxs_columns_and_types() -> None:
    """The settings spell the sandbox's headers and type values again: they stay equal."""
    assert set(ExportMapping().columns.named().values()) == set(exports.COLUMNS)
    assert set(ExportMapping().types.kinds()) == set(exports.TYPES)


def test_a_mapping_reads_other_headers_semicolons_decimal_commas_and_local_times() -> None:
    """Stockholm's wall-clock times become UTC (winter +01:00, summer +02:00); named states."""
    export = read_export(STOCKHOLM_FILE, STOCKHOLM, source="sek.csv")
    assert export.problems == ()
    assert export.leftover == ("Channel",)
    assert export.matched["transaction_id"] == "Transaction ID"
    payout, fee, failed, other = export.rows
    assert (payout.amount_minor, payout.currency, payout.state) == (125000, "SEK", 6)
    assert payout.state_raw == "STATE_SETTLED"
    assert payout.settled == datetime(2026, 3, 2, 8, 15, tzinfo=UTC)
    assert fee.settled == datetime(2026, 7, 2, 7, 15, tzinfo=UTC)
    assert (fee.kind, fee.amount_minor, fee.state) == (ExportKind.FEE, 250, 6)
    assert (failed.amount_minor, failed.state, failed.merchant_reference) == (-10, 3, None)
    assert (other.kind, other.type_raw, other.settled) == (ExportKind.OTHER, "Adjustment", None)


def test_headers_the_mapping_does_not_name_are_kept_with_each_row() -> None:
    """Never fatal: each row carries the leftover columns, header to text."""
    export = read_export(STOCKHOLM_FILE, STOCKHOLM, source="sek.csv")
    assert [dict(row.extra) for row in export.rows] == [
        {"Channel": "web"}, {"Channel": "web"}, {"Channel": "app"}, {"Channel": ""}
    ]  # fmt: skip


def test_a_file_without_the_transaction_id_column_is_refused_naming_what_was_expected() -> None:
    """An export shaped unlike the mapping: exit 2, the headers expected and found."""
    data = b"Txn;Type;Status;Amount;Currency\r\ntx-1;1;6;1,00;SEK\r\n"
    with pytest.raises(InputError) as caught:
        read_export(data, STOCKHOLM, source="sek.csv")
    message = str(caught.value)
    assert exit_code_of(caught.value) == 2
    assert "shaped unlike the mapping" in message
    assert "transaction_id = 'Transaction ID'" in message
    assert "'Txn'" in message


def test_the_sandboxs_file_read_with_the_wrong_delimiter_is_refused() -> None:
    """The whole header is one column: the message shows it and the delimiter used."""
    with pytest.raises(InputError, match="delimiter ';'"):
        read_export(SANDBOX, STOCKHOLM, source="sandbox.csv")


def test_an_unreadable_amount_is_a_problem_of_its_line() -> None:
    """The other rows are read; the importer refuses the file listing the line and reason (a
    row's first physical line, though a quoted cell before it spans two)."""
    data = (
        STOCKHOLM_FILE
        + b'tx-3;1;6;1,00;SEK;"two\r\nlines";2026-03-03 09:00:00;web\r\n'
        + b"tx-4;1;6;1.250,00;SEK;;2026-03-03 09:00:00;web\r\n"
    )
    export = read_export(data, STOCKHOLM, source="sek.csv")
    assert len(export.rows) == 5
    assert export.rows[-1].merchant_reference == "two\r\nlines"
    (problem,) = export.problems
    assert (problem.line, problem.field) == (8, "amount")
    assert "'1.250,00'" in problem.reason
    with pytest.raises(InputError, match="line 8: amount: not an amount"):
        export.refuse_unreadable()


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (b"tx-3;1;6;1,005;SEK;;;\r\n", "amount", "more than 2 decimals for SEK"),
        (b"tx-3;1;6;;SEK;;;\r\n", "amount", "empty"),
        (b"tx-3;1;6;1,00;SEKK;;;\r\n", "currency", "malformed currency code"),
        (b"tx-3;1;6;1,00;XAU;;;\r\n", "currency", "no minor unit"),
        (b"tx-3;1;STATE_LOST;1,00;SEK;;;\r\n", "state", "unknown state"),
        (b"tx-3;1;6;1,00;SEK;;2026-03-29 02:30:00;\r\n", "settled", "does not exist"),
        (b"tx-3;1;6;1,00;SEK;;29/03/2026;\r\n", "settled", "not a time in the format"),
        (b";1;6;1,00;SEK;;;\r\n", "transaction_id", "empty"),
        (b"tx-3;1;6;1,00;SEK\r\n", "row", "5 fields where the header has 8"),
        (b"x" * 256 + b";1;6;1,00;SEK;;;\r\n", "transaction_id", "longer than 255 characters"),
        (b"tx\x003;1;6;1,00;SEK;;;\r\n", "transaction_id", "a NUL character"),
        (b"tx-3;1\x00;6;1,00;SEK;;;\r\n", "type", "a NUL character"),
        (b"tx-3;1;6\x00;1,00;SEK;;;\r\n", "state", "a NUL character"),
        (b"tx-3;1;6;1,00;SEK;or\x00der;;\r\n", "merchant_reference", "a NUL character"),
    ],
)
def test_each_unreadable_cell_is_named_by_line_field_and_reason(
    row: bytes, field: str, reason: str
) -> None:
    """A money, currency, state, time or shape problem is a RowProblem, never a guess."""
    export = read_export(STOCKHOLM_FILE + row, STOCKHOLM, source="sek.csv")
    (problem,) = export.problems
    assert (problem.line, problem.field) == (6, field)
    assert reason in problem.reason


@pytest.mark.parametrize(("column", "field"), [(9, "fee_id"), (10, "related_transaction_id")])
def test_a_fee_id_or_related_id_the_store_cannot_hold_is_named(column: int, field: str) -> None:
    """Ids are kept in 255-character columns, and no database column holds a NUL."""
    for bad, reason in (("f" * 256, "longer than 255 characters"), ("f\x00", "a NUL character")):
        row = ["tx-1", "1", "6", "12.50", "eur", "ref-1", T0, T1, "0.25", "fee-1", "tx-0"]
        row[column] = bad
        (problem,) = read_export(exports.render([row]), ExportMapping(), source="x").problems
        assert (problem.line, problem.field) == (2, field)
        assert reason in problem.reason


def test_a_line_of_delimiters_only_is_a_blank_line() -> None:
    """Spreadsheets write ``;;;;`` lines at the end of a sheet: skipped, like an empty line."""
    export = read_export(STOCKHOLM_FILE + b";;;;;;;\r\n; ;;\r\n", STOCKHOLM, source="sek.csv")
    assert (len(export.rows), export.problems) == (4, ())


def test_epoch_times_read_exactly_to_the_microsecond() -> None:
    """Fractions beyond microseconds round half even, as every other time recon reads."""
    rows = [["tx-1", "1", "6", "1.00", "eur", "", "0.0000015", "1767225600.000001", "", "", ""]]
    (row,) = read_export(exports.render(rows), ExportMapping(), source="x").rows
    assert row.created == datetime(1970, 1, 1, 0, 0, 0, 2, tzinfo=UTC)
    assert row.settled == datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=UTC)


def test_an_unreadable_epoch_time_is_a_problem() -> None:
    """Text where epoch seconds belong names the column."""
    rows = [["tx-1", "1", "6", "1.00", "eur", "", "yesterday", "", "", "", ""]]
    export = read_export(exports.render(rows), ExportMapping(), source="x")
    assert export.problems == (RowProblem(2, "created", "not epoch seconds: 'yesterday'"),)


def test_a_file_not_in_the_mappings_encoding_is_refused_with_its_line() -> None:
    """cp1252 bytes read as UTF-8: the line and the setting to change."""
    data = "Transaction ID;Type;Status;Amount;Currency\r\ntx-1;1;6;1,00;SEK\r\nö".encode("cp1252")
    with pytest.raises(InputError, match=r"line 3: not utf-8 .*\[export\] encoding"):
        read_export(data, STOCKHOLM, source="sek.csv")
    latin = STOCKHOLM.model_copy(update={"encoding": "cp1252"})
    ok = "Transaction ID;Type;Status;Amount;Currency\r\ntx-ö;1;6;1,00;SEK\r\n".encode("cp1252")
    assert read_export(ok, latin, source="sek.csv").rows[0].transaction_id == "tx-ö"


def test_an_empty_file_is_refused() -> None:
    """No header, nothing to map."""
    with pytest.raises(InputError, match="no header row"):
        read_export(b"", ExportMapping(), source="empty.csv")


def test_check_lines_show_matches_leftovers_sums_problems_and_first_rows() -> None:
    """What `recon provider-export check` prints, grouped by type and currency."""
    data = STOCKHOLM_FILE + b"tx-3;1;6;abc;SEK;;;\r\n"
    text = "\n".join(check_lines(read_export(data, STOCKHOLM, source="sek.csv"), first=2))
    assert "  amount = 'Amount'" in text
    assert "headers left over (kept with each row): 'Channel'" in text
    assert "type '1' (payout) SEK: 2 row(s), sum 1249.90 SEK" in text
    assert "type 'Adjustment' (other) SEK: 1 row(s), sum 3.00 SEK" in text
    assert "line 6: amount: not an amount: 'abc'" in text
    assert "first rows as read (2):" in text
    assert "line 2: tx-1, payout ('1'), state 6 SETTLED, 1250.00 SEK" in text
    assert "line 4: tx-2" not in text


SIGNED_FILE = (
    b"Transaction ID;Type;Status;Amount;Currency;Settled at;Fee\r\n"
    b"tx-1;1;6;-1250,00;SEK;2026-03-02 09:15:00;-2,50\r\n"
    b"tx-1-fee;Fee;6;-2,50;SEK;2026-03-02 09:15:00;\r\n"
    b"tx-1-back;Fee;6;1,00;SEK;2026-03-03 09:15:00;\r\n"
    b"mv-1;Top-up;6;10000,00;SEK;2026-03-01 08:00:00;\r\n"
    b"mv-2;Merchant withdrawal;6;-400,00;SEK;2026-03-04 08:00:00;\r\n"
    b"tx-0-r;13;6;120,00;SEK;2026-03-04 09:00:00;\r\n"
)
SIGNED = STOCKHOLM.model_copy(
    update={
        "columns": ExportColumns(
            transaction_id="Transaction ID",
            type="Type",
            state="Status",
            amount="Amount",
            currency="Currency",
            settled="Settled at",
            fee_amount="Fee",
        ),
        "types": ExportTypes(
            payout=("1",),
            fee=("Fee",),
            top_up=("Top-up",),
            merchant_withdrawal=("Merchant withdrawal",),
            returned_funds=("13",),
        ),
    }
)


def test_money_out_written_with_a_minus_is_read_as_money_out() -> None:
    """money_out = "negative": payouts, fees and merchant withdrawals (amount and fee_amount) are
    read with their sign turned; a fee given back (+1,00) lowers the fees; money in stays."""
    rows = read_export(SIGNED_FILE, SIGNED.model_copy(update={"money_out": "negative"}), source="s")
    got = {row.transaction_id: (row.amount_minor, row.fee_amount_minor) for row in rows.rows}
    assert got == {
        "tx-1": (125000, 250),
        "tx-1-fee": (250, None),
        "tx-1-back": (-100, None),
        "mv-1": (1000000, None),
        "mv-2": (40000, None),
        "tx-0-r": (12000, None),
    }


def test_check_notes_money_out_that_sums_below_zero() -> None:
    """Read as positive, the signed file's payouts, fees and withdrawals sum below zero: check says
    so and names the setting; read as negative, or a file of positive money out, no note."""
    as_positive = "\n".join(check_lines(read_export(SIGNED_FILE, SIGNED, source="s")))
    assert (
        "note: money out (fee, merchant_withdrawal, payout) sums below zero as read" in as_positive
    )
    assert 'money_out ("negative"' in as_positive
    turned = SIGNED.model_copy(update={"money_out": "negative"})
    assert "note:" not in "\n".join(check_lines(read_export(SIGNED_FILE, turned, source="s")))
    assert "note:" not in "\n".join(check_lines(read_export(SANDBOX, ExportMapping(), source="s")))
