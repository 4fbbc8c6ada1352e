"""How report.xlsx's tables sit on screen and on paper: order, widths, wrapping, formats, printing.

- The exception sheets put what a person reads and fills in first: ``exception_id``, the payout
  (``transaction_id``) and the finding (``exception``), then ``resolution``, ``note``, ``by``
  (who decided: the sheets' own column) and ``until``, then the other columns in exceptions.csv's
  order. Only the sheets change: the CSV
  keeps its contract order, and ``recon exceptions apply`` reads either by column name
  (:mod:`recon.ingest.resolutions`).
- A column is as wide as its widest cell and its header, up to :data:`TEXT_WIDTH` characters; a
  longer text (an action, a detail, a list of ids) wraps inside the column instead of widening
  it. The columns a person types into have a width to type in (:data:`ROOM`) and wrap too.
- A date or date-time column is as wide as its format, so no date shows as ``###``.
- Printed: landscape, the header row on every page, narrow margins. The exception and payout
  sheets are fitted to :data:`PAGES_WIDE` pages wide (at one page wide their text is too small to
  read); the narrow sheets (Summary, Returns) to one.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import pandas as pd
import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from recon.money import minor_digits
from recon.report.tables import Amounts, Dates, Times

# What the exception sheets show first: the id, the payout and the finding, then the cells to fill.
LEADING = ("exception_id", "transaction_id", "exception")
FILL_IN = ("resolution", "note", "by", "until")
# Fill-in columns of the sheets alone (exceptions.csv keeps its contract): who decided, which
# ``recon exceptions apply`` records beside who ran it.
SHEET_ONLY = ("by",)
TEXT_WIDTH = 40  # characters: longer text wraps in its column (an action in three to five lines)
# Columns a person fills in: wide enough to type into, whatever they hold tonight.
ROOM = {"resolution": 13, "note": 24, "by": 12, "until": 12, "owner": 12}
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
PAGES_WIDE = 2  # the wide sheets, printed: a row takes two pages side by side
_NARROW = frozenset({"Summary", "Returns"})


def exception_sheet_order(csv_order: Sequence[str]) -> list[str]:
    """An exception sheet's columns: :data:`LEADING`, :data:`FILL_IN`, then the rest of
    ``csv_order`` (exceptions.csv's columns, plus ``age`` on Acknowledged) in its order."""
    first = [*LEADING, *FILL_IN]
    missing = [name for name in first if name not in csv_order and name not in SHEET_ONLY]
    if missing:
        raise ValueError(f"exception columns {missing} are not in {list(csv_order)}")
    return [*first, *(name for name in csv_order if name not in first)]


def column_width(
    name: str, column: pd.Series | Amounts | Times | Dates, dates: frozenset[str]
) -> tuple[int, bool]:
    """Characters ``column`` needs (its header's included) and whether its text wraps.

    ``dates``: the time columns shown as a date, not a date and time.
    """
    if isinstance(column, Times):
        content = len(DATE_FORMAT if name in dates else DATETIME_FORMAT)
    elif isinstance(column, Dates):
        content = len(DATE_FORMAT)
    elif isinstance(column, Amounts):
        most = column.minor.astype("Int64").abs().max(skipna=True)
        largest = 0 if pd.isna(most) else int(most)
        digits = max((minor_digits(str(c)) for c in pd.unique(column.currency.dropna())), default=0)
        whole = f"{largest // 10**digits:,}"
        content = len(whole) + (digits + 1 if digits else 0) + 1  # a minus sign
    elif pd.api.types.is_bool_dtype(column.dtype):
        content = 5
    else:
        lengths = column.astype(object).where(column.notna(), "").astype(str).str.len()
        content = int(lengths.max()) + 1 if len(lengths) else 0  # room for a neutralising '
        content = max(content, ROOM.get(name, 0))
        if content > TEXT_WIDTH or name == "note":
            return min(max(len(name), content), TEXT_WIDTH) + 2, True
    return max(len(name), content, ROOM.get(name, 0)) + 2, False


def print_setup(sheet: Worksheet, name: str, header_row: int) -> None:
    """Landscape, the header row repeated on every page, fitted to the pages a row needs."""
    sheet.set_landscape()
    sheet.repeat_rows(header_row)
    sheet.set_margins(left=0.4, right=0.4, top=0.6, bottom=0.6)
    sheet.fit_to_pages(1 if name in _NARROW else PAGES_WIDE, 0)


LINE_HEIGHT = 15.0  # points: a line of the default 11-point font, as a spreadsheet spaces it
# A width counts characters as wide as a digit; a line of prose holds more of its narrower
# letters (Calibri: 53 on a line 42 wide). Counted a little short, so no line is hidden.
_PROSE_PER_DIGIT = 1.25


def row_heights(
    columns: Sequence[tuple[Sequence[str | None], int]], rows: int
) -> list[float | None]:
    """Each row's height for its wrapped cells (``None``: one line, the default height).

    ``columns``: the texts of each wrapped column and its width. Spreadsheets do not grow a row
    for wrapped text they did not lay out themselves (LibreOffice keeps the stored height), so
    the lines are counted here: words wrapped at the column's width, each distinct text once (an
    action repeats on every row of its kind).
    """
    lines = [1] * rows
    for texts, width in columns:
        counted: dict[str, int] = {}
        for i, text in enumerate(texts):
            if not text:
                continue
            n = counted.get(text)
            if n is None:
                n = counted[text] = _lines(text, max(int((width - 2) * _PROSE_PER_DIGIT), 1))
            if n > lines[i]:
                lines[i] = n
    return [n * LINE_HEIGHT if n > 1 else None for n in lines]


def _lines(text: str, width: int) -> int:
    """Lines ``text`` takes wrapped at ``width`` characters (its own line breaks kept)."""
    return sum(
        len(textwrap.wrap(part, width, break_long_words=True, break_on_hyphens=False)) or 1
        for part in text.split("\n")
    )


class Styles:
    """The workbook's cell formats, made once (a format per cell would bloat styles.xml).

    Table cells sit at the top of their row, so a row made tall by wrapped text reads across.
    """

    def __init__(self, book: xlsxwriter.Workbook) -> None:
        top = {"valign": "top"}
        self.header = book.add_format({"bold": True, "bg_color": "#E8EEF4", "bottom": 1, **top})
        self.datetime = book.add_format({"num_format": DATETIME_FORMAT, **top})
        self.date = book.add_format({"num_format": DATE_FORMAT, **top})
        self.text = book.add_format(top)
        self.wrapped = book.add_format({"text_wrap": True, **top})
        self.label = book.add_format({"bold": True})
        self.note = book.add_format({"italic": True})
        self._money: dict[int, Format] = {}
        self._book = book

    def money(self, digits: int) -> Format:
        """``#,##0`` with ``digits`` decimals (0 for JPY, 2 for EUR, 3 for KWD)."""
        if digits not in self._money:
            decimals = "." + "0" * digits if digits else ""
            self._money[digits] = self._book.add_format(
                {"num_format": f"#,##0{decimals}", "valign": "top"}
            )
        return self._money[digits]
