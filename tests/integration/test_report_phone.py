"""report.html in a real browser at a phone's width: headless Chromium lays the page out
in a 390 px wide frame and a test-only wrapper measures it. The report itself has no script.

Skipped when Chromium is absent, unless RECON_TEST_REQUIRE_BROWSER=1 (the ``chromium`` fixture of
tests/conftest.py; .ci/run installs Chromium and sets it, so a missing browser fails, never skips).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from recon.report.chart import volume_chart_png
from recon.report.html import render_report
from tests.unit.report_fixtures import _PAYOUTS, payouts_frame, report_input

PHONE = 390
ROOT = Path(__file__).resolve().parents[2]

# The wrapper loads the report into an iframe of the phone's width (headless Chromium will not
# make a window narrower than 500 px) and writes what it measured into the DOM it dumps.
_PROBE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="report" style="width:%dpx;height:3000px;border:0" srcdoc="%s"></iframe>
<script>
document.getElementById('report').addEventListener('load', () => {
  const doc = document.getElementById('report').contentDocument;
  const boxes = [...doc.querySelectorAll('.card, .chart img, .scroll')];
  const over = boxes.filter(e => e.scrollWidth > e.clientWidth + 1).map(e =>
    (e.closest('section')?.querySelector('h2')?.textContent || '') + ': ' + e.className);
  const hidden = [...doc.querySelectorAll('td, th')].filter(e =>
    e.getBoundingClientRect().right > doc.documentElement.clientWidth + 1).length;
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({scrollWidth: doc.documentElement.scrollWidth,
    viewport: doc.documentElement.clientWidth, over: over, cellsOffScreen: hidden});
  document.body.appendChild(out);
});
</script></body></html>"""


def measure(chromium: str, page: str, tmp_path: Path, width: int = PHONE) -> dict[str, Any]:
    """Lay ``page`` out ``width`` px wide in headless Chromium; what the probe measured."""
    wrapper = tmp_path / "probe.html"
    wrapper.write_text(_PROBE % (width, html.escape(page, quote=True)), encoding="utf-8")
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=800,3000",
         "--virtual-time-budget=5000", "--dump-dom", wrapper.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    found = re.search(r'<pre id="probe">([^<]*)</pre>', done.stdout)
    assert found is not None, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return result


def wide_report() -> str:
    """The fixture with five currencies and long amounts: the widest headline a night gives."""
    extra = [
        ("tx-nok-" + "9" * 24, "NO-1", 987_654_321_00, "NOK", "settled", 6, None, 0, "", "",
         1.0, 0.9, "pending"),
        ("tx-dkk-" + "8" * 24, "DK-1", 123_456_789_01, "DKK", "failed", 3, None, 0, "", "",
         1.0, 0.9, "pending"),
    ]  # fmt: skip
    data = report_input(payouts=payouts_frame([*_PAYOUTS, *extra]))
    changes = pd.concat(
        [
            data.changes,
            data.changes.assign(
                transaction_id=lambda f: f.transaction_id + "-long-id-of-a-provider"
            ),
        ]
    )
    data = replace(data, changes=changes.reset_index(drop=True))
    return render_report(data, row_cap=200, chart_png=volume_chart_png(data.payouts, data.timezone))


def test_the_report_is_no_wider_than_a_390_px_phone(chromium: str, tmp_path: Path) -> None:
    """At 390 px the page does not scroll sideways, and neither do the currency cards, the chart
    or the returns (its Confirmed column stays in view)."""
    probe = measure(chromium, wide_report(), tmp_path)
    assert probe["viewport"] == PHONE
    assert probe["scrollWidth"] == probe["viewport"]
    assert probe["over"] == []


def test_the_mailed_html_without_its_style_block_is_no_wider_than_a_phone(
    chromium: str, tmp_path: Path
) -> None:
    """The mailed body as a client that drops <style> shows it (only the inlined styles): the
    page still does not scroll sideways at 390 px and the currency cards fit."""
    from recon.report.mail import mail_html

    mailed = re.sub(r"<style>.*?</style>", "", mail_html(wide_report()), flags=re.S)
    probe = measure(chromium, mailed, tmp_path)
    assert probe["scrollWidth"] == probe["viewport"] == PHONE
    assert not [box for box in probe["over"] if box.startswith("Headline")]


def run_without_a_browser(require: bool) -> subprocess.CompletedProcess[str]:
    """This file's browser tests under pytest with no chromium on PATH."""
    env = {k: v for k, v in os.environ.items() if k != "RECON_TEST_REQUIRE_BROWSER"}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv's tools, no browser
    if require:
        env["RECON_TEST_REQUIRE_BROWSER"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfs", __file__,
         "-k", "phone and not without_a_browser"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


def test_without_a_browser_the_phone_checks_fail_when_ci_requires_one() -> None:
    """With RECON_TEST_REQUIRE_BROWSER=1 (as .ci/run sets) a machine without Chromium fails the
    phone-width, mailed-body and statement checks, naming the variable; without it they skip."""
    required = run_without_a_browser(require=True)
    assert required.returncode == 1, required.stdout + required.stderr
    assert "3 errors" in required.stdout, required.stdout  # failed in the fixture, never skipped
    assert "RECON_TEST_REQUIRE_BROWSER=1" in required.stdout
    optional = run_without_a_browser(require=False)
    assert optional.returncode == 0, optional.stdout + optional.stderr
    assert "3 skipped" in optional.stdout, optional.stdout


def test_the_statement_and_the_fees_fit_a_390_px_phone(chromium: str, tmp_path: Path) -> None:
    """A statement card per currency with long amounts, and the fees and totals of five
    currencies: the page does not scroll sideways, and no table scrolls inside its box."""
    from recon.reconcile.statement import statement
    from recon.rollforward_lines import PAIR_COLUMNS, frame

    data = report_input(payouts=payouts_frame(_PAYOUTS))
    codes = ["EUR", "SEK", "NOK", "DKK", "GBP"]
    big = 987_654_321_00
    lines = frame(
        [(c, "pending", line, 43_210, big) for c in codes for line in ("previous", "moved_out")]
        + [(c, "pending", "now", 0, 0) for c in codes]
        + [(c, "settled", line, 43_210, big) for c in codes for line in ("moved_in", "now")]
        + [(c, "settled", "previous", 0, 0) for c in codes]
    )
    pairs = pd.DataFrame(
        [(c, "pending", c, "settled", 1, 0, 43_210, big, big) for c in codes],
        columns=list(PAIR_COLUMNS),
    )
    payouts = data.payouts.assign(
        fee_minor=pd.array([123_456_78] * len(data.payouts), dtype="Int64"),
        fee_expected_minor=pd.array([123_456_00] * len(data.payouts), dtype="Int64"),
        fee_id="fee-1",
        fee_entry="2026-11-01 EUR all accounts",
    )
    data = replace(
        data, payouts=payouts, rollforward=lines, statement=tuple(statement(lines, pairs))
    )
    page = render_report(data, row_cap=200, chart_png=None)
    assert "<caption>GBP</caption>" in page
    assert "<h2>Fees</h2>" in page
    probe = measure(chromium, page, tmp_path)
    assert probe["scrollWidth"] == probe["viewport"] == PHONE
    assert probe["over"] == []
