"""report.html rendered from the fixed fixture: content, order, capping, escaping, local dates."""

from __future__ import annotations

import re

import pytest

from recon.report.chart import volume_chart_png
from recon.report.html import render_report
from tests.unit.report_fixtures import SCRIPT, report_input, with_string_dtypes

PNG = b"\x89PNG\r\n\x1a\nfake"


def section(html: str, title: str) -> str:
    """The HTML of one <section>, found by its <h2> title."""
    start = html.index(f"<h2>{title}</h2>")
    return html[start : html.index("</section>", start)]


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def html() -> str:
    return render_report(report_input(), row_cap=200, chart_png=PNG)


def test_the_top_line_counts_what_needs_action(html: str) -> None:
    """The lead line says how many exceptions need action, how many are new, settled and failed."""
    lead = text_of(html[html.index('<p class="lead') : html.index("</p>", html.index('"lead'))])
    assert (
        "7 problems need action (4 new) · 2 failed to re-pay or contact · 6 settled"
        " · 3 failed or aborted" in lead
    )


def test_exceptions_needing_action_come_first(html: str) -> None:
    """The first section after the top line is the exceptions table, before the headline."""
    assert html.index("<h2>Needs action</h2>") < html.index("<h2>Headline by currency</h2>")
    first_h2 = re.search(r"<h2>([^<]+)</h2>", html)
    assert first_h2 is not None
    assert first_h2.group(1) == "Needs action"


def test_new_exceptions_are_marked_and_listed_by_urgency(html: str) -> None:
    """Rows of new exceptions carry the new class and badge; the problems are in the order of
    urgency (a late settlement before a stale payout), new or persisting."""
    needs = section(html, "Needs action")
    assert needs.count('<tr class="new">') == 4
    assert needs.count('<span class="badge new">new</span>') == 4
    assert needs.index("Paid after a failure") < needs.index("Unfinished for days")
    for status in ("cleared", "resolved", "acknowledged", "snoozed"):
        assert f'badge {status}"' not in needs, status


def test_each_exception_shows_its_recommended_action(html: str) -> None:
    """The stale payout delayed in bank shows our action and the provider catalogue's."""
    needs = text_of(section(html, "Needs action"))
    assert "escalate to the provider with the transaction id" in needs
    assert "Provider: Wait for settlement" in needs


def test_the_headline_has_exact_totals_per_currency(html: str) -> None:
    """Settled, returned, net and the total instructed per currency, with its digits."""
    head = text_of(section(html, "Headline by currency"))
    assert re.findall(r"(EUR|JPY|SEK) Settled", head) == ["EUR", "JPY", "SEK"]
    assert "JPY Settled 15,000 1 payout Returned later 0 0 payouts Net settled 15,000" in head
    assert (
        "SEK Settled 1,234.50 1 payout Returned later 0.00 0 payouts Net settled 1,234.50" in head
    )
    assert "Instructed (any outcome) 4,301.14 11 payouts" in head


def test_failed_payouts_show_the_error_catalogue_action(html: str) -> None:
    """An aborted payout with bank_rejected_transaction shows the catalogue's action."""
    failed = text_of(section(html, "Failed and aborted payouts"))
    assert "bank_rejected_transaction Check the request; escalate to the provider" in failed


def test_returns_show_their_original_payout(html: str) -> None:
    """A confirmed return names its payout's reference and outcome."""
    returns = text_of(section(html, "Returns"))
    assert "rt-100 tx-003 INV-1003 · returned 14.01 EUR 14.01 EUR yes yes" in returns


def test_aging_buckets_open_payouts_by_created_and_eta(html: str) -> None:
    """The SEK payout unchecked for eight days is in > 7 d both since created and past eta."""
    aging = text_of(section(html, "Aging of open payouts"))
    assert "SEK &gt; 7 d 1 999.00 1 999.00" in aging
    assert "EUR not yet due 0 0.00 1 50.00" in aging


def test_changes_since_the_previous_run_are_summarised(html: str) -> None:
    """Moves between outcomes are counted, and a late settlement is listed as failed -> settled."""
    changes = text_of(section(html, "Changed since the previous run"))
    assert "failed → settled: 1" in changes
    assert "tx-008 failed → settled 777.00 EUR" in changes


def test_long_tables_are_capped_with_a_line_naming_the_csv() -> None:
    """With row_cap=2 the exceptions table shows 2 of 7 and says 5 more are in exceptions.csv."""
    html = render_report(report_input(), row_cap=2, chart_png=None)
    needs = section(html, "Needs action")
    assert needs.count("<tr") == 3  # header and two rows
    assert "Showing 2 of 7 rows; 5 more are in exceptions.csv." in needs
    assert "the rows are in payouts.csv" in section(html, "Changed since the previous run")


