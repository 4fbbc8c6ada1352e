"""The journal's export files, rendered from stored lines: CSV, Xero's manual journals, SIE 4.

Renderers only (bytes in memory; :mod:`recon.report.journal_export` writes them). A batch's files
depend on nothing but its lines, its number and the options recorded with it, so the same batch
always renders to the same bytes (``recon journal export --batch N``).

- ``csv``: ``journal-batch-<N>.csv``, one row per line (:data:`CSV_COLUMNS`) in the configured
  dialect, written as the report pack's journal.csv is (:mod:`recon.report.csvpack`): the same
  cells, neutralised against formulas the same way; only ``batch`` is filled in.
- ``xero``: Xero's manual journal import template (:data:`XERO_COLUMNS`), one file set per
  currency (a manual journal is in the organisation's base currency), at most
  :data:`XERO_MAX_LINES` lines a file and an entry never split:
  ``journal-batch-<N>-xero-<CUR>-<k>.csv``.
  Lines with the same ``*Narration`` and ``*Date`` are one journal in Xero: the narration starts
  with the entry's ``journal_id``. ``*Amount`` is positive for a debit, negative for a credit.
- ``sie``: SIE 4 import files (type 4I), one per provider account and currency,
  ``journal-batch-<N>-<account>-<CUR>.si``: the header, then a ``#VER`` per entry (the account's
  series, the entry's number, its posting date, its ``journal_id``) with ``#TRANS`` lines summing
  to zero (debit positive). PC8: code page 437, CRLF line ends.
- the manifest, ``journal-batch-<N>-manifest.json``: the batch, its lines and entries, debit and
  credit totals per currency, each file's name, sha256 and size, and the options.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from recon.money import format_minor
from recon.reconcile.journal import JournalLine
from recon.reconcile.journal_check import by_entry, currency_totals
from recon.report.csvpack import DIALECTS, STANDARD, CsvDialect, journal_lines_csv
from recon.report.journal import journal_frame
from recon.report.tables import JOURNAL_COLUMNS
from recon.textsafe import neutralise_text

CSV_COLUMNS = JOURNAL_COLUMNS  # the pack's journal.csv columns

# Xero's manual journal import template, as "Download template file" gives it (an asterisk marks
# a column Xero requires).
XERO_COLUMNS = [
    "*Narration",
    "*Date",
    "Description",
    "*AccountCode",
    "*TaxRate",
    "*Amount",
    "TrackingName1",
    "TrackingOption1",
    "TrackingName2",
    "TrackingOption2",
]
XERO_MAX_LINES = 300  # lines Xero imports from one template file
SIE_ENCODING = "cp437"  # #FORMAT PC8: IBM PC 8-bit extended ASCII, code page 437
_SIE_END = "\r\n"


class JournalFormat(StrEnum):
    """The formats ``recon journal export`` writes."""

    CSV = "csv"
    XERO = "xero"
    SIE = "sie"


Files = list[tuple[str, bytes]]


def file_entry(name: str, content: bytes) -> dict[str, Any]:
    """A file as a batch records it: its name, sha256 and size in bytes."""
    return {"name": name, "sha256": hashlib.sha256(content).hexdigest(), "bytes": len(content)}


def manifest_name(batch: int) -> str:
    return f"journal-batch-{batch}-manifest.json"


def render_files(
    fmt: str, batch: int, lines: Sequence[JournalLine], options: Mapping[str, Any]
) -> Files:
    """Batch ``batch``'s files in format ``fmt`` (the manifest apart), from its lines and the
    options recorded with it."""
    match JournalFormat(fmt):
        case JournalFormat.CSV:
            dialect = DIALECTS[options["dialect"]]
            return [(f"journal-batch-{batch}.csv", csv_file(batch, lines, dialect))]
        case JournalFormat.XERO:
            return xero_files(
                batch,
                lines,
                date_format=options["date_format"],
                tax_rate=options["tax_rate"],
                lines_per_file=options["lines_per_file"],
            )
        case JournalFormat.SIE:
            return sie_files(
                batch,
                lines,
                series=options["series"],
                names=options["names"],
                program=(options["program"], options["version"]),
                generated=options["generated"],
            )


# --- csv -------------------------------------------------------------------------------------


def csv_file(batch: int, lines: Sequence[JournalLine], dialect: CsvDialect = STANDARD) -> bytes:
    """``journal-batch-<N>.csv``: one row per line, as the report pack's journal.csv writes them
    (:func:`recon.report.csvpack.journal_lines_csv`), each with its batch ``batch``."""
    frame = journal_frame(lines, [batch] * len(lines))
    return journal_lines_csv(frame, dialect=dialect)


# --- xero ------------------------------------------------------------------------------------


def narration(line: JournalLine) -> str:
    """An entry's text in a ledger: its ``journal_id`` first (the key a second import of the same
    entry shows up by), the event, and ``reversal`` for a reversal."""
    text = f"{line.journal_id} {line.event}"
    return f"{text} reversal" if line.reverses is not None else text


def _signed(line: JournalLine) -> str:
    return format_minor(line.debit_minor - line.credit_minor, line.currency)


def xero_files(
    batch: int,
    lines: Sequence[JournalLine],
    *,
    date_format: str,
    tax_rate: str,
    lines_per_file: int = XERO_MAX_LINES,
) -> Files:
    """Xero manual journal import files: per currency, files of at most ``lines_per_file`` lines,
    each entry whole in one file."""
    by_currency: dict[str, list[JournalLine]] = {}
    for line in lines:
        by_currency.setdefault(line.currency, []).append(line)
    files: Files = []
    for currency in sorted(by_currency):
        parts: list[list[JournalLine]] = [[]]
        for entry in by_entry(by_currency[currency]).values():
            if parts[-1] and len(parts[-1]) + len(entry) > lines_per_file:
                parts.append([])
            parts[-1].extend(entry)
        for k, part in enumerate(parts, 1):
            name = f"journal-batch-{batch}-xero-{currency}-{k}.csv"
            files.append((name, _xero_csv(part, date_format, tax_rate)))
    return files


def _csv_cell(text: str, separator: str) -> str:
    """One cell quoted as :func:`recon.report.fmt.csv_quote` quotes a column."""
    if any(char in text for char in (separator, '"', "\n", "\r")):
        return '"' + text.replace('"', '""') + '"'
    return text


def _xero_csv(lines: Iterable[JournalLine], date_format: str, tax_rate: str) -> bytes:
    rows = [",".join(XERO_COLUMNS)]
    for line in lines:
        text = [
            narration(line),
            line.posting_date.strftime(date_format),
            f"{line.role} {line.transaction_id}",
            line.account,
            tax_rate,
        ]
        # The account code is an id: a plain one stays bare, as Xero must match it exactly.
        cells = [_csv_cell(neutralise_text(cell, id_=i == 3), ",") for i, cell in enumerate(text)]
        rows.append(",".join([*cells, _signed(line), "", "", "", ""]))
    return ("\r\n".join(rows) + "\r\n").encode("utf-8")


# --- sie -------------------------------------------------------------------------------------


def _pc8(text: str) -> str:
    """``text`` with each character code page 437 lacks spelled without its accents (NFKD), or
    as ``?``."""
    out = []
    for char in text:
        try:
            char.encode(SIE_ENCODING)
        except UnicodeEncodeError:
            plain = "".join(
                c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)
            )
            try:
                plain.encode(SIE_ENCODING)
            except UnicodeEncodeError:
                plain = "?"
            char = plain or "?"
        out.append(char)
    return "".join(out)


def sie_field(text: str) -> str:
    """One SIE field: bare when it is a plain word, else in quotes, a ``"`` written ``\\"``.

    Control characters are dropped (SIE forbids them); a backslash becomes ``/``, so that none
    can escape the closing quote in a reader that takes it for an escape.
    """
    clean = "".join(c for c in text if c.isprintable()).replace("\\", "/")
    if clean and not any(c in clean for c in ' "{}\t'):
        return _pc8(clean)
    return '"' + _pc8(clean).replace('"', '\\"') + '"'


def sie_files(
    batch: int,
    lines: Sequence[JournalLine],
    *,
    series: Mapping[str, str],
    names: Mapping[str, str],
    program: tuple[str, str],
    generated: str,
) -> Files:
    """SIE 4 import files (type 4I), one per provider account and currency, in code page 437."""
    groups: dict[tuple[str, str], list[JournalLine]] = {}
    for line in lines:
        groups.setdefault((line.provider_account, line.currency), []).append(line)
    files: Files = []
    for account, currency in sorted(groups):
        head = [
            "#FLAGGA 0",
            f"#PROGRAM {sie_field(program[0])} {sie_field(program[1])}",
            "#FORMAT PC8",
            f"#GEN {generated}",
            "#SIETYP 4",
            f"#FNAMN {sie_field(names.get(account, account))}",
            f"#VALUTA {currency}",
        ]
        body = []
        for entry in by_entry(groups[(account, currency)]).values():
            first = entry[0]
            body.append(
                f"#VER {sie_field(series[account])} {first.number} "
                f"{first.posting_date:%Y%m%d} {sie_field(narration(first))}"
            )
            body.append("{")
            body.extend(f"#TRANS {sie_field(line.account)} {{}} {_signed(line)}" for line in entry)
            body.append("}")
        text = _SIE_END.join([*head, *body]) + _SIE_END
        name = f"journal-batch-{batch}-{account}-{currency}.si"
        files.append((name, text.encode(SIE_ENCODING)))
    return files


# --- the manifest ----------------------------------------------------------------------------


def manifest_file(
    *,
    batch: int,
    fmt: str,
    provider_account: str | None,
    created_at: datetime,
    lines: Sequence[JournalLine],
    files: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
) -> bytes:
    """``journal-batch-<N>-manifest.json``: what the batch holds, to check an import against."""
    totals = currency_totals(lines)
    document = {
        "batch": batch,
        "format": fmt,
        "provider_account": provider_account,
        "created_at": created_at.isoformat(),
        "lines": len(lines),
        "entries": len({line.journal_id for line in lines}),
        "totals": [
            {
                "currency": currency,
                "lines": total.lines,
                "debit": format_minor(total.debit_minor, currency),
                "credit": format_minor(total.credit_minor, currency),
            }
            for currency, total in sorted(totals.items())
        ],
        "files": list(files),
        "options": dict(options),
    }
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
