"""The plain-text alternative and the subject line."""

from __future__ import annotations

import re
from decimal import Decimal

from recon.report.text import render_text, subject
from tests.unit.report_fixtures import report_input, with_string_dtypes


def test_the_subject_has_the_local_date_and_the_headline_counts() -> None:
    """The subject names the local day, what needs action, new, settled and failed."""
    assert (
        subject(report_input())
        == "recon 2026-11-20: 7 problems need action (4 new) · 2 failed to re-pay or contact"
        " · 6 settled · 3 failed"
    )
    assert subject(report_input("Pacific/Honolulu")).startswith("recon 2026-11-19:")


def test_the_text_lists_exceptions_first_with_new_ones_marked() -> None:
    """NEEDS ACTION comes before the headline; new exceptions are prefixed NEW."""
    text = render_text(report_input())
    assert text.index("NEEDS ACTION (7, 4 new)") < text.index("HEADLINE BY CURRENCY")
    assert "- NEW Paid after a failure: tx-008 777.00 EUR at stake" in text
    assert "- Unfinished for days: tx-006 13.01 EUR at stake" in text
    assert "Action: The provider does not confirm this return" in text
    needs = text.split("NEEDS ACTION")[1].split("ACKNOWLEDGED")[0]
    assert "tx-002" not in needs  # cleared by recon: not listed as needing action
    assert "tx-016" not in needs  # snoozed
    owned = text.split("ACKNOWLEDGED (2)")[1].split("RESOLVED SINCE THE PREVIOUS RUN (1)")[0]
    assert "E37-1 Unfinished for days: tx-016, snoozed by anna until 2026-11-23" in owned
    assert "tx-017, resolved by olof: known test payout" in text


def test_the_text_headline_has_exact_amounts() -> None:
    """Per currency: settled, returned later, net, ..., instructed, with the currency's digits;
    no "paid out" that counts payouts that never left."""
    text = render_text(report_input())
    assert "JPY: settled 15,000 (1) · returned later 0 · net settled 15,000" in text
    assert "EUR: settled 4,168.11 (5)" in text
    assert ": paid out" not in text


def test_the_text_headline_adds_up_to_what_was_instructed() -> None:
    """Settled + in flight + failed + unknown or unchecked = instructed, in amount and count, as
    report.html's card and summary.csv give it (the text left the unknown out)."""
    line = next(
        ln for ln in render_text(report_input()).splitlines() if ln.startswith("EUR: settled")
    )
    assert "failed or aborted (never left) 65.02 (3) · unknown or unchecked" in line
    figures = re.findall(
        r"(settled|in flight|never left\)|unchecked|instructed) ([\d,.]+) \((\d+)\)", line
    )
    amounts = {k: (Decimal(a.replace(",", "")), int(n)) for k, a, n in figures}
    parts = [amounts[k] for k in ("settled", "in flight", "never left)", "unchecked")]
    assert amounts["instructed"] == (sum(a for a, _ in parts), sum(n for _, n in parts))


def test_the_text_caps_the_exception_list() -> None:
    """With row_cap=3 three exceptions are listed and the rest are counted."""
    text = render_text(report_input(), row_cap=3)
    assert text.count("  Action: ") == 3
    assert "... 4 more in exceptions.csv" in text


def test_string_dtype_columns_give_the_same_text() -> None:
    """Frames with pandas ``string`` columns and ``pd.NA`` give the same plain text."""
    assert render_text(with_string_dtypes(report_input())) == render_text(report_input())


def test_the_time_names_its_zone_once_in_utc_and_both_ways_elsewhere() -> None:
    """Times say "05:00 UTC", not "UTC (UTC)"; "06:00 CET (Europe/Stockholm)" keeps the name."""
    assert "As of 2026-11-20 05:00 UTC, run 42" in render_text(report_input("UTC"))
    assert "UTC (UTC)" not in render_text(report_input("UTC"))
    stockholm = render_text(report_input("Europe/Stockholm"))
    assert "As of 2026-11-20 06:00 CET (Europe/Stockholm), run 42" in stockholm
