"""The morning read: both counts on top, tonight's failed payouts right after
Needs action with the advice per error code, and a double payment before everything else."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd

from recon.report.html import render_report
from recon.report.model import ReportInput
from recon.report.text import render_text, subject
from recon.report.views import counts, stake_lines
from tests.unit.report_fixtures import SCRIPT, report_input, with_categoricals

PNG = b"\x89PNG\r\n\x1a\nfake"
FAILED_TITLE = "Failed tonight: re-pay or contact"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def section(html: str, title: str) -> str:
    start = html.index(f"<h2>{title}</h2>")
    return html[start : html.index("</section>", start)]


def with_double_payment(data: ReportInput) -> ReportInput:
    """The fixture with tx-008 (a late settlement re-paid by tx-012, both settled) also named a
    double payment, persisting from an earlier night."""
    exc = data.exceptions
    row = exc[(exc["item_id"] == "tx-008")].copy()
    row["flag"] = "double_payment"
    row["status"] = "persisting"
    row["exception_id"] = "E40-9"
    row["detail"] = (
        "777.00 EUR paid twice: settled after it was reported failed, and its re-payment tx-012"
        " settled too"
    )
    return dataclasses.replace(data, exceptions=pd.concat([exc, row], ignore_index=True))


def test_tonights_newly_failed_payouts_are_counted_to_re_pay_or_contact() -> None:
    """tx-009 (pending -> failed) and tx-005 (new, failed) failed tonight; tx-004 was already
    aborted the night before and is not counted again."""
    assert counts(report_input()).to_repay == 2
    assert counts(with_categoricals(report_input())).to_repay == 2


def test_a_payout_reversed_after_settlement_is_not_one_to_re_pay() -> None:
    """Settled, then failed tonight: its finding says not to re-pay, so it is not counted."""
    data = report_input()
    pay = data.payouts.copy()
    pay.loc[pay["transaction_id"] == "tx-009", "exceptions"] = "reversed_after_settlement"
    assert counts(dataclasses.replace(data, payouts=pay)).to_repay == 1


def test_the_subject_carries_both_counts() -> None:
    """Need action (new), then failed to re-pay or contact, then settled and failed as before."""
    assert subject(report_input()) == (
        "recon 2026-11-20: 7 problems need action (4 new) · 2 failed to re-pay or contact"
        " · 6 settled · 3 failed"
    )


def test_the_lead_line_says_both_counts() -> None:
    """The page's top line names what needs action and what failed tonight."""
    html = render_report(report_input(), row_cap=200, chart_png=PNG)
    lead = text_of(html[html.index('<p class="lead') : html.index("</p>", html.index('"lead'))])
    assert "7 problems need action (4 new) · 2 failed to re-pay or contact" in lead


def test_failed_tonight_comes_right_after_needs_action() -> None:
    """The first two sections are Needs action, then tonight's failed payouts."""
    html = render_report(report_input(), row_cap=200, chart_png=PNG)
    titles = re.findall(r"<h2>([^<]+)</h2>", html)
    assert titles[:2] == ["Needs action", FAILED_TITLE]


def test_failed_tonight_shows_the_amount_per_currency_and_the_advice_per_error_code() -> None:
    """54.01 EUR in two payouts; each code once with its advice (escaped), no code its own line."""
    html = render_report(report_input(), row_cap=200, chart_png=PNG)
    failed = section(html, FAILED_TITLE)
    words = text_of(failed)
    assert "54.01 EUR (2 payouts)" in words
    assert "tx-009" in failed
    assert "tx-005" in failed
    assert "tx-004" not in failed
    assert "&lt;script&gt;" in failed
    assert SCRIPT not in failed
    assert "The payout failed without an error code: ask the provider why" in words
    assert words.count("The payout failed without an error code") == 1


def test_failed_tonight_is_capped_and_names_payouts_csv_for_the_rest() -> None:
    """With row_cap=1 one payout is listed and the line says where the other is."""
    html = render_report(report_input(), row_cap=1, chart_png=PNG)
    failed = text_of(section(html, FAILED_TITLE))
    assert "Showing 1 of 2 rows; 1 more are in payouts.csv." in failed


def test_no_failed_payouts_tonight_shows_no_section_but_counts_zero() -> None:
    """A night without new failures: no section, and "0 failed to re-pay or contact" on top."""
    data = report_input()
    quiet = dataclasses.replace(data, changes=data.changes[data.changes["outcome"] != "failed"])
    html = render_report(quiet, row_cap=200, chart_png=PNG)
    assert f"<h2>{FAILED_TITLE}</h2>" not in html
    assert "0 failed to re-pay or contact" in text_of(html)


def test_a_double_payment_is_shown_first_and_named_with_the_amount_paid_twice() -> None:
    """Persisting, it still comes before the new findings, marked by its label."""
    html = render_report(with_double_payment(report_input()), row_cap=200, chart_png=PNG)
    needs = section(html, "Needs action")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", needs, flags=re.S)
    first = text_of(rows[1])  # rows[0] is the header
    assert '<strong class="double">Paid twice</strong>' in rows[1]
    assert "777.00 EUR paid twice" in first
    assert "tx-008" in first


def test_the_text_email_has_both_counts_then_failed_tonight_after_needs_action() -> None:
    """Plain text: the double payment first, then tonight's failed payouts before the headline."""
    text = render_text(with_double_payment(report_input()))
    assert "8 problems need action (4 new) · 777.00 EUR paid twice · 2 failed to re-pay" in text
    needs = text.index("NEEDS ACTION")
    failed = text.index("FAILED TONIGHT: RE-PAY OR CONTACT (2)")
    assert needs < failed < text.index("HEADLINE BY CURRENCY")
    first = text[needs:].splitlines()[1]
    expected = "- PAID TWICE: tx-008 777.00 EUR at stake"
    assert first.startswith(expected), first
    block = text[failed : text.index("HEADLINE BY CURRENCY")]
    assert "EUR: 54.01 (2 payouts)" in block
    assert "tx-009" in block
    assert "tx-005" in block


def test_the_text_email_caps_failed_tonight() -> None:
    """row_cap=1: one failed payout listed, the other counted and sent to payouts.csv."""
    text = render_text(report_input(), row_cap=1)
    block = text[text.index("FAILED TONIGHT") : text.index("HEADLINE BY CURRENCY")]
    assert "... 1 more in payouts.csv" in block


def test_one_payouts_money_is_at_stake_once_however_many_findings_say_so() -> None:
    """tx-015's amount differs and its record changed: two problems, 5.00 EUR at stake once in
    "other"; a finding with other money on it (a fee overcharged by 0.30) still adds its own."""
    data = report_input()
    exc = data.exceptions
    mismatch = exc[exc["item_id"] == "tx-015"]
    changed = mismatch.assign(flag="record_changed", exception_id="E9-1")
    fee = mismatch.assign(flag="fee_mismatch", exception_id="E9-2", at_stake_minor=30)

    def eur(*more: pd.DataFrame) -> tuple[list[str], int]:
        rows = pd.concat([exc, *more], ignore_index=True)
        lines = stake_lines(dataclasses.replace(data, exceptions=rows))
        return {code: (parts, n) for code, parts, n in lines}["EUR"]

    parts, problems = eur()
    assert eur(changed) == (parts, problems + 1)
    assert "18.31 other" in eur(changed, fee)[0]
    assert eur(changed, fee)[1] == problems + 2