def test_provider_and_merchant_text_is_escaped(html: str) -> None:
    """A <script> in a merchant reference or error code is shown as text, never as markup."""
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()


def test_the_page_is_self_contained_for_email_clients(html: str) -> None:
    """CSS is inline in a <style> element; no <link>, no JavaScript; responsive and printable."""
    assert "<style>" in html
    assert "<link" not in html
    assert "@media print" in html
    assert "@media (max-width" in html
    assert 'name="viewport"' in html


def test_dates_are_shown_in_the_report_time_zone() -> None:
    """05:00 UTC is 00:00 in New York the same day, and 06:00 in Stockholm."""
    ny = render_report(report_input("America/New_York"), row_cap=200, chart_png=None)
    assert "As of 2026-11-20 00:00 EST" in ny
    assert "times in America/New_York" in ny
    sthlm = render_report(report_input("Europe/Stockholm"), row_cap=200, chart_png=None)
    assert "As of 2026-11-20 06:00 CET" in sthlm
    # tx-008 was created 3.5 days before 05:00 UTC: 2026-11-16 17:00 UTC.
    assert "2026-11-16 12:00" in section(ny, "Needs action")
    assert "2026-11-16 18:00" in section(sthlm, "Needs action")


def test_the_report_date_follows_the_local_day() -> None:
    """Just after midnight UTC it is still the previous day in New York, and the title says so."""
    html = render_report(report_input("Pacific/Kiritimati"), row_cap=200, chart_png=None)
    assert "<h1>Payout reconciliation 2026-11-20</h1>" in html
    honolulu = render_report(report_input("Pacific/Honolulu"), row_cap=200, chart_png=None)
    assert "<h1>Payout reconciliation 2026-11-19</h1>" in honolulu


def test_the_chart_is_a_data_uri_in_the_file_and_a_cid_in_mail() -> None:
    """Without a CID the PNG is embedded as data:; with one, the img points at cid:."""
    data = report_input()
    png = volume_chart_png(data.payouts, data.timezone)
    as_file = render_report(data, row_cap=200, chart_png=png)
    assert 'src="data:image/png;base64,iVBORw0KGgo' in as_file
    as_mail = render_report(data, row_cap=200, chart_png=png, chart_cid="chart.1@recon")
    assert 'src="cid:chart.1@recon"' in as_mail
    assert "data:image" not in as_mail
    without = render_report(data, row_cap=200, chart_png=None)
    assert "<img" not in without


def test_an_incomplete_run_is_flagged_at_the_top() -> None:
    """A run that could not fetch every payout says so before the tables."""
    data = report_input()
    incomplete = type(data)(
        run=type(data.run)(**{**data.run.__dict__, "status": "incomplete"}),
        payouts=data.payouts,
        exceptions=data.exceptions,
        returns=data.returns,
        changes=data.changes,
        timezone=data.timezone,
    )
    html = render_report(incomplete, row_cap=200, chart_png=None)
    assert html.index("Run status: incomplete") < html.index("<h2>Needs action</h2>")


def test_an_empty_run_renders_without_tables() -> None:
    """No payouts, exceptions, returns or changes: every section says so in words."""
    data = report_input()
    empty = type(data)(
        run=data.run,
        payouts=data.payouts.iloc[0:0],
        exceptions=data.exceptions.iloc[0:0],
        returns=data.returns.iloc[0:0],
        changes=data.changes.iloc[0:0],
        timezone=data.timezone,
    )
    html = text_of(render_report(empty, row_cap=200, chart_png=None))
    assert "Nothing needs action." in html
    assert "No payouts." in html
    assert "No returned funds." in html
    assert "No open payouts." in html
    assert "No outcome changed." in html


def test_string_dtype_columns_render_the_same_report() -> None:
    """Frames with pandas ``string`` columns and ``pd.NA`` (as the store builds) render alike."""
    plain = render_report(report_input(), row_cap=200, chart_png=PNG)
    assert render_report(with_string_dtypes(report_input()), row_cap=200, chart_png=PNG) == plain


def test_the_returns_table_gives_the_payouts_amount_with_its_currency() -> None:
    """Each returned payout's amount names its currency, like the returned amount beside it; a
    return whose payout is not in the store has none."""
    html = render_report(report_input(), row_cap=50, chart_png=None)
    cells = re.findall(r'data-label="Payout">([^<]*)<', html)
    assert "100.10 EUR" in cells
    assert all(c == "" or re.fullmatch(r"[\d,]+(\.\d+)? [A-Z]{3}", c) for c in cells)
