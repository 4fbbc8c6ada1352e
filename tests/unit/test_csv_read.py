"""Reading a CSV the importers share: a byte that is not UTF-8 is named by its own line."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.errors import InputError
from recon.ingest.csvread import read_csv


@pytest.mark.parametrize("bad_line", [2, 402, 5000])
def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path: Path, bad_line: int) -> None:
    """The text is decoded 8 KiB at a time: the reader's line count ran ahead of the byte."""
    lines = [b"exception_id,resolution"] + [b"E1-%d,acknowledge" % n for n in range(2, 6001)]
    lines[bad_line - 1] = lines[bad_line - 1].replace(b"acknowledge", b"caf\xe9")
    path = tmp_path / "windows-1252.csv"
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    columns = {"known": ["exception_id", "resolution"], "required": ["exception_id"]}
    with (
        pytest.raises(InputError, match=rf"line {bad_line}: the file is not UTF-8 text"),
        read_csv(path, **columns) as (records, _),
    ):
        list(records)
