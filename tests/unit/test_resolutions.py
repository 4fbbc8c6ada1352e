"""Reading the file of `recon exceptions apply`: a CSV or the mailed workbook, all rows or none."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from recon.errors import InputError
from recon.ingest.resolutions import ResolutionRow, read_resolutions
from recon.report.model import ReportInput
from recon.report.workbook import render_workbook
from recon.textsafe import neutralise_text, restore_text
from tests.unit.report_fixtures import report_input

TODAY = date(2026, 11, 20)


def write(tmp_path: Path, text: str, *, name: str = "back.csv", bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read_resolutions(path, today=TODAY)
    return str(caught.value)


# --- CSV ----------------------------------------------------------------------------------------


def test_a_comma_separated_csv_is_read_with_line_numbers(tmp_path: Path) -> None:
    """Verbs in any case and spacing; empty resolutions skipped; other columns ignored."""
    path = write(
        tmp_path,
        "exception_id,status,Resolution,note,by,until\n"
        "E42-1,new, Acknowledge ,mine,anna,\n"
        "E42-2,new,,,,\n"
        'E40-1,acknowledged,SNOOZE,"waiting, still",,2026-12-01\n'
        "E36-1,resolved,resolve,,,\n",
    )
    assert read_resolutions(path, today=TODAY) == [
        ResolutionRow(2, None, "E42-1", "acknowledge", "mine", "anna", None),
        ResolutionRow(4, None, "E40-1", "snooze", "waiting, still", None, date(2026, 12, 1)),
        ResolutionRow(5, None, "E36-1", "resolve", None, None, None),
    ]


def test_a_semicolon_separated_csv_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """A spreadsheet's European export: BOM, `;` between fields, `,` inside a note."""
    path = write(
        tmp_path,
        "exception_id;resolution;note;until\r\nE42-3;reopen;facts changed, again;\r\n"
        "E42-4;snooze;;2026-12-24T09:00:00+01:00\r\n",
        bom=True,
    )
    assert read_resolutions(path, today=TODAY) == [
        ResolutionRow(2, None, "E42-3", "reopen", "facts changed, again", None, None),
        ResolutionRow(3, None, "E42-4", "snooze", None, None, date(2026, 12, 24)),
    ]


def test_a_file_without_the_required_columns_is_refused(tmp_path: Path) -> None:
    """exception_id and resolution are required; the message names what is missing."""
    message = refusal(write(tmp_path, "exception_id,note\nE1-1,x\n"))
    assert "missing required column(s) resolution" in message


def test_every_bad_row_is_reported_with_its_line_and_column(tmp_path: Path) -> None:
    """Unknown verb, snooze without date, a past date, no id, a date that is none: no rows."""
    path = write(
        tmp_path,
        "exception_id,resolution,until\n"
        "E1-1,acknowledged,\n"
        "E1-2,snooze,\n"
        "E1-3,snooze,2026-11-19\n"
        "E1-4,resolve,2026-12-01\n"
        "E1-5,acknowledge,\n"
        ",resolve,\n"
        "E1-6,snooze,next week\n",
    )
    message = refusal(path)
    assert "nothing was applied, 5 problems" in message
    assert (
        "line 2: resolution 'acknowledged' is not one of acknowledge, resolve, snooze, reopen"
        in message
    )
    assert "line 3: until is empty: snooze needs the date it ends" in message
    assert "line 4: until 2026-11-19 is in the past (today is 2026-11-20)" in message
    assert "line 5" not in message  # an until on a resolve is the case's to judge (the core)
    assert "line 7: exception_id is empty" in message
    assert "line 8: until 'next week' is not a date (YYYY-MM-DD)" in message
    assert "line 6" not in message


def test_a_snooze_until_today_is_in_the_past(tmp_path: Path) -> None:
    """A snooze must end after today."""
    message = refusal(write(tmp_path, "exception_id,resolution,until\nE1-1,snooze,2026-11-20\n"))
    assert "until 2026-11-20 is in the past" in message


def test_the_same_exception_twice_counts_once_or_is_a_conflict(tmp_path: Path) -> None:
    """Agreeing rows are one resolution; disagreeing rows are a problem naming both lines."""
    same = write(tmp_path, "exception_id,resolution,note\nE1-1,resolve,paid\nE1-1,resolve,\n")
    assert read_resolutions(same, today=TODAY) == [
        ResolutionRow(2, None, "E1-1", "resolve", "paid", None, None)
    ]
    other = write(tmp_path, "exception_id,resolution\nE1-1,resolve\nE1-1,acknowledge\n")
    assert "line 3: exception_id 'E1-1' is also on line 2 with another" in refusal(other)


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF document"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "an old Excel .xls workbook"),
        (b"exception_id,resolution\n\xff\xfe\x00bad", "not UTF-8 text"),
    ],
)
def test_a_file_that_is_neither_csv_nor_xlsx_is_refused(
    tmp_path: Path, head: bytes, kind: str
) -> None:
    """Content decides, not the name: a PDF, a PNG, an .xls or binary bytes named .csv."""
    path = tmp_path / "back.csv"
    path.write_bytes(head)
    message = refusal(path)
    assert "neither CSV nor XLSX" in message
    assert kind in message


def test_a_zip_that_is_not_a_workbook_is_refused(tmp_path: Path) -> None:
    """A zip file (the CSVs recon mailed, zipped) is not an XLSX."""
    path = tmp_path / "back.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("exceptions.csv", "exception_id,resolution\n")
    assert "a zip file but not an XLSX workbook" in refusal(path)


# --- the mailed workbook, sent back -------------------------------------------------------------


