"""The morning read: what matters first, the money per currency in cards, changes by
kind with routine ones counted, labels that say what they count, engineering figures in the footer,
and every cap naming what it left out."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd

from recon.report.html import render_report
from tests.unit.report_fixtures import report_input

PNG = b"\x89PNG\r\n\x1a\nfake"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def between(html: str, start: str, end: str) -> str:
    i = html.index(start)
    return html[i : html.index(end, i)]


def section(html: str, title: str) -> str:
    return between(html, f"<h2>{title}</h2>", "</section>")


def test_the_sections_come_in_the_order_of_the_morning_read() -> None:
    """Needs action, tonight's failed payouts, acknowledged, the money, the changes, then the
    detail tables."""
    html = render_report(report_input(), row_cap=200, chart_png=PNG)
    titles = re.findall(r"<h2>([^<]+)</h2>", html)
    assert titles[:5] == [
        "Needs action",
        "Failed tonight: re-pay or contact",
        "Acknowledged",
        "Headline by currency",
        "Changed since the previous run",
    ]
    assert titles.index("Failed and aborted payouts") > titles.index(
        "Changed since the previous run"
    )


def test_the_header_keeps_the_facts_and_the_footer_the_engineering_figures() -> None:
    """Date, as-of, run, payouts and time zone on top; requests, rate, duration, polls below."""
    data = report_input()
    data = replace(data, run=replace(data.run, polls={"open": 7, "watch": 3}))
    html = render_report(data, row_cap=200, chart_png=None)
    header = text_of(between(html, "<header>", "</header>"))
    assert "2026-11-20" in header
    assert "run 42" in header
    assert "15 payouts" in header
    assert "Europe/Stockholm" in header
    for engineering in ("requests", "/s", "84.5 s"):
        assert engineering not in header, engineering
    footer = text_of(between(html, "<footer", "</footer>"))
    assert "1,234 requests (14.6/s)" in footer
    assert "84.5 s" in footer
    assert "7 open" in footer


def test_the_headline_is_one_card_per_currency_with_one_figure_per_idea() -> None:
    """No "Paid out" mixing failed payouts in: settled, returned, net, in flight, and failed or
    aborted (never left) are each one figure; a card per currency, not a wide table."""
    html = render_report(report_input(), row_cap=200, chart_png=None)
    head = section(html, "Headline by currency")
    assert "Paid out" not in head
    assert head.count('class="card"') == 3
    eur = text_of(between(head, ">EUR<", "</table>"))
    assert "Settled 4,168.11 5 payouts" in eur
    assert "Returned later 14.01 1 payout" in eur
    assert "Net settled 4,154.10" in eur
    assert "In flight 68.01 3 payouts" in eur
    assert "Failed or aborted (never left) 65.02 3 payouts" in eur


def test_settled_in_the_headline_and_in_outcome_by_currency_agree_or_say_why() -> None:
    """The headline's Settled is the outcome table's settled plus returned, and both say so."""
    html = render_report(report_input(), row_cap=200, chart_png=None)
    outcomes = text_of(section(html, "Outcome by currency"))
    assert "EUR settled 4 4,154.10" in outcomes
    assert "EUR returned 1 14.01" in outcomes
    assert "headline's Settled is settled plus returned" in outcomes
    assert "includes payouts returned later" in text_of(section(html, "Headline by currency"))


def _changes(rows: list[tuple[str, str | None, str, int, str]]) -> pd.DataFrame:
    cols = list(zip(*rows, strict=True))
    return pd.DataFrame(
        {
            "transaction_id": pd.Series(cols[0], dtype=object),
            "previous_outcome": pd.Series(cols[1], dtype=object),
            "outcome": pd.Series(cols[2], dtype=object),
            "amount_minor": pd.Series(cols[3], dtype="Int64"),
            "currency": pd.Series(cols[4], dtype=object),
        }
    )


def test_changes_are_grouped_by_kind_and_routine_settlements_are_counted_not_listed() -> None:
    """300 big routine pending -> settled no longer push the failed -> settled, delayed -> settled
    and new -> failed changes out: those are listed first, the routine ones are a count per
    currency that says the rows are in payouts.csv."""
    routine = [(f"tx-r{i:03d}", "pending", "settled", 9_000_000 + i, "EUR") for i in range(300)]
    routine += [(f"tx-s{i:03d}", "pending", "settled", 50_000, "SEK") for i in range(2)]
    notable = [
        ("tx-late", "failed", "settled", 100, "EUR"),
        ("tx-slow", "delayed", "settled", 200, "EUR"),
        ("tx-nf", None, "failed", 300, "EUR"),
        ("tx-back", "settled", "returned", 400, "EUR"),
        ("tx-held", "pending", "delayed", 500, "EUR"),
    ]
    data = replace(report_input(), changes=_changes(routine + notable))
    html = render_report(data, row_cap=200, chart_png=None)
    changes = section(html, "Changed since the previous run")
    kinds = re.findall(r"<h3>([^<]+)</h3>", changes)
    assert kinds[:4] == ["Into failed or aborted", "Failed → settled", "Delayed", "Returned"]
    text = text_of(changes)
    for tx in ("tx-late", "tx-slow", "tx-nf", "tx-back", "tx-held"):
        assert tx in text, tx
    assert "tx-r" not in text
    assert "pending → settled: 300 payouts, 27,000,448.50 EUR" in text.replace("\u202f", " ")
    assert "2 payouts, 1,000.00 SEK" in text
    assert "the rows are in payouts.csv" in text


def test_every_capped_table_says_how_many_it_left_out_and_where() -> None:
    """With a cap of 1 every table longer than that ends with a line naming the CSV of the rest,
    the changes' groups too: no kind of change is silently cut."""
    changes = _changes(
        [("tx-a", None, "failed", 1, "EUR"), ("tx-b", "pending", "failed", 2, "EUR"),
         ("tx-c", "failed", "settled", 3, "EUR"), ("tx-d", "aborted", "settled", 4, "EUR")]
    )  # fmt: skip
    html = render_report(replace(report_input(), changes=changes), row_cap=1, chart_png=None)
    for title, csv in (
        ("Needs action", "exceptions.csv"),
        ("Failed and aborted payouts", "payouts.csv"),
        ("Returns", "returns.csv"),
    ):
        assert re.search(rf"Showing 1 of \d+ rows; \d+ more are in {csv}", section(html, title))
    changes_html = section(html, "Changed since the previous run")
    assert changes_html.count("Showing 1 of 2 rows; 1 more are in payouts.csv") == 2
