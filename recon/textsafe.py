"""Text made safe for where it is shown: spreadsheets and terminals.

Whatever a person, the provider, a forged callback or an imported file put into a text field
reaches two kinds of reader, and each has its own way of running text as commands:

- **Spreadsheets** run a cell that starts a formula. Every CSV and XLSX recon writes (the report
  pack, ``recon export``, ``recon exceptions list --format csv``) passes its text cells through
  :func:`neutralise` (a column) or :func:`neutralise_text` (one cell); :func:`restore_text` takes
  recon's ``'`` off again when a file comes back (``recon exceptions apply``). The rule and its
  measurements: docs/decisions.md, "Formula neutralisation after separators".
- **Terminals** run control characters: ``ESC ] 0;… BEL`` retitles the window, ``ESC [2J`` clears
  it, ``ESC ]52`` writes the clipboard. Every line recon prints for people (tables, ``show``,
  ``exceptions history``, result and error lines) passes through :func:`terminal_text`, which
  writes each such character as its escape (``\\x1b``), so it is shown, never obeyed.

A neutral module: the report, the ingest and the operator commands all use it, so it belongs to
none of them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy only where a column is neutralised: the CLI's lines need none of it
    import numpy.typing as npt

    TextArray = npt.NDArray[Any]  # of StringDType

# Spreadsheets run a cell starting with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What a spreadsheet may split a CSV line on (its list separator is `;` in much of Europe, a
# program may read tabs, and a record ends at a line break), so a cell may start after any of them.
SEPARATORS = (",", ";", "\t", "\n", "\r")
# Some spreadsheets trim white space (any: a form feed, a no-break space) and quotes off a cell on
# import, so they do not hide a formula.
_QUOTES = "\"'"
_FORMULA_CHARS = "=+-@"
_FORMULA_AFTER_SEPARATOR = re.compile(r"""([,;\t\r\n])(?=[\s"']*[=+\-@])""")
# A NUL and a first character that may start a formula once trimmed: one of FORMULA_STARTS, a
# quote or any white space (``\s`` is ``str.isspace``'s set); NUL starts each cell of a column.
_LEAD_AFTER_NUL = re.compile(r"""\0[\s"'=+\-@]""")
# An id of letters, digits, `_`, `.` and `-` computes nothing harmful in a spreadsheet, even when
# it starts with `-`: no function call (no `(`), no DDE (no `|`), no range or other sheet or file
# (no `:`, `!`, `'`, `#`, `$`), no text; at most a number or #NAME? on screen. In id columns such a
# cell, or a list of such ids split by separators (candidate duplicates `a;b`), is written as it is,
# so it still matches the ledger and the provider's back office.
_PLAIN_IDS = re.compile(r"[A-Za-z0-9_.\-]*(?:[,;\t\r\n][A-Za-z0-9_.\-]*)*")


def neutralise(cells: TextArray, *, ids: bool = False) -> TextArray:
    """Text cells made inert for spreadsheets, wherever a separator could start a cell.

    The rule (docs/finance.md, "The report pack"): a cell whose first character is a tab or
    carriage return, or whose first character after white space and quotes is ``= + - @``, gets
    a leading ``'``; and inside a cell, a ``'`` goes right after every separator (``, ; tab CR
    LF``) that white space and quotes followed by ``= + - @`` come next, so a spreadsheet that
    splits there gets a cell starting with ``'``. With ``ids`` (id columns), ids of letters,
    digits, ``_ . -`` (also several, split by separators) stay as they are, even when one starts
    with ``-``.
    Only for text columns: amount columns are numbers and keep their minus sign.
    """
    import numpy as np

    # Python strings and one scan of the joined column: cheaper than numpy's per-character scans
    # (docs/decisions.md, "Formula neutralisation"), and few cells are candidates at all.
    texts: list[str] = cells.tolist()
    # NUL never reaches a report (the importer and models refuse it). The cells' first characters
    # are found in the joined column too (after a NUL, the first cell's too), not cell by cell.
    joined = "\0" + "\0".join(texts)
    hits = [m.start() for m in _LEAD_AFTER_NUL.finditer(joined)]
    if any(sep in joined for sep in SEPARATORS) and any(c in joined for c in _FORMULA_CHARS):
        hits += [m.start() for m in _FORMULA_AFTER_SEPARATOR.finditer(joined)]
    candidates: set[int] = set()
    if hits:
        lengths = np.strings.str_len(cells) + 1
        starts = np.cumsum(lengths) - lengths
        candidates.update((np.searchsorted(starts, hits, side="right") - 1).tolist())
    changed = False
    for i in sorted(candidates):
        safe = neutralise_text(texts[i], id_=ids)
        changed = changed or safe != texts[i]
        texts[i] = safe
    return np.asarray(texts, dtype=np.dtypes.StringDType()) if changed else cells


def neutralise_text(text: str, *, id_: bool = False) -> str:
    """One cell by the rule of :func:`neutralise` (for writers that take cells one by one)."""
    if id_ and _PLAIN_IDS.fullmatch(text):
        return text
    return _inert(_FORMULA_AFTER_SEPARATOR.sub(r"\1'", text))


def _trimmed(text: str) -> str:
    """``text`` as a spreadsheet that trims white space and quotes may read its start."""
    at = 0
    while at < len(text) and (text[at].isspace() or text[at] in _QUOTES):
        at += 1
    return text[at:]


def _inert(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula."""
    if text.startswith(("\t", "\r")) or _trimmed(text).startswith(tuple(_FORMULA_CHARS)):
        return "'" + text
    return text


_NEUTRALISED_AFTER_SEPARATOR = re.compile(r"""([,;\t\r\n])'(?=[\s"']*[=+\-@])""")


def restore_text(text: str) -> str:
    """The text :func:`neutralise_text` was given, from what it returned (for files sent back).

    ``restore_text(neutralise_text(t)) == t`` for every text but one starting with ``'`` and then
    a tab or carriage return: ``"'\\tx"`` is what both ``"\\tx"`` and itself neutralise to, and it
    reads back as ``"\\tx"``. Text recon did not write is returned unchanged unless it looks
    exactly like neutralised text.
    """
    rest = text[1:]
    if text.startswith("'") and (
        rest.startswith(("\t", "\r")) or _trimmed(rest).startswith(tuple(_FORMULA_CHARS))
    ):
        text = rest
    return _NEUTRALISED_AFTER_SEPARATOR.sub(r"\1", text)


# C0 controls, DEL and C1 controls (U+0080-U+009F: U+009B is a one-character CSI to terminals that
# read C1 codes), and the characters that reorder or hide text on screen (bidi embeddings,
# overrides and isolates; line and paragraph separators), shown as escapes.
_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0)]
_HIDDEN = [0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TERMINAL_ESCAPES = {
    **{c: f"\\x{c:02x}" for c in _CONTROLS},
    **{c: f"\\u{c:04x}" for c in _HIDDEN},
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
}


def terminal_text(text: str) -> str:
    """``text`` with every control character written as its escape (``ESC`` as ``\\x1b``, a line
    break as ``\\n``), so a terminal shows it instead of obeying it. Call it per line: a line
    break inside is escaped too."""
    return text.translate(_TERMINAL_ESCAPES)


def terminal_lines(text: str) -> str:
    """:func:`terminal_text` of each line of ``text`` (its line breaks kept), for messages made of
    several lines."""
    return "\n".join(terminal_text(line) for line in text.split("\n"))


def control_character(text: str) -> str | None:
    """The first control character in ``text`` (CR, LF, NUL, tab, DEL...), or ``None``."""
    return next((c for c in text if unicodedata.category(c) == "Cc"), None)


def one_line(text: str) -> str:
    """``text`` as a setting that is one line: ``ValueError`` naming a control character in it
    (a CR or LF would start another header, row or record)."""
    bad = control_character(text)
    if bad is not None:
        raise ValueError(f"holds a control character ({bad!r})")
    return text
