"""The roll-forward in the report: rollforward.csv, the statement in the HTML section (the grid one
click away), the email and the workbook."""

from __future__ import annotations

import io
from dataclasses import replace

import pandas as pd
from openpyxl import load_workbook

from recon.reconcile.statement import statement
from recon.report.csvpack import rollforward_csv
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.rollforward import statement as rollforward_statement
from recon.report.text import render_text
from recon.report.workbook import render_workbook
from recon.rollforward_lines import PAIR_COLUMNS, frame
from tests.unit.report_fixtures import report_input

_NO_PAIRS = pd.DataFrame(columns=list(PAIR_COLUMNS))


def _with_lines(note: str = "") -> ReportInput:
    lines = frame(
        [
            ("JPY", "settled", "previous", 1, 1500),
            ("JPY", "settled", "recorded", 1, 700),
            ("JPY", "settled", "moved_in", 0, 0),
            ("JPY", "settled", "moved_out", 0, 0),
            ("JPY", "settled", "record_changed", 0, 0),
            ("JPY", "settled", "now", 2, 2200),
            ("EUR", "returns_confirmed", "previous", 0, 0),
            ("EUR", "returns_confirmed", "recorded", 1, 1001),
            ("EUR", "returns_confirmed", "record_changed", 0, 0),
            ("EUR", "returns_confirmed", "now", 1, 1001),
            ("", "findings", "previous", 2, None),
            ("", "findings", "opened", 1, None),
            ("", "findings", "closed_by_people", 0, None),
            ("", "findings", "cleared", 1, None),
            ("", "findings", "reopened", 0, None),
            ("", "findings", "now", 2, None),
        ]
    )
    pairs = pd.DataFrame(
        [("JPY", None, "JPY", "settled", 1, 0, 1, None, 700)], columns=_NO_PAIRS.columns
    )
    return replace(
        report_input(),
        rollforward=lines,
        rollforward_note=note,
        statement=tuple(statement(lines, pairs)),
    )


def test_rollforward_csv_writes_each_line_with_the_currencys_digits() -> None:
    """Columns currency, outcome, line, count, amount; JPY without decimals; findings no amount."""
    text = rollforward_csv(_with_lines()).decode("utf-8").splitlines()
    assert text[0] == "currency,provider_account,outcome,line,count,amount"
    assert "JPY,default,settled,now,2,2200" in text
    assert "EUR,default,returns_confirmed,recorded,1,10.01" in text
    assert ",default,findings,now,2," in text


def test_the_html_report_reads_as_a_statement_with_the_grid_one_click_away() -> None:
    """Per currency: settled at the previous run + settled since = settled now, only what moved;
    the findings' line in words; every line of rollforward.csv behind a <details>."""
    html = render_report(_with_lines("The roll-forward starts here, from run 41."), row_cap=50,
                         chart_png=None)  # fmt: skip
    section = html.split("<h2>Roll-forward</h2>", 1)[1].split("</section>", 1)[0]
    assert "starts here, from run 41" in section
    statement_part, grid = section.split("<details", 1)
    assert "<caption>JPY</caption>" in statement_part
    assert 'Settled at the previous run</th><td class="num">1</td><td class="num">1,500 JPY' in (
        statement_part
    )
    assert 'settled since</th><td class="num">1</td><td class="num">700 JPY' in statement_part
    assert 'Settled now</th><td class="num">2</td><td class="num">2,200 JPY' in statement_part
    assert "In flight" not in statement_part  # nothing was in flight or moved there
    assert "Findings: 2 at the previous run + 1 opened − 1 cleared = 2 now" in statement_part
    assert "returns_confirmed" in grid
    assert "rollforward.csv" in grid


def test_a_night_without_payouts_shows_only_the_findings_line() -> None:
    """No payout line (an empty store, a first night): the section has the findings, no table."""
    only_findings = frame(
        [("", "findings", line, 0, None) for line in
         ("previous", "opened", "closed_by_people", "cleared", "reopened", "now")]
    )  # fmt: skip
    html = render_report(replace(report_input(), rollforward=only_findings), row_cap=50,
                         chart_png=None)  # fmt: skip
    section = html.split("<h2>Roll-forward</h2>", 1)[1].split("</section>", 1)[0]
    assert "Findings: 0 at the previous run = 0 now" in section
    assert "<table" not in section


def test_the_email_carries_the_statement_aligned() -> None:
    """Per currency its lines, the sign first, counts and amounts in columns; the findings'."""
    text = render_text(_with_lines())
    block = text.split("ROLL-FORWARD (rollforward.csv holds every line)", 1)[1].splitlines()
    at = block.index("JPY")
    assert [line.split() for line in block[at + 1 : at + 4]] == [
        ["Settled", "at", "the", "previous", "run", "1", "1,500", "JPY"],
        ["+", "settled", "since", "1", "700", "JPY"],
        ["=", "Settled", "now", "2", "2,200", "JPY"],
    ]
    assert len({line.rindex("JPY") for line in block[at + 1 : at + 4]}) == 1
    assert "Findings: 2 at the previous run + 1 opened − 1 cleared = 2 now" in block


def test_the_workbooks_statement_sheet_sums_to_its_now() -> None:
    """The Statement sheet: currency, line, count, amount, each signed as it adds up (a minus line
    negative), no cell starting with a sign."""
    book = load_workbook(io.BytesIO(render_workbook(_with_lines())), read_only=True)
    rows = [tuple(r) for r in book["Statement"].iter_rows(values_only=True)]
    assert rows[0] == ("currency", "line", "count", "amount")
    assert rows[1:] == [
        ("JPY", "Settled at the previous run", 1, 1500),
        ("JPY", "settled since", 1, 700),
        ("JPY", "Settled now", 2, 2200),
    ]


def test_a_part_where_nothing_moved_is_one_line() -> None:
    """Settled at the previous run and settled now the same, nothing between: "Settled, no
    change" with its count and amount, once."""
    lines = frame([("JPY", "settled", "previous", 2, 2200), ("JPY", "settled", "now", 2, 2200)])
    data = replace(report_input(), rollforward=lines, statement=tuple(statement(lines, _NO_PAIRS)))
    (part,) = rollforward_statement(data)
    assert [(line["words"], line["count"], line["amount"]) for line in part["lines"]] == [
        ("Settled, no change", 2, "2,200 JPY")
    ]
