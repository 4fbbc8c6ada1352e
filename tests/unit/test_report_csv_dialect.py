"""RECON_CSV_DIALECT: `standard` (today's bytes) and `excel-eu` (`;`, decimal comma, BOM, CRLF)."""

from __future__ import annotations

import csv
import io

import pytest

from recon.errors import ConfigError
from recon.report.csvpack import DIALECTS, EXCEL_EU, STANDARD, payouts_csv, render_csvs
from recon.settings import load_settings
from recon.textsafe import neutralise_text, restore_text
from tests.unit.report_fixtures import payouts_frame, report_input

BOM = "\ufeff".encode()


def cells(content: bytes, delimiter: str) -> list[list[str]]:
    text = content.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def test_the_standard_dialect_is_the_default_and_writes_comma_dot_utf8_without_bom() -> None:
    """The default: `,` between cells, `.` in amounts, UTF-8 without a BOM, `\\n` line ends."""
    data = report_input()
    for name, content in render_csvs(data).items():
        assert content == render_csvs(data, dialect=STANDARD)[name]
        assert not content.startswith(BOM), name
        assert b"\r\n" not in content, name
    assert b"tx-001,default,INV-1001,100.10,EUR,settled," in render_csvs(data)["payouts.csv"]


def test_excel_eu_uses_semicolons_a_decimal_comma_a_bom_and_crlf() -> None:
    """excel-eu: the same cells, `;` separated, amounts with `,`, a BOM, CRLF line ends."""
    data = report_input()
    standard = render_csvs(data)
    for name, content in render_csvs(data, dialect=EXCEL_EU).items():
        assert content.startswith(BOM), name
        assert content.count(b"\r\n") == content.count(b"\n"), name
        eu, std = cells(content, ";"), cells(standard[name], ",")
        assert eu[0] == std[0], name
        for eu_row, std_row in zip(eu[1:], std[1:], strict=True):
            for column, eu_cell, std_cell in zip(eu[0], eu_row, std_row, strict=True):
                if column in ("amount", "returned_amount", "net"):
                    assert eu_cell == std_cell.replace(".", ","), (name, column)
                else:
                    assert eu_cell == std_cell, (name, column)
    payouts = render_csvs(data, dialect=EXCEL_EU)["payouts.csv"]
    assert b"tx-001;default;INV-1001;100,10;EUR;settled;" in payouts
    assert b"tx-013;default;JP-1;15000;JPY;" in payouts  # no decimals, no comma


def test_a_semicolon_in_a_text_cell_is_quoted_and_formulas_stay_neutralised_in_excel_eu() -> None:
    """A `;` inside a cell is quoted in excel-eu, and a formula after it still gets its `'`."""
    frame = payouts_frame(
        [("tx-s", "a;=cmd|' /C calc'!A0", 500, "EUR", "settled", 6, None, 0, "", "", 1, 1, None),
         ("tx-t", "=1+1", 600, "EUR", "settled", 6, None, 0, "", "", 1, 1, None),
         ("tx-u", "x,y", 700, "EUR", "settled", 6, None, 0, "", "", 1, 1, None)]
    )  # fmt: skip
    content = payouts_csv(report_input(payouts=frame), dialect=EXCEL_EU)
    assert b"\"a;'=cmd|' /C calc'!A0\"" in content
    rows = {r[0]: r for r in cells(content, ";")[1:]}
    assert rows["tx-s"][2] == "a;'=cmd|' /C calc'!A0"
    assert rows["tx-t"][2] == "'=1+1"
    assert rows["tx-u"][2] == "x,y"
    # A reader that splits on `;` whatever the quotes never gets a cell starting with `=`.
    for line in content.decode("utf-8-sig").splitlines():
        assert not any(part.lstrip(' "').startswith("=") for part in line.split(";"))


def test_the_dialect_is_read_from_recon_csv_dialect_and_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RECON_CSV_DIALECT names a dialect; an unknown one is a configuration error naming it."""
    assert load_settings().csv_dialect == "standard"
    monkeypatch.setenv("RECON_CSV_DIALECT", "excel-eu")
    assert DIALECTS[load_settings().csv_dialect] is EXCEL_EU
    monkeypatch.setenv("RECON_CSV_DIALECT", "excel")
    with pytest.raises(ConfigError, match="RECON_CSV_DIALECT"):
        load_settings()


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("-8f3a-2c11-4d", "-8f3a-2c11-4d"),
        ("-a.b_c", "-a.b_c"),
        ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"),
        ("-A1:B2", "'-A1:B2"),
        ("-x(1)", "'-x(1)"),
    ],
)
def test_an_id_round_trips_exactly_when_it_can_compute_nothing(cell: str, written: str) -> None:
    """An id of `-` then letters, digits, `_`, `.` or `-` is written as it is (no function
    call, range, DDE or other sheet is possible); anything more keeps its `'`."""
    frame = payouts_frame(
        [(cell, "REF", 500, "EUR", "settled", 6, None, 0, "", "", 1.0, 1.0, None)]
    )
    for dialect, sep in ((STANDARD, ","), (EXCEL_EU, ";")):
        (row,) = cells(payouts_csv(report_input(payouts=frame), dialect=dialect), sep)[1:]
        assert row[0] == written


def test_candidate_duplicate_ids_round_trip_exactly() -> None:
    """The `;`-joined candidate duplicates keep their ids bare, as the id columns do."""
    frame = payouts_frame(
        [("tx-l", "L", 500, "EUR", "settled", 6, None, 0, "late_settlement", "-9a;-9b", 2, 1,
          "failed")]
    )  # fmt: skip
    for dialect, sep in ((STANDARD, ","), (EXCEL_EU, ";")):
        table = cells(payouts_csv(report_input(payouts=frame), dialect=dialect), sep)
        row = dict(zip(table[0], table[1], strict=True))
        assert row["candidate_duplicates"] == "-9a;-9b"


def test_any_white_space_before_a_formula_is_trimmed_as_a_spreadsheet_may() -> None:
    """A form feed, a vertical tab or a no-break space hides a formula no better than a space:
    the cell gets its "'", at the start and after a separator, and reads back as it was."""
    for text, safe in (
        ("\x0c@SUM(1)", "'\x0c@SUM(1)"),
        ("\xa0=1+1", "'\xa0=1+1"),
        ("a;\x0b+1", "a;'\x0b+1"),
    ):
        assert neutralise_text(text) == safe
        assert restore_text(safe) == text
