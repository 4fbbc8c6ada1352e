"""Reading a CSV file of records: one reader for ``recon import payouts`` and ``recon sandbox pay``.

A file is UTF-8 (a byte-order mark is allowed), comma-separated, with a header line first. Column
names are matched without case or surrounding spaces; a required column that is missing, or a known
one that appears twice, refuses the file before any record is read (with a hint when the header
looks separated by something other than commas). Each record is named by its FIRST physical line,
since a quoted field may span lines. A record with the wrong number of fields is a problem of that
record, for the caller to collect; broken quoting, bytes that are not UTF-8 or a line longer than
:data:`MAX_LINE_CHARS` stop the reading. Only regular files are read (a FIFO would block), and an
error quotes at most an excerpt of the input (:func:`recon.ingest.sentfile.excerpt`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from recon.errors import InputError
from recon.ingest.sentfile import excerpt, open_regular

# A physical line's longest (its ending included). A record's fields are all in memory at once, so
# a header of a million empty columns would take gigabytes (docs/reliability.md).
MAX_LINE_CHARS = 1024 * 1024

# Separators a spreadsheet may have used instead of commas, and how a message names them.
_OTHER_SEPARATORS = {";": "semicolon (;)", "\t": "tab", "|": "vertical bar (|)"}

# A record: its first physical line, and its known cells or why it could not be split into them.
Record = tuple[int, Mapping[str, str] | str]


def column_index(
    columns: Sequence[str],
    source: str,
    *,
    known: Sequence[str],
    required: Sequence[str],
    hint: str = "",
) -> tuple[dict[str, int], list[str]]:
    """Index of each known column, and the names of the columns that are not known (ignored)."""
    index: dict[str, int] = {}
    ignored: list[str] = []
    for i, column in enumerate(columns):
        name = column.strip().lower()
        if name in known:
            if name in index:
                raise InputError(f"{source}: column {name!r} appears twice in the header")
            index[name] = i
        else:
            ignored.append(column)
    missing = [c for c in required if c not in index]
    if missing:
        found = f"{len(columns):,} columns, from {excerpt(', '.join(columns))}" if columns else ""
        raise InputError(
            f"{source}: missing required column(s) {', '.join(missing)}; "
            f"found {found or 'no columns'}{hint}"
        )
    return index, ignored


def separator_hint(header: Sequence[str], required: Sequence[str]) -> str:
    """A hint when a header that lacks columns looks separated by something other than commas."""
    text = ",".join(header[:1000])
    counts = {sep: text.count(sep) for sep in _OTHER_SEPARATORS}
    separator = max(counts, key=lambda sep: counts[sep])
    if counts[separator] < len(required) - 1:
        return ""
    return (
        f" (the file seems to be separated by {_OTHER_SEPARATORS[separator]}; recon reads "
        "comma-separated UTF-8 files: export or save it as CSV with ',' between fields)"
    )


@contextmanager
def read_csv(
    path: Path,
    *,
    known: Sequence[str],
    required: Sequence[str],
    delimiter: str = ",",
    opened: BinaryIO | None = None,
) -> Iterator[tuple[Iterator[Record], list[str]]]:
    """The records of the CSV file at ``path`` (known columns only) and its ignored columns.

    The file stays open inside the block, so the records are read as they are consumed.
    ``delimiter`` is ``,`` for the imports; a reader that detects it may pass another. ``opened``:
    the file already open (and checked) by the caller, read from its start and closed here.
    """
    binary = opened if opened is not None else open_regular(path)
    binary.seek(0)
    with io.TextIOWrapper(binary, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(_bounded_lines(handle, str(path)), delimiter=delimiter, strict=True)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(f"{path}: the file is empty (expected a header line)") from None
        except csv.Error as exc:
            raise InputError(f"{path}: line 1: unreadable header: {exc}") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}: {_not_utf8(binary)}") from None
        hint = separator_hint(header, required) if delimiter == "," else ""
        index, ignored = column_index(header, str(path), known=known, required=required, hint=hint)
        records = _records(reader, index, len(header), str(path))
        try:
            yield records, ignored
        except UnicodeDecodeError:  # raised where the records are read, inside the block
            raise InputError(f"{path}: {_not_utf8(binary)}") from None


def _not_utf8(binary: BinaryIO) -> str:
    """Where the file stops being UTF-8: the text is decoded in blocks, so the reader's own line
    count is ahead of the byte; the bytes are read again to name its line."""
    binary.seek(0)
    data = binary.read()
    try:
        data.decode("utf-8")  # a byte-order mark is UTF-8 too: offsets count from the file's start
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return f"line {line}: the file is not UTF-8 text"
    return "the file is not UTF-8 text"


def _bounded_lines(handle: TextIO, source: str) -> Iterator[str]:
    """The physical lines of ``handle``, refusing one longer than :data:`MAX_LINE_CHARS`."""
    number = 0
    while line := handle.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise InputError(
                f"{source}: line {number} is longer than {MAX_LINE_CHARS:,} characters"
            )
        yield line


def _records(reader: Any, index: Mapping[str, int], width: int, source: str) -> Iterator[Record]:
    """(first physical line, cells or why not) of each record; a quoted field may span lines."""
    previous_end = reader.line_num
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            first, last = previous_end + 1, reader.line_num
            lines = f"line {first}" if last <= first else f"lines {first}-{last}"
            raise InputError(f"{source}: {lines}: malformed CSV: {exc}") from None
        line, previous_end = previous_end + 1, reader.line_num
        if not fields:
            continue  # a blank line
        if len(fields) != width:
            yield line, f"has {len(fields)} fields, the header has {width}"
            continue
        yield line, {name: fields[i] for name, i in index.items()}
