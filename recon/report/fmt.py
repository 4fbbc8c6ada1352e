"""Vectorised text for report cells: exact amounts from minor units, local times, safe CSV text.

A million rows must format in about a second, so nothing here loops over rows in Python: amounts are
split into integer and fractional parts with numpy integer arithmetic and joined with numpy's string
ufuncs; times are shifted to local wall time once and printed with ``np.datetime_as_string``. The
functions return numpy arrays of ``StringDType`` (``.tolist()`` gives Python strings).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from recon.money import from_minor, minor_digits

STR = np.dtypes.StringDType()
TextArray = npt.NDArray[Any]  # of StringDType
# Spreadsheets run a cell starting with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What a spreadsheet may split a CSV line on (its list separator is `;` in much of Europe, a
# program may read tabs, and a record ends at a line break), so a cell may start after any of them.
SEPARATORS = (",", ";", "\t", "\n", "\r")
# Some spreadsheets trim spaces and quotes off a cell on import, so they do not hide a formula.
_BLANKS = " \t\r\n\"'"
_FORMULA_CHARS = "=+-@"
_LEAD_CANDIDATES = frozenset((*FORMULA_STARTS, *_BLANKS))
_FORMULA_AFTER_SEPARATOR = re.compile(r"""([,;\t\r\n])(?=[ \t\r\n"']*[=+\-@])""")
# An id of letters, digits, `_`, `.` and `-` computes nothing harmful in a spreadsheet, even when
# it starts with `-`: no function call (no `(`), no DDE (no `|`), no range or other sheet or file
# (no `:`, `!`, `'`, `#`, `$`), no text; at most a number or #NAME? on screen. In id columns such a
# cell, or a list of such ids split by separators (candidate duplicates `a;b`), is written as it is,
# so it still matches the ledger and the provider's back office (issue 17).
_PLAIN_IDS = re.compile(r"[A-Za-z0-9_.\-]*(?:[,;\t\r\n][A-Za-z0-9_.\-]*)*")
_QUOTE_CHARS = (",", '"', "\n", "\r")


def text_array(values: pd.Series) -> TextArray:
    """Any column as text, ``NA``/``None`` as ``""``."""
    cells = values.astype(object).where(values.notna(), "").to_numpy(dtype=object)
    return np.asarray(cells.astype(STR), dtype=STR)


def amounts_text(minor: pd.Series, currency: pd.Series) -> TextArray:
    """Minor units as exact decimal text with the currency's digits (``10010`` EUR -> ``100.10``).

    ``NA`` becomes ``""``. Integer arithmetic only: no float and no ``Decimal`` per row.
    """
    codes = currency.astype(object).where(currency.notna(), "")
    digit_of = {str(c): minor_digits(str(c)) for c in pd.unique(codes)}
    digits = codes.map(digit_of).to_numpy(dtype=np.int64)
    missing = minor.isna().to_numpy(dtype=bool)
    values = minor.astype("Int64").to_numpy(dtype=np.int64, na_value=0)
    scale = np.power(np.int64(10), digits)
    magnitude = np.abs(values)
    whole = (magnitude // scale).astype(STR)
    fraction = np.strings.zfill((magnitude % scale).astype(STR), digits)
    sign = np.where(values < 0, "-", "").astype(STR)
    text = np.where(digits == 0, sign + whole, sign + whole + "." + fraction)
    return np.asarray(np.where(missing, "", text), dtype=STR)


def local_times_text(times: pd.Series, timezone: str) -> TextArray:
    """Aware timestamps as ISO 8601 local time with offset (``2026-11-20T09:15:00+01:00``).

    Converted once, vectorised; ``NaT`` becomes ``""``.
    """
    aware = pd.to_datetime(times, utc=True)
    wall = aware.dt.tz_convert(timezone).dt.tz_localize(None).to_numpy(dtype="datetime64[s]")
    utc = aware.dt.tz_localize(None).to_numpy(dtype="datetime64[s]")
    missing = aware.isna().to_numpy(dtype=bool)
    offset_minutes = np.where(missing, 0, (wall - utc).astype(np.int64) // 60)
    uniq, inverse = np.unique(offset_minutes, return_inverse=True)
    offsets = np.array([_offset_text(int(m)) for m in uniq], dtype="U6")[inverse]
    text = np.strings.add(np.datetime_as_string(wall, unit="s"), offsets)
    return np.asarray(np.where(missing, "", text), dtype=STR)


def _offset_text(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


def neutralise(cells: TextArray, *, ids: bool = False) -> TextArray:
    """Text cells made inert for spreadsheets, wherever a separator could start a cell.

    The rule (README, "Reports"): a cell whose first character is a tab or carriage return, or
    whose first character after spaces and quotes is ``= + - @``, gets a leading ``'``; and inside
    a cell, a ``'`` goes right after every separator (``, ; tab CR LF``) that spaces and quotes
    followed by ``= + - @`` come next, so a spreadsheet that splits there gets a cell starting
    with ``'``. With ``ids`` (id columns), ids of letters, digits, ``_ . -`` (also several,
    split by separators) stay as they are, even when one starts with ``-``.
    Only for text columns: amount columns are numbers and keep their minus sign.
    """
    # Python strings and one scan of the joined column: cheaper than numpy's per-character scans
    # (~0.3 s per million cells each), and few cells are candidates at all.
    texts: list[str] = cells.tolist()
    candidates = {i for i, text in enumerate(texts) if text[:1] in _LEAD_CANDIDATES}
    joined = "\0".join(texts)  # NUL never reaches a report (the importer and models refuse it)
    if any(sep in joined for sep in SEPARATORS) and any(c in joined for c in _FORMULA_CHARS):
        hits = [m.start() for m in _FORMULA_AFTER_SEPARATOR.finditer(joined)]
        if hits:
            lengths = np.strings.str_len(cells) + 1
            starts = np.cumsum(lengths) - lengths
            candidates.update((np.searchsorted(starts, hits, side="right") - 1).tolist())
    changed = False
    for i in sorted(candidates):
        safe = neutralise_text(texts[i], id_=ids)
        changed = changed or safe != texts[i]
        texts[i] = safe
    return np.asarray(texts, dtype=STR) if changed else cells


def neutralise_text(text: str, *, id_: bool = False) -> str:
    """One cell by the rule of :func:`neutralise` (for writers that take cells one by one)."""
    if id_ and _PLAIN_IDS.fullmatch(text):
        return text
    return _inert(_FORMULA_AFTER_SEPARATOR.sub(r"\1'", text))


def _inert(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula."""
    if text.startswith(("\t", "\r")) or text.lstrip(_BLANKS).startswith(tuple(_FORMULA_CHARS)):
        return "'" + text
    return text


_NEUTRALISED_AFTER_SEPARATOR = re.compile(r"""([,;\t\r\n])'(?=[ \t\r\n"']*[=+\-@])""")


def restore_text(text: str) -> str:
    """The text :func:`neutralise_text` was given, from what it returned (for files sent back).

    ``restore_text(neutralise_text(t)) == t`` for every text but one starting with ``'`` and then
    a tab or carriage return: ``"'\\tx"`` is what both ``"\\tx"`` and itself neutralise to, and it
    reads back as ``"\\tx"``. Text recon did not write is returned unchanged unless it looks
    exactly like neutralised text.
    """
    rest = text[1:]
    if text.startswith("'") and (
        rest.startswith(("\t", "\r")) or rest.lstrip(_BLANKS).startswith(tuple(_FORMULA_CHARS))
    ):
        text = rest
    return _NEUTRALISED_AFTER_SEPARATOR.sub(r"\1", text)


def csv_quote(cells: TextArray, separator: str = ",") -> TextArray:
    """RFC 4180 quoting: cells with the separator, a quote or a line break are quoted, quotes
    doubled."""
    quote_chars = (separator, *_QUOTE_CHARS[1:])
    # One scan of the whole column first: most columns (ids, codes, dates) need no quoting at all.
    joined = "".join(cells.tolist())
    if not any(char in joined for char in quote_chars):
        return cells
    needs = np.zeros(len(cells), dtype=bool)
    for char in quote_chars:
        needs |= np.strings.find(cells, char) >= 0
    quoted = '"' + np.strings.replace(cells, '"', '""') + '"'
    return np.asarray(np.where(needs, quoted, cells), dtype=STR)


def money(minor: int | None, currency: str) -> str:
    """One amount for people: thousands separators, the currency's digits (``1,234.50``)."""
    if minor is None:
        return ""
    value: Decimal = from_minor(minor, currency)
    return f"{value:,}"
