"""The roll-forward in the report: rollforward.csv, the HTML section, the email block."""

from __future__ import annotations

from dataclasses import replace

from recon.report.csvpack import rollforward_csv
from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.text import render_text
from recon.rollforward_lines import frame
from tests.unit.report_fixtures import report_input


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
    return replace(report_input(), rollforward=lines, rollforward_note=note)


def test_rollforward_csv_writes_each_line_with_the_currencys_digits() -> None:
    """Columns currency, outcome, line, count, amount; JPY without decimals; findings no amount."""
    text = rollforward_csv(_with_lines()).decode("utf-8").splitlines()
    assert text[0] == "currency,outcome,line,count,amount"
    assert "JPY,settled,now,2,2200" in text
    assert "EUR,returns_confirmed,recorded,1,10.01" in text
    assert ",findings,now,2," in text


def test_the_html_report_has_a_roll_forward_section_with_its_note() -> None:
    """The section lists each currency and outcome with its lines; a first roll-forward says so."""
    html = render_report(_with_lines("The roll-forward starts here, from run 41."), row_cap=50,
                         chart_png=None)  # fmt: skip
    section = html.split("<h2>Roll-forward</h2>", 1)[1].split("</section>", 1)[0]
    assert "starts here, from run 41" in section
    assert "returns_confirmed" in section
    assert "Findings: previous 2 · opened 1" in section


def test_a_night_without_payouts_shows_only_the_findings_line() -> None:
    """No payout line (an empty store, a first night): the section has the findings, no table."""
    only_findings = frame(
        [("", "findings", line, 0, None) for line in
         ("previous", "opened", "closed_by_people", "cleared", "reopened", "now")]
    )  # fmt: skip
    html = render_report(replace(report_input(), rollforward=only_findings), row_cap=50,
                         chart_png=None)  # fmt: skip
    section = html.split("<h2>Roll-forward</h2>", 1)[1].split("</section>", 1)[0]
    assert "Findings: previous 0 · opened 0" in section
    assert "<table" not in section


def test_the_email_text_carries_a_short_roll_forward_block() -> None:
    """One line per currency and outcome: previous, what moved, now."""
    text = render_text(_with_lines())
    block = text.split("ROLL-FORWARD (rollforward.csv)", 1)[1]
    assert "JPY settled: previous 1 (1,500) · recorded 1 (700) · now 2 (2,200)" in block
    assert "- findings: previous 2 · opened 1 · cleared 1 · now 2" in block