def mailed(tmp_path: Path, data: ReportInput | None = None) -> Path:
    """report.xlsx as recon writes it."""
    path = tmp_path / "report.xlsx"
    path.write_bytes(render_workbook(data or report_input()))
    return path


def fill(path: Path, sheet: str, exception_id: str, **cells: object) -> int:
    """Type into the row of ``exception_id`` as a person would; its row number."""
    book = openpyxl.load_workbook(path)
    ws = book[sheet]
    names = [c.value for c in ws[1]]
    row = next(r[0].row for r in ws.iter_rows(min_row=2) if r[0].value == exception_id)
    for name, value in cells.items():
        ws.cell(row, names.index(name) + 1, value)
    book.save(path)
    return row


def test_the_mailed_workbook_comes_back_with_the_resolutions_typed_into_it(
    tmp_path: Path,
) -> None:
    """Rows filled on Needs action, Acknowledged and Exceptions are read with their sheet and row;
    a date typed into until is a date; the same resolution on two sheets counts once."""
    path = mailed(tmp_path)
    ack = fill(path, "Needs action", "E42-1", resolution="acknowledge", note="on it")
    fill(path, "Exceptions", "E42-1", resolution="Acknowledge")
    december = datetime.fromisoformat("2026-12-01T00:00")  # a date cell, as Excel stores one
    snooze = fill(path, "Needs action", "E40-2", resolution="snooze", until=december)
    resolve = fill(path, "Acknowledged", "E40-1", resolution="resolve", note="corrected")
    assert read_resolutions(path, today=TODAY) == [
        ResolutionRow(ack, "Needs action", "E42-1", "acknowledge", "on it", None, None),
        ResolutionRow(snooze, "Needs action", "E40-2", "snooze", None, None, date(2026, 12, 1)),
        ResolutionRow(resolve, "Acknowledged", "E40-1", "resolve", "corrected", None, None),
    ]


def test_conflicting_resolutions_on_two_sheets_name_both_rows(tmp_path: Path) -> None:
    """Acknowledged on Needs action but resolved on Exceptions: refused, both rows named."""
    path = mailed(tmp_path)
    first = fill(path, "Needs action", "E42-1", resolution="acknowledge")
    second = fill(path, "Exceptions", "E42-1", resolution="resolve")
    message = refusal(path)
    assert (
        f"sheet 'Exceptions' row {second}: exception_id 'E42-1' is also on"
        f" sheet 'Needs action' row {first}"
    ) in message


def test_a_note_recon_neutralised_reads_back_as_written(tmp_path: Path) -> None:
    """A note "=2+3" is mailed as "'=2+3" and comes back as "=2+3"."""
    data = report_input()
    notes = data.exceptions["note"].astype(object).copy()
    notes[data.exceptions["exception_id"] == "E40-1"] = "=2+3; -call them"
    exceptions = data.exceptions.assign(note=pd.Series(notes, dtype=object))
    path = mailed(tmp_path, replace(data, exceptions=exceptions))
    row = fill(path, "Acknowledged", "E40-1", resolution="resolve")
    sheet = openpyxl.load_workbook(path)["Acknowledged"]
    note = [c.value for c in sheet[1]].index("note") + 1
    assert sheet.cell(row, note).value == "'=2+3;' -call them"
    (read,) = read_resolutions(path, today=TODAY)
    assert read.note == "=2+3; -call them"


def test_a_formula_in_a_column_recon_reads_is_a_problem_never_evaluated(
    tmp_path: Path,
) -> None:
    """A formula in resolution or note is refused; one in a column recon ignores is ignored."""
    path = mailed(tmp_path)
    bad = fill(path, "Exceptions", "E42-1", resolution='=IF(1,"resolve","")')
    note = fill(path, "Exceptions", "E42-2", resolution="resolve", note="=A1")
    fill(path, "Exceptions", "E42-3", resolution="resolve", detail="=1+1")
    message = refusal(path)
    assert f"sheet 'Exceptions' row {bad}: resolution is a formula, not a value" in message
    assert f"sheet 'Exceptions' row {note}: note is a formula, not a value" in message
    assert "2 problems" in message


def test_a_number_in_until_is_not_taken_for_a_date(tmp_path: Path) -> None:
    """An Excel serial typed without a date format (46000) is not guessed into a date."""
    path = mailed(tmp_path)
    row = fill(path, "Exceptions", "E42-1", resolution="snooze", until=46000)
    assert f"sheet 'Exceptions' row {row}: until '46000' is not a date" in refusal(path)


def test_a_workbook_without_a_resolution_sheet_is_refused(tmp_path: Path) -> None:
    """Sheets without both exception_id and resolution are not read; none at all is refused."""
    book = openpyxl.Workbook()
    assert book.active is not None
    book.active.append(["transaction_id", "amount"])
    path = tmp_path / "other.xlsx"
    book.save(path)
    assert "no sheet has both an exception_id and a resolution column" in refusal(path)


def test_an_untouched_workbook_gives_no_rows(tmp_path: Path) -> None:
    """The mailed workbook as it is: every resolution empty, nothing to apply."""
    assert read_resolutions(mailed(tmp_path), today=TODAY) == []


@given(st.text(alphabet=st.sampled_from(list("ab =+-@'\",;\t\r\n")), max_size=12))
def test_restoring_neutralised_text_gives_the_original(text: str) -> None:
    """What recon neutralised reads back as it was (but ' then a tab or CR: ambiguous)."""
    assume(not (text.startswith("'") and text.lstrip("'").startswith(("\t", "\r"))))
    assert restore_text(neutralise_text(text)) == text
