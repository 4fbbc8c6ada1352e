"""Bounded reading of what people send: checked before it is parsed, one line."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import openpyxl.xml
import pytest

from recon.errors import InputError
from recon.ingest.resolutions import read_resolutions
from recon.ingest.sentfile import check_workbook, excerpt, open_regular
from tests.unit import sent_files

TODAY = date(2026, 11, 20)


def refusal(path: Path, **limits: int) -> str:
    with pytest.raises(InputError) as caught:
        read_resolutions(path, today=TODAY, **limits)
    message = str(caught.value)
    assert "\n" not in message, message
    assert str(path) in message
    assert message.endswith("nothing was applied"), message
    return message


def test_openpyxl_parses_with_defusedxml() -> None:
    """defusedxml is installed, so openpyxl refuses entity declarations in every part it parses."""
    assert openpyxl.xml.DEFUSEDXML


def test_an_excerpt_quotes_at_most_sixty_characters_and_says_how_long_the_text_was() -> None:
    """Short text is quoted whole; long text is cut, repr-safe, with its length."""
    assert excerpt("E42-1") == "'E42-1'"
    long = "x" * 59 + "\n" + "y" * 1_000_000
    assert excerpt(long) == repr("x" * 59 + "\n") + "... (1,000,060 characters)"


def test_a_fifo_is_refused_at_once_without_being_read(tmp_path: Path) -> None:
    """No writer ever opens it: the open does not wait, and the refusal says what it is."""
    fifo = tmp_path / "back.csv"
    os.mkfifo(fifo)
    assert "a FIFO (named pipe), not a regular file: not read" in refusal(fifo)


@pytest.mark.parametrize(
    ("make", "kind"),
    [(lambda tmp: tmp, "a directory"), (lambda tmp: Path("/dev/zero"), "a device")],
)
def test_directories_and_devices_are_refused_by_what_they_are(
    tmp_path: Path, make: object, kind: str
) -> None:
    """Said without reading them (/dev/zero would give zeros forever)."""
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(InputError, match=f"{kind}, not a regular file"):
        open_regular(path)


def test_a_symbolic_link_is_refused_without_quoting_its_target(tmp_path: Path) -> None:
    """The target's first line (a secret, say) is not read, so no error can quote it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2-very-secret\n")
    link = tmp_path / "back.csv"
    link.symlink_to(secret)
    message = refusal(link)
    assert "a symbolic link, not read" in message
    assert "hunter2" not in message


def test_a_csv_larger_than_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """RECON_APPLY_MAX_BYTES bounds a CSV on disk."""
    path = tmp_path / "back.csv"
    path.write_text("exception_id,resolution\n" + "E1-1,resolve\n" * 200)
    assert "more than RECON_APPLY_MAX_BYTES (1,024)" in refusal(path, max_bytes=1024)


def test_a_csv_with_more_records_than_the_limit_is_refused(tmp_path: Path) -> None:
    """Records are objects in memory: their number is bounded too."""
    path = tmp_path / "back.csv"
    path.write_text("exception_id,resolution\n" + "E1-1,\n" * 11)
    assert "more than 10 records (line 12)" in refusal(path, max_rows=10)


def test_a_header_of_many_columns_is_quoted_as_an_excerpt(tmp_path: Path) -> None:
    """100,000 columns without `resolution`: the count and the first 60 characters only."""
    path = tmp_path / "back.csv"
    path.write_text(",".join(f"c{i}" for i in range(100_000)) + "\n")
    message = refusal(path)
    assert "missing required column(s) exception_id, resolution; found 100,000 columns" in message
    assert len(message) < 400


def test_a_line_longer_than_a_mebibyte_is_refused(tmp_path: Path) -> None:
    """A million columns (6.9 MB of header) stops at the line's length, not in memory."""
    path = tmp_path / "back.csv"
    path.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n")
    assert "line 1 is longer than 1,048,576 characters" in refusal(path)


def test_a_cell_is_quoted_as_an_excerpt(tmp_path: Path) -> None:
    """A 100,000-character resolution is a problem of its row, quoted in 60 characters."""
    path = tmp_path / "back.csv"
    path.write_text("exception_id,resolution\nE1-1," + "z" * 100_000 + "\n")
    with pytest.raises(InputError) as caught:
        read_resolutions(path, today=TODAY)
    assert "resolution 'zzzz" in str(caught.value)
    assert len(str(caught.value)) < 400


def test_a_workbook_whose_parts_declare_more_than_the_limit_is_refused(tmp_path: Path) -> None:
    """The zip's declared sizes are summed before anything is inflated."""
    path = sent_files.rows_bomb(tmp_path / "back.xlsx", 3_000)
    assert (
        "its parts would inflate to 289,909 bytes, more than RECON_APPLY_MAX_BYTES (200,000)"
        in refusal(path, max_bytes=200_000)
    )


def test_a_workbook_whose_sizes_lie_is_refused_as_damaged(tmp_path: Path) -> None:
    """A central directory declaring 1,000 bytes for a 2 MB sheet: reading stops at 1,000."""
    path = sent_files.lying_sizes(tmp_path / "back.xlsx", 1_000)
    assert "part 'xl/worksheets/sheet1.xml' is damaged" in refusal(path)


@pytest.mark.parametrize(
    ("make", "what"),
    [(sent_files.rows_bomb, "rows"), (sent_files.strings_bomb, "shared strings")],
)
def test_a_workbook_with_more_rows_or_shared_strings_than_the_limit_is_refused(
    tmp_path: Path, make: object, what: str
) -> None:
    """Counted while inflating, before the parser keeps any of them."""
    path = make(tmp_path / "back.xlsx", 5_000)  # type: ignore[operator]
    assert f"more than 4,999 {what}" in refusal(path, max_rows=4_999)


def test_rows_cut_between_chunks_are_counted_once(tmp_path: Path) -> None:
    """Tokens that straddle the 1 MiB chunks are neither lost nor counted twice."""
    path = sent_files.rows_bomb(tmp_path / "back.xlsx", 30_001)  # 2.9 MB: three chunks
    with path.open("rb") as handle:
        check_workbook(handle, str(path), max_bytes=2**30, max_rows=30_002)  # header + 30,001
        with pytest.raises(InputError, match="more than 30,001 rows"):
            check_workbook(handle, str(path), max_bytes=2**30, max_rows=30_001)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (sent_files.billion_laughs, "XML entity declarations are refused"),
        (lambda p: sent_files.entity_chain(p, 1_000), "XML entity declarations are refused"),
        (sent_files.undefined_entity, "undefined entity"),
        (sent_files.truncated_sheet, "no element found"),
    ],
)
def test_bad_xml_in_a_sheet_is_one_line_naming_the_part(
    tmp_path: Path, make: object, why: str
) -> None:
    """Entities, undefined ones and a sheet cut short: refused by the parser, named, one line."""
    path = make(tmp_path / "back.xlsx")  # type: ignore[operator]
    message = refusal(path)
    assert "part 'xl/worksheets/sheet1.xml'" in message
    assert why in message


def test_a_row_numbered_past_the_limit_is_refused(tmp_path: Path) -> None:
    """``<row r="2000000000">``: the rows between are counted, never walked."""
    sheet = (
        sent_files.SHEET_START
        + sent_files.HEADER
        + '<row r="2000000000"><c t="inlineStr"><is><t>E1-1</t></is></c></row>'
        + sent_files.SHEET_END
    )
    path = sent_files.workbook(tmp_path / "back.xlsx", sheet)
    assert "sheet 'Exceptions' has more than 1,048,576 rows" in refusal(path)
