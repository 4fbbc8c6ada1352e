"""The file of ``recon exceptions apply FILE``: resolutions a person filled in, read and checked.

Pure file reading and file-level checks, no database (the caller checks the ids against the store
and applies the rows, all or none). :mod:`recon.ingest.resolution_file` reads the file's cells;
this module checks each row. The file is a CSV or an XLSX workbook, told apart by content:

- XLSX (a zip, ``PK``): every sheet with both an ``exception_id`` and a ``resolution`` column in its
  first row is read, so the workbook recon mails (Needs action, Acknowledged, Exceptions) can come
  back as it is. Cells are read as stored, never evaluated (openpyxl, ``read_only``): a formula in a
  column recon reads is a problem of its row. Row numbers are the sheet's (the header is row 1).
- CSV: UTF-8 text, a byte-order mark allowed, separated by ``,`` or ``;`` (whichever the header
  line holds more of). Row numbers are the line a record starts on (the header is line 1).

Columns are matched without case or surrounding spaces: ``exception_id`` and ``resolution`` are
required, ``note``, ``by`` and ``until`` optional, any other is ignored; ``note`` and ``by`` are
held to the bounds of :mod:`recon.fields` (length, no control characters). A row whose resolution is
empty is skipped (its other cells are not read). A resolution is one of :data:`ACTIONS` (any case);
``until`` (an Excel date, ``YYYY-MM-DD`` or an ISO date-time) is required by ``snooze``, refused
with the others, and must be after ``today``. Text recon neutralised against formulas (a leading
``'``, :func:`recon.textsafe.neutralise_text`) reads back as the original.

What is read is bounded before it is parsed (:mod:`recon.ingest.sentfile`): only a regular file,
not through a symbolic link; at most ``max_bytes`` (``RECON_APPLY_MAX_BYTES``) on disk and, for a
workbook, inflated; at most :data:`~recon.ingest.sentfile.MAX_ROWS` rows (records, or rows and
shared strings); workbook XML without entity declarations (``defusedxml``). A file beyond them, or
one that cannot be parsed, is refused with one line naming it (and the sheet where there is one);
a quoted cell is an excerpt.

The same exception on several rows (it is on Needs action and on Exceptions) counts once when the
rows agree, and is a problem naming both rows when they do not. Every problem is collected with its
row and column, and raised together as one :class:`~recon.errors.InputError`: the caller gets every
row or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Literal, cast

from recon.constants import PERSON_ACTIONS
from recon.errors import InputError
from recon.fields import clean_note, field_problems
from recon.ingest.allornothing import Problems
from recon.ingest.resolution_file import Cell, RawRow, Unusable, raw_rows
from recon.ingest.sentfile import MAX_ROWS, excerpt
from recon.settings import DEFAULT_APPLY_MAX_BYTES
from recon.textsafe import restore_text

Action = Literal["acknowledge", "resolve", "snooze", "reopen"]
ACTIONS = cast(tuple[Action, ...], tuple(a.value for a in PERSON_ACTIONS))
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class ResolutionRow:
    """One resolution to apply, and where it was read."""

    row: int  # the row number a person sees (CSV line number / XLSX row number, header = 1)
    sheet: str | None  # XLSX sheet name, None for CSV
    exception_id: str
    action: Action
    note: str | None
    by: str | None
    until: date | None

    @property
    def where(self) -> str:
        """``line 4`` in a CSV, ``sheet 'Exceptions' row 4`` in a workbook."""
        return _where(self.sheet, self.row)


def read_resolutions(
    path: Path, *, today: date, max_bytes: int = DEFAULT_APPLY_MAX_BYTES, max_rows: int = MAX_ROWS
) -> list[ResolutionRow]:
    """Every resolution in the CSV or XLSX file at ``path``, in file order, each exception once.

    :class:`~recon.errors.InputError` with every problem (its row and column) if there is any;
    one line, before any row is read, for a file beyond ``max_bytes`` or ``max_rows``.
    """
    source = str(path)
    problems = Problems(source, outcome="nothing was applied")
    first: dict[str, ResolutionRow] = {}  # by exception_id, in file order
    try:
        raws = raw_rows(path, max_bytes=max_bytes, max_rows=max_rows)
    except InputError as exc:  # one line: the file as a whole is refused
        raise InputError(f"{exc}; nothing was applied") from None
    for raw in raws:
        if isinstance(raw.cells, str):
            problems.add(_where(raw.sheet, raw.row), [raw.cells])
            continue
        row, errors = _row(raw, raw.cells, today)
        if errors:
            problems.add(_where(raw.sheet, raw.row), errors)
        if row is None:
            continue
        earlier = first.get(row.exception_id)
        if earlier is None:
            first[row.exception_id] = row
            continue
        merged = _merged(earlier, row)
        if merged is None:
            problems.add(
                row.where,
                [
                    f"exception_id {excerpt(row.exception_id)} is also on {earlier.where} with"
                    " another resolution, note, by or until"
                ],
            )
        else:
            first[row.exception_id] = merged
    if problems:
        raise problems.error()
    return list(first.values())


def _where(sheet: str | None, row: int) -> str:
    return f"line {row}" if sheet is None else f"sheet {excerpt(sheet)} row {row}"


def _merged(a: ResolutionRow, b: ResolutionRow) -> ResolutionRow | None:
    """One row for two rows of one exception that agree (a note or by on one of them only is
    taken), or ``None`` when they disagree."""
    if (a.action, a.until) != (b.action, b.until):
        return None
    if None not in (a.note, b.note) and a.note != b.note:
        return None
    if None not in (a.by, b.by) and a.by != b.by:
        return None
    return replace(a, note=a.note if a.note is not None else b.note, by=a.by or b.by)


# --- one row ----------------------------------------------------------------------------------


def _row(
    raw: RawRow, cells: Mapping[str, Cell], today: date
) -> tuple[ResolutionRow | None, list[str]]:
    """The resolution of one row (``None`` if skipped or wrong) and its problems."""
    unusable = {name: value for name, value in cells.items() if isinstance(value, Unusable)}
    if unusable:
        return None, [f"{name} is {value.why}" for name, value in unusable.items()]
    resolution = _text(cells.get("resolution"))
    if resolution is None:
        return None, []
    problems: list[str] = []
    action = resolution.lower()
    if action not in ACTIONS:
        problems.append(
            f"resolution {excerpt(resolution)} is not one of {', '.join(ACTIONS)}"
            " (or empty to skip)"
        )
    exception_id = _text(cells.get("exception_id"))
    if exception_id is None:
        problems.append("exception_id is empty")
    until, until_problem = _until(cells.get("until"))
    if until_problem:
        problems.append(until_problem)
    elif action == "snooze" and until is None:
        problems.append("until is empty: snooze needs the date it ends (YYYY-MM-DD)")
    elif action == "snooze" and until is not None and until <= today:
        problems.append(f"until {until.isoformat()} is in the past (today is {today.isoformat()})")
    # An until on another action is the case's (the mailed files show a snooze's end): the core,
    # which knows the case, refuses any other date.
    note = clean_note(_text(cells.get("note"), strip=False))
    by = _text(cells.get("by"))
    problems += field_problems(note, by)
    if problems or exception_id is None:
        return None, problems
    row = ResolutionRow(
        row=raw.row,
        sheet=raw.sheet,
        exception_id=exception_id,
        action=cast(Action, action),
        note=note,
        by=by,
        until=until,
    )
    return row, []


def _text(value: Cell, *, strip: bool = True) -> str | None:
    """A cell as text (recon's neutralising ``'`` taken off), ``None`` when empty."""
    if value is None or isinstance(value, Unusable):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an id typed as a number comes back from Excel as 123.0
    text = value.isoformat() if isinstance(value, date) else str(value)
    if not text.strip():
        return None
    return restore_text(text.strip() if strip else text)


def _until(value: Cell) -> tuple[date | None, str | None]:
    """The date of an ``until`` cell, or why it is not one."""
    if value is None or isinstance(value, Unusable):
        return None, None
    if isinstance(value, datetime):
        return value.date(), None
    if isinstance(value, date):
        return value, None
    text = str(value).strip()
    if not text:
        return None, None
    if isinstance(value, str):
        try:
            if _ISO_DATE.fullmatch(text):
                return date.fromisoformat(text), None
            if _ISO_DATE.match(text):
                return datetime.fromisoformat(text).date(), None
        except ValueError:
            pass
    return None, f"until {excerpt(text)} is not a date (YYYY-MM-DD)"
