"""The cells of a resolutions file (``recon exceptions apply FILE``), CSV or XLSX, as raw rows.

No meaning is read here (:mod:`recon.ingest.resolutions` checks each row): the file is told apart by
content, bounded before it is parsed (:mod:`recon.ingest.sentfile`), and each row given as the cells
of the columns recon knows, with where it was read.

- XLSX (a zip, ``PK``): every sheet with both an ``exception_id`` and a ``resolution`` column in its
  first row is read. Cells are read as stored, never evaluated (openpyxl, ``read_only``): a formula
  or an error value is :class:`Unusable`. Row numbers are the sheet's (the header is row 1).
- CSV: UTF-8 text, a byte-order mark allowed, separated by ``,`` or ``;`` (whichever the header
  line holds more of). Row numbers are the line a record starts on (the header is line 1).

A file beyond the bounds, or one that cannot be parsed, is refused with one
:class:`~recon.errors.InputError` line naming it (and the sheet where there is one).
"""

from __future__ import annotations

import warnings
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import BinaryIO, cast
from xml.etree.ElementTree import ParseError

import openpyxl
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse as defused_iterparse
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.worksheet._read_only import ReadOnlyWorksheet

from recon.errors import InputError
from recon.ingest.csvread import read_csv
from recon.ingest.sentfile import check_size, check_workbook, excerpt, open_regular

REQUIRED_COLUMNS = ("exception_id", "resolution")
KNOWN_COLUMNS = (*REQUIRED_COLUMNS, "note", "by", "until")
_ZIP_MAGIC = b"PK\x03\x04"
# What a file that is neither CSV nor XLSX often is, to say so (the first bytes of each).
_OTHER_FORMATS = {
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook (save it as .xlsx or CSV)",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
}
_SNIFF_BYTES = 8192
# What parsing a workbook raises on bad content: a broken zip or stream, XML that is cut short or
# malformed (ParseError), entity declarations (DefusedXmlException, a ValueError), a missing part.
_WORKBOOK_ERRORS = (
    InvalidFileException,
    zipfile.BadZipFile,
    ParseError,
    DefusedXmlException,
    KeyError,
    ValueError,
    TypeError,
    EOFError,
    zlib.error,
    OSError,
)


class Unusable:
    """A cell recon will not read: a formula (never evaluated) or an error value (``#REF!``)."""

    def __init__(self, why: str) -> None:
        self.why = why


Cell = str | int | float | bool | date | datetime | Unusable | None


@dataclass(frozen=True)
class RawRow:
    """One row as read: where it is, and its known columns' cells (or why it has none)."""

    row: int
    sheet: str | None
    cells: Mapping[str, Cell] | str  # the known columns' cells, or why the row has none


def raw_rows(path: Path, *, max_bytes: int, max_rows: int) -> Iterator[RawRow]:
    """The rows of the file at ``path``, read as CSV or as XLSX by its first bytes."""
    handle = open_regular(path, follow_symlinks=False)
    with handle:
        try:
            check_size(handle, str(path), max_bytes=max_bytes)
            head = handle.read(_SNIFF_BYTES)
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror}") from None
        if head.startswith(_ZIP_MAGIC):
            check_workbook(handle, str(path), max_bytes=max_bytes, max_rows=max_rows)
            return _xlsx_rows(path, handle, max_rows)
        return _csv_rows(path, handle, head, max_rows)


def _csv_rows(path: Path, handle: BinaryIO, head: bytes, max_rows: int) -> Iterator[RawRow]:
    kind = next((name for magic, name in _OTHER_FORMATS.items() if head.startswith(magic)), None)
    try:
        # The last character may be cut by the sniffed length: only a bad byte before it counts.
        text = head.decode("utf-8-sig", errors="strict") if b"\0" not in head else None
    except UnicodeDecodeError as exc:
        text = head[: exc.start].decode("utf-8-sig") if exc.start >= len(head) - 3 else None
    if kind is not None or text is None:
        raise InputError(
            f"{path}: neither CSV nor XLSX ({kind or 'not UTF-8 text'}): send back the workbook"
            " recon mailed, or a CSV with exception_id and resolution columns"
        )
    header = text.splitlines()[0] if text else ""
    delimiter = ";" if header.count(";") > header.count(",") else ","
    reading = read_csv(
        path, known=KNOWN_COLUMNS, required=REQUIRED_COLUMNS, delimiter=delimiter, opened=handle
    )
    rows: list[RawRow] = []
    with reading as (records, _ignored):
        for line, cells in records:
            if len(rows) == max_rows:
                raise InputError(f"{path}: more than {max_rows:,} records (line {line})")
            rows.append(RawRow(line, None, cells))
    return iter(rows)


