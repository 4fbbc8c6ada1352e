"""Hostile text in the report: any merchant reference or error code is escaped in report.html and
neutralised against formula injection in the CSVs, whatever list separator the spreadsheet splits
on, and comes back from the CSV cell as the text with only ``'`` added."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.report.csvpack import render_csvs
from recon.report.html import render_report
from recon.report.model import ReportInput
from tests.unit.report_fixtures import report_input

# Any text a CSV file or a provider could carry; the importer and the models refuse NUL and
# unpaired surrogates before text reaches a report.
hostile = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=1,
    max_size=60,
).filter(lambda t: t.strip() != "")
hostile_with_markup = st.tuples(
    hostile, st.sampled_from(["<b id=x>", "</td><script>", "<img src=x onerror=alert(1)>"])
)


class Tags(HTMLParser):
    """Collects the start tags of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def tags_of(page: str) -> list[str]:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser.tags


def with_text(reference: str, code: str) -> ReportInput:
    """The fixture report, with the first payout's and exception's text replaced."""
    data = report_input()
    data.payouts.loc[:, "merchant_reference"] = reference
    data.payouts.loc[data.payouts["error_code"].notna(), "error_code"] = code
    data.exceptions.loc[:, "merchant_reference"] = reference
    data.exceptions.loc[data.exceptions["error_code"].notna(), "error_code"] = code
    return data


BASELINE_TAGS = tags_of(render_report(with_text("REF", "code"), row_cap=200, chart_png=None))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_with_markup, hostile_with_markup)
def test_any_text_in_references_and_error_codes_is_escaped_in_the_html(
    reference: tuple[str, str], code: tuple[str, str]
) -> None:
    """Whatever the text, the page has exactly the tags of a page with harmless text."""
    page = render_report(with_text("".join(reference), "".join(code)), row_cap=200, chart_png=None)
    assert tags_of(page) == BASELINE_TAGS
    assert reference[1] not in page
    assert code[1] not in page


# A cell that a spreadsheet runs: = + @ first, or - followed by more than a plain number or name
# (``-5.00`` and ``-A1`` compute nothing; ``-1+cmd|' /C calc'!A0`` does). Leading spaces and
# quotes do not hide it: some spreadsheets trim them on import.
FORMULA_CELL = re.compile(r"""[\s"]*([=+@]|-(?![A-Za-z0-9_.]*$))""")

# Text built to put a formula right after a separator, besides any text at all.
separated = st.builds(
    "".join,
    st.lists(
        st.sampled_from([",", ";", "\t", "\n", "\r", " ", '"', "'"])
        | st.sampled_from(["=", "+", "-", "@"])
        | st.sampled_from(["cmd|' /C calc'!A0", "1+1", 'HYPERLINK("http://x")', "5", "x"]),
        min_size=1,
        max_size=12,
    ),
).filter(lambda t: t.strip() != "")


def cells_read_with(content: str, delimiter: str) -> list[str]:
    return [
        cell
        for row in csv.reader(io.StringIO(content, newline=""), delimiter=delimiter)
        for cell in row
    ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile | separated, hostile | separated)
def test_no_list_separator_splits_a_text_cell_into_a_formula(reference: str, code: str) -> None:
    """Read with ',', ';' or tab as the separator, no cell of any CSV starts a formula."""
    for name, content in render_csvs(with_text(reference, code)).items():
        text = content.decode("utf-8")
        for delimiter in (",", ";", "\t"):
            for cell in cells_read_with(text, delimiter):
                assert not FORMULA_CELL.match(cell), (name, delimiter, cell)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile | separated, hostile | separated)
def test_any_text_is_neutralised_in_the_csv_and_reads_back_exactly(
    reference: str, code: str
) -> None:
    """Each CSV cell is the text itself with at most some "'" added, and never starts a formula."""
    csvs = render_csvs(with_text(reference, code))
    rows = list(csv.DictReader(io.StringIO(csvs["payouts.csv"].decode("utf-8"), newline="")))
    for expected, column in ((reference, "merchant_reference"), (code, "error_code")):
        cells = {row[column] for row in rows if row[column]}
        assert len(cells) == 1, column
        (cell,) = cells
        assert cell.replace("'", "") == expected.replace("'", ""), column
        assert cell == expected or len(cell) > len(expected)
        assert not FORMULA_CELL.match(cell)
