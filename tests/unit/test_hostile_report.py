"""Hostile text in the report: any merchant reference or error code is escaped in report.html and
neutralised against formula injection in the CSVs, and comes back from the CSV cell exactly."""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.report.csvpack import render_csvs
from recon.report.fmt import FORMULA_STARTS
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, hostile)
def test_any_text_is_neutralised_in_the_csv_and_reads_back_exactly(
    reference: str, code: str
) -> None:
    """Each CSV cell is the text itself, or "'" + the text when it could start a formula."""
    csvs = render_csvs(with_text(reference, code))
    rows = list(csv.DictReader(io.StringIO(csvs["payouts.csv"].decode("utf-8"), newline="")))
    for expected, column in ((reference, "merchant_reference"), (code, "error_code")):
        guarded = "'" + expected if expected.startswith(FORMULA_STARTS) else expected
        cells = {row[column] for row in rows if row[column]}
        assert cells == {guarded}, column
        for cell in cells:
            assert not cell.startswith(FORMULA_STARTS)