def _xlsx_rows(path: Path, handle: BinaryIO, max_rows: int) -> Iterator[RawRow]:
    try:
        with warnings.catch_warnings():
            # Unsupported extensions (slicers, some validations) are dropped with a warning; the
            # cells recon reads are unaffected.
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(handle, read_only=True, data_only=False)
    except _WORKBOOK_ERRORS as exc:
        where = _broken_part(handle) or _why(exc)
        raise InputError(f"{path}: a zip file but not an XLSX workbook ({where})") from None
    try:
        rows: list[RawRow] = []
        sheets = []
        for sheet in book.worksheets:
            try:
                found = _sheet_rows(cast(ReadOnlyWorksheet, sheet), path, max_rows)
            except _WORKBOOK_ERRORS as exc:
                raise InputError(
                    f"{path}: sheet {excerpt(sheet.title)} cannot be read ({_why(exc)})"
                ) from None
            if found is not None:
                sheets.append(sheet.title)
                rows.extend(found)
    finally:
        book.close()
    if not sheets:
        names = ", ".join(repr(s.title) for s in book.worksheets)
        raise InputError(
            f"{path}: no sheet has both an exception_id and a resolution column in its first row"
            f" ({len(book.worksheets)} sheets: {excerpt(names)})"
        )
    return iter(rows)


def _why(exc: BaseException) -> str:
    """A parser's error in a few words: the XML error it wraps if any, entity declarations named
    as such, the rest excerpted."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, DefusedXmlException | ParseError):
        cause = cause.__cause__ or cause.__context__
    exc = cause or exc
    if isinstance(exc, DefusedXmlException):
        return "XML entity declarations are refused"
    return f"{type(exc).__name__}: {excerpt(exc)}"


def _broken_part(handle: BinaryIO) -> str | None:
    """The first XML part that does not parse and why, to name it when openpyxl could not load
    the workbook (only then: the parts are parsed a second time; their sizes were checked)."""
    handle.seek(0)
    with zipfile.ZipFile(handle) as archive:
        for member in archive.infolist():
            if not member.filename.endswith((".xml", ".rels")):
                continue
            try:
                with archive.open(member) as part:
                    for _event, element in defused_iterparse(part):
                        element.clear()
            except _WORKBOOK_ERRORS as exc:
                return f"part {excerpt(member.filename)}: {_why(exc)}"
    return None


def _sheet_rows(sheet: ReadOnlyWorksheet, path: Path, max_rows: int) -> list[RawRow] | None:
    """The rows of one sheet, or ``None`` when it lacks the required columns."""
    sheet.reset_dimensions()  # a writer may have recorded them wrong
    lines = iter(sheet.rows)
    header = next(lines, ())
    index: dict[str, int] = {}
    for i, cell in enumerate(header):
        name = str(cell.value).strip().lower() if cell.value is not None else ""
        if name in KNOWN_COLUMNS:
            if name in index:
                return [RawRow(1, sheet.title, f"column {name!r} appears twice in the header")]
            index[name] = i
    if not all(name in index for name in REQUIRED_COLUMNS):
        return None
    rows = []
    for number, line in enumerate(lines, start=2):
        if number > max_rows:  # a row numbered far beyond the rows the file holds: gaps are rows
            raise InputError(
                f"{path}: sheet {excerpt(sheet.title)} has more than {max_rows:,} rows"
            )
        cells = {name: _cell(line[i]) if i < len(line) else None for name, i in index.items()}
        if any(value is not None for value in cells.values()):
            rows.append(RawRow(number, sheet.title, cells))
    return rows


def _cell(cell: object) -> Cell:
    value = getattr(cell, "value", None)
    kind = getattr(cell, "data_type", None)
    if kind == "f":  # openpyxl gives the formula's text (data_only=False), never a result
        return Unusable("a formula, not a value")
    if kind == "e":
        return Unusable(f"an error value ({excerpt(value)}), not a value")
    return cast(Cell, value)
