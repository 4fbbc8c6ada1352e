"""`recon demo` (what `make demo` runs) completes a whole night offline for two brands, two
provider accounts, and writes the report over both."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest

from tests.e2e.run_support import recon


def test_the_demo_night_reconciles_every_sandbox_amount_and_writes_the_report(
    tmp_path: Path,
) -> None:
    """Every sandbox amount ends as documented, returns are heard, and the report is written."""
    env = {"PATH": str(Path(sys.executable).parent), "COLUMNS": "200"}
    done = recon(env, "demo", "--dir", str(tmp_path), "--payouts", "40", cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for amount, state in (
        ("11.01", "2 ABORTED"),
        ("11.02", "2 ABORTED"),
        ("13.01", "6 SETTLED"),
        ("14.01", "6 SETTLED"),
    ):
        assert any(amount in line and state in line for line in out.splitlines()), amount
    assert "RETURNED_TRANSACTION notification received by the local receiver" in out
    lost = [line for line in out.splitlines() if "found by the return watch" in line]
    assert len(lost) == 1  # the return whose notification never came
    # The callback that said failed, the bank that paid after all, the merchant who paid again:
    # one double payment naming both payouts.
    doubles = [line for line in out.splitlines() if line.startswith("paid more than once: ")]
    assert any("(2 payouts, " in line and "paid twice" in line for line in doubles), out
    # The double click: paid twice ten minutes apart, one group naming both.
    twice = [line for line in out.splitlines() if line.startswith("possibly paid twice: payout ")]
    assert len(twice) >= 1, out
    assert all("2 payouts settled or in flight: " in line for line in twice)
    # A create whose answer the sandbox dropped: the merchant retried under a new reference; the
    # first payout's callback is how recon finds the provider's payout, paid 3 times in all.
    assert any("(3 payouts, " in line and "paid 3 times" in line for line in doubles), out
    # Both nights show their roll-forward, and neither breaks.
    rolled = [line for line in out.splitlines() if line.startswith("roll-forward (")]
    assert len(rolled) == 2, out
    assert "rollforward_break" not in (tmp_path / "report" / "exceptions.csv").read_text("utf-8")
    report = tmp_path / "report"
    assert (report / "report.html").stat().st_size > 0
    with (report / "payouts.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    outcomes = {row["outcome"] for row in rows}
    assert {"settled", "returned", "failed", "aborted"} <= outcomes
    with (report / "exceptions.csv").open(encoding="utf-8") as handle:
        flags = {row["exception"] for row in csv.DictReader(handle)}
    assert {"late_settlement", "return_unverified", "double_payment"} <= flags
    html = (report / "report.html").read_text(encoding="utf-8")
    # A real double payment: a late settlement's candidate duplicate settled too (it was a
    # re-payment of 12.01, the sandbox's always-fails amount, so it had failed).
    by_id = {row["transaction_id"]: row for row in rows}
    late_ones = [
        (row["transaction_id"], dupe)
        for row in rows
        if "late_settlement" in row["exceptions"].split(";") and row["candidate_duplicates"]
        for dupe in row["candidate_duplicates"].split(";")
    ]
    assert late_ones
    assert all(by_id[dupe]["outcome"] == "settled" for _, dupe in late_ones), late_ones
    assert all(by_id[late]["outcome"] == "settled" for late, _ in late_ones), late_ones
    # The morning read: the double payment comes first on the second night, and both
    # nights have failed payouts to re-pay or contact, in the terminal and on the page.
    lines = out.splitlines()
    for night in ("night 1", "night 2"):
        top = next(i for i, line in enumerate(lines) if f"the morning read of {night}:" in line)
        count = re.search(r"(\d+) failed to re-pay or", " ".join(lines[top : top + 2]))
        assert count is not None, lines[top : top + 2]
        assert int(count.group(1)) > 0, night
    second = next(i for i, line in enumerate(lines) if "the morning read of night 2:" in line)
    assert "first in Needs action, PAID TWICE: payout " in " ".join(lines[second:])
    needs = html[
        html.index("<h2>Needs action</h2>") : html.index(
            "</section>", html.index("<h2>Needs action</h2>")
        )
    ]
    first_row = re.findall(r"<tr[^>]*>(.*?)</tr>", needs, flags=re.S)[1]
    assert '<strong class="double">Paid twice</strong>' in first_row
    assert "paid twice" in first_row
    titles = re.findall(r"<h2>([^<]+)</h2>", html)
    assert titles[:2] == ["Needs action", "Failed tonight: re-pay or contact"], titles
    # Finance answered the first night's workbook: one acknowledged, one resolved.
    assert "recon exceptions apply report-answered.xlsx" in out
    assert "2 exceptions changed" in out
    with (report / "exceptions.csv").open(encoding="utf-8") as handle:
        people = {row["status"]: row for row in csv.DictReader(handle)}
    assert people["acknowledged"]["owner"] == "maria"
    assert people["resolved"]["note"] == "finance: known, nothing to recover"
    assert "<h2>Acknowledged</h2>" in html
    assert "Resolved since the previous run" in html
    # The fees: the demo prices EUR (the price changes mid-month); 15.01 is charged twice its fee
    # and 11.03 a fee though it never pays; every currency's fees are totalled.
    assert {"fee_mismatch", "fee_on_unpaid"} <= flags
    assert "<h2>Fees</h2>" in html
    with (report / "fees.csv").open(encoding="utf-8") as handle:
        fees = list(csv.DictReader(handle))
    overcharged = [f for f in fees if f["amount"] == "15.01" and f["currency"] == "EUR"]
    assert overcharged, fees
    assert all(f["fee_charged"] == "0.66" for f in overcharged), fees
    assert all(f["fee_expected"] == "0.33" and f["fee_entry"] for f in overcharged)
    assert any(line.startswith("fees in EUR: ") for line in lines), out


def test_the_demo_runs_two_brands_each_its_own_account_and_reports_over_both(
    tmp_path: Path,
) -> None:
    """Nordlys Travel and Fjord Home: one import naming each row's account, each brand's night
    with its own pack, and one report over both, every row with its brand; each night's journal
    entries, a reversal after settlement, and a batch in each format."""
    env = {"PATH": str(Path(sys.executable).parent), "COLUMNS": "200"}
    done = recon(env, "demo", "--dir", str(tmp_path), "--payouts", "40", cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    brands = {"nordlys": "Nordlys Travel (SE)", "fjord": "Fjord Home (NO/EU)"}
    assert "paid out 40 payouts for Nordlys Travel (SE) and 6 for Fjord Home (NO/EU)" in (
        done.stdout
    )
    with (tmp_path / "payouts.csv").open(encoding="utf-8") as handle:
        imported = list(csv.DictReader(handle))
    assert {row["provider_account"] for row in imported} == set(brands)
    for night in ("night 1", "night 2"):
        top = next(i for i, line in enumerate(lines) if f"the morning read of {night}:" in line)
        # Each brand's own count right under the count over both.
        below = [line.strip() for line in lines[top + 1 : top + 3]]
        assert sorted(line.split(":")[0] for line in below) == sorted(brands.values()), below
        assert all(re.search(r": \d+ problems? needs? action", line) for line in below), below
    stakes = [line.strip() for line in lines if line.strip().startswith("at stake in ")]
    assert stakes, done.stdout
    # "1 problem", "4 problems": the count of problems agrees with its noun.
    assert all(re.search(r" · (1 problem|(\d*[02-9]|\d+\d) problems)$", s) for s in stakes), stakes
    for label in brands.values():  # each brand's night, twice
        assert sum(line.startswith(f"{label}: recon: run ") for line in lines) == 2, label
    assert sum(line.startswith("recon: report of 2 accounts: ") for line in lines) == 2
    # A return of Fjord Home's, told at its own callback URL, heard by the receiver.
    assert any(
        "of Fjord Home (NO/EU); its RETURNED_TRANSACTION notification received" in line
        for line in lines
    ), done.stdout
    report = tmp_path / "report"
    with (report / "payouts.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[1] == "provider_account"
    by_brand = {name: [r for r in rows if r["provider_account"] == name] for name in brands}
    assert {r["currency"] for r in by_brand["fjord"]} == {"NOK", "EUR"}
    assert len({r["currency"] for r in by_brand["nordlys"]}) == 5
    assert {r["outcome"] for r in by_brand["fjord"]} >= {"settled", "returned", "aborted"}
    with (report / "exceptions.csv").open(encoding="utf-8") as handle:
        found = {(r["provider_account"], r["exception"]) for r in csv.DictReader(handle)}
    # Each brand has its own findings: Fjord's bank paid out the 12.01 it had reported failed.
    assert ("fjord", "late_settlement") in found, found
    assert ("nordlys", "double_payment") in found, found
    html = (report / "report.html").read_text(encoding="utf-8")
    for name, label in brands.items():
        assert label in html
        assert (report / name / "report.html").is_file(), name  # each brand's own pack
        own = (report / name / "payouts.csv").read_text(encoding="utf-8")
        assert len(own.splitlines()) - 1 == len(by_brand[name]), name
    # The books: Fjord Home's payouts settle before the first night and Nordlys Travel's after
    # it; the second night reverses the settlement (and fee) of the payout Fjord Home's bank
    # recalled; one batch in each format.
    nights = [_rows(tmp_path / "report-night-1" / "journal.csv"), _rows(report / "journal.csv")]
    assert {row["provider_account"] for row in nights[0]} == {"fjord"}
    assert {row["provider_account"] for row in nights[1]} == set(brands)
    first_ids = {row["journal_id"] for row in nights[0]}
    reversals = [row for row in nights[1] if row["reverses"]]
    assert {row["event"] for row in reversals} >= {"payout_settled"}, reversals
    assert all(row["reverses"] in first_ids for row in reversals), reversals
    assert {row["provider_account"] for row in reversals} == {"fjord"}
    assert "<h2>Journal</h2>" in html
    exported = sorted(path.name for path in (tmp_path / "journal").iterdir())
    assert "journal-batch-1.csv" in exported, exported
    assert any(re.fullmatch(r"journal-batch-2-nordlys-[A-Z]{3}\.si", n) for n in exported)
    assert any(re.fullmatch(r"journal-batch-3-xero-(EUR|NOK)-1\.csv", n) for n in exported)
    assert {f"journal-batch-{n}-manifest.json" for n in (1, 2, 3)} <= set(exported)
    assert sum(line.startswith("journal batch ") for line in lines) == 3, done.stdout
    # The second night pulls the provider's export of each brand, decides payouts from it
    # without asking (polls saved), and finds from it alone the payout made by hand through
    # the API that no callback names and the record lacks.
    pulled = next(line for line in lines if line.startswith("the provider's export, pulled by"))
    files = re.findall(r"(\d+) file\(s\), ([\d,]+) rows", pulled)
    assert len(files) == 2, pulled
    assert all(int(n) > 0 and int(rows_.replace(",", "")) > 0 for n, rows_ in files), pulled
    saved = next(line for line in lines if line.startswith("polls saved: "))
    nordlys_saved = re.search(r"Nordlys Travel \(SE\) ([\d,]+)", saved)
    assert nordlys_saved is not None, saved
    assert int(nordlys_saved.group(1).replace(",", "")) > 0, saved
    report_text = " ".join(done.stdout.split())
    assert re.search(
        r"payout found from the provider's export alone \(no callback names it\), not in the "
        r"record: unrecorded_payout \S+: the provider made payout \S+ of 480\.00 \w{3} "
        r"\(settled, reference demo-by-hand-1",
        report_text,
    ), done.stdout
    with (report / "exceptions.csv").open(encoding="utf-8") as handle:
        by_hand = [r for r in csv.DictReader(handle) if "demo-by-hand-1" in r["detail"]]
    assert [r["exception"] for r in by_hand] == ["unrecorded_payout"], by_hand
    # Fjord Home's balance: closings recorded from the back office; NOK ties, EUR (read after
    # the next morning's top-up) breaks by that top-up; the report has its Balance section.
    statements = [line for line in lines if line.startswith("balance statement of Fjord Home")]
    assert any(" in NOK, " in line and line.endswith(": tied") for line in statements), lines
    assert any(
        " in EUR, " in line and ": break: differs by 2,500.00 EUR" in line for line in statements
    ), statements
    with (report / "balance.csv").open(encoding="utf-8") as handle:
        status = {(r["currency"], r["status"]) for r in csv.DictReader(handle)}
    assert status == {("NOK", "tied"), ("EUR", "break")}, status
    assert ("fjord", "balance_break") in found, found
    assert "<h2>Balance</h2>" in html


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.timeout(900)
def test_the_demo_pays_out_5000_payouts_with_progress_and_no_traceback(tmp_path: Path) -> None:
    """The largest night its help allows completes (it timed out in `_advance` at 1,500) and says
    how far paying out has got while it pays out."""
    env = {"PATH": str(Path(sys.executable).parent), "COLUMNS": "200"}
    done = recon(env, "demo", "--dir", str(tmp_path), "--payouts", "5000", cwd=tmp_path,
                 timeout=880)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    progress = [line for line in done.stdout.splitlines() if line.startswith("paying out: ")]
    assert progress == [f"paying out: {n:,}/5,000" for n in range(500, 5001, 500)]
    assert (tmp_path / "report" / "report.html").is_file()
