"""Workbooks and CSVs a person could send back to `recon exceptions apply`, hostile ones included.

Workbooks are written part by part with ``zipfile`` (the smallest set openpyxl reads), so a test can
put any bytes in a sheet or the shared-strings table.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006"
_TYPES = (
    f'<?xml version="1.0"?><Types xmlns="{_PKG}/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    f'<?xml version="1.0"?><Relationships xmlns="{_PKG}/relationships">'
    f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK = (
    f'<?xml version="1.0"?><workbook xmlns="{MAIN}" xmlns:r="{_REL}">'
    '<sheets><sheet name="Exceptions" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    f'<?xml version="1.0"?><Relationships xmlns="{_PKG}/relationships">'
    f'<Relationship Id="rId1" Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
    "</Relationships>"
)
SHEET_START = f'<?xml version="1.0"?><worksheet xmlns="{MAIN}"><sheetData>'
SHEET_END = "</sheetData></worksheet>"


def row(*values: str) -> str:
    """One sheet row of inline strings (no ``r`` attributes: rows and cells follow in order)."""
    cells = "".join(f'<c t="inlineStr"><is><t>{v}</t></is></c>' for v in values)
    return f"<row>{cells}</row>"


HEADER = row("exception_id", "resolution")


def workbook(
    path: Path,
    sheet: str | bytes = SHEET_START + HEADER + row("E1-1", "resolve") + SHEET_END,
    *,
    shared_strings: str | bytes = f'<?xml version="1.0"?><sst xmlns="{MAIN}"/>',
) -> Path:
    """A workbook of one sheet, ``Exceptions``, whose XML is ``sheet``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _TYPES)
        archive.writestr("_rels/.rels", _ROOT_RELS)
        archive.writestr("xl/workbook.xml", _WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        archive.writestr("xl/sharedStrings.xml", shared_strings)
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
    return path


def _streamed(path: Path, part: str, start: bytes, unit: bytes, count: int, end: bytes) -> Path:
    """The workbook with ``part`` replaced by ``start``, ``count`` times ``unit``, then ``end``,
    written a megabyte at a time (a bomb is never whole in this process's memory)."""
    workbook(path)
    parts = {}
    with zipfile.ZipFile(path) as old:
        parts = {name: old.read(name) for name in old.namelist() if name != part}
    block = unit * max(1, (1 << 20) // len(unit))
    per_block = len(block) // len(unit)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
        with archive.open(part, "w", force_zip64=True) as out:
            out.write(start)
            for _ in range(count // per_block):
                out.write(block)
            out.write(unit * (count % per_block) + end)
    return path


def rows_bomb(path: Path, rows: int) -> Path:
    """A sheet of ``rows`` identical filled rows: 96 bytes each inflated, about 1000:1 zipped."""
    start = (SHEET_START + HEADER).encode()
    return _streamed(
        path, "xl/worksheets/sheet1.xml", start, row("E1-1", "resolve").encode(), rows,
        SHEET_END.encode(),
    )  # fmt: skip


def strings_bomb(path: Path, strings: int) -> Path:
    """A shared-strings table of ``strings`` two-letter strings (18 bytes each inflated)."""
    start = f'<?xml version="1.0"?><sst xmlns="{MAIN}">'.encode()
    return _streamed(path, "xl/sharedStrings.xml", start, b"<si><t>ab</t></si>", strings, b"</sst>")


def with_doctype(path: Path, declarations: str, cell: str) -> Path:
    """A workbook whose sheet declares ``declarations`` in a DOCTYPE and has ``cell`` as an id."""
    sheet = (
        f'<?xml version="1.0"?><!DOCTYPE worksheet [{declarations}]>'
        f'<worksheet xmlns="{MAIN}"><sheetData>{HEADER}{row(cell, "resolve")}{SHEET_END}'
    )
    return workbook(path, sheet)


def billion_laughs(path: Path) -> Path:
    """The classic: ten entities, each ten of the one before, 10**9 copies of ``lol``."""
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    ]
    return with_doctype(path, "".join(entities), "&lol9;")


def entity_chain(path: Path, depth: int) -> Path:
    """Entities each naming the one before, ``depth`` deep (an expat recursion per level)."""
    entities = ['<!ENTITY e0 "x">'] + [f'<!ENTITY e{i} "&e{i - 1};">' for i in range(1, depth)]
    return with_doctype(path, "".join(entities), f"&e{depth - 1};")


def undefined_entity(path: Path) -> Path:
    """A cell naming an entity nothing declares."""
    return workbook(path, SHEET_START + HEADER + row("&nope;", "resolve") + SHEET_END)


def truncated_sheet(path: Path) -> Path:
    """A sheet whose XML stops in the middle of a row (the zip itself is whole)."""
    whole = SHEET_START + HEADER + row("E1-1", "resolve") * 50 + SHEET_END
    return workbook(path, whole[: len(whole) // 2])


def lying_sizes(path: Path, declared: int) -> Path:
    """A rows bomb whose central directory declares ``declared`` bytes for the sheet."""
    workbook(path, SHEET_START + HEADER + row("E1-1", "resolve") * 20_000 + SHEET_END)
    data = bytearray(path.read_bytes())
    name = b"xl/worksheets/sheet1.xml"
    for signature, size_at in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        at = 0
        while (at := data.find(signature, at)) >= 0:
            name_at = at + (46 if signature == b"PK\x01\x02" else 30)
            if data[name_at : name_at + len(name)] == name:
                data[at + size_at : at + size_at + 4] = declared.to_bytes(4, "little")
            at += 4
    path.write_bytes(bytes(data))
    return path
