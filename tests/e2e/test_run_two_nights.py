"""Two nights of `recon run` against the served sandbox, checked from the CSVs it writes.

Night 1 runs right after the payouts are made. Between the nights the sandbox clock moves on
(settlements, the 13.01 delay ends, a 14.01 payout comes back), the bank confirms a payout it had
reported failed (and the merchant, believing it failed, paid again), two payouts are returned by the
receiving bank (one of them never recorded by the merchant), a forged return is posted to the
receiver, and the provider's real return notification is delivered twice. Night 2 then runs.
Finally the provider is stopped and `recon report --run N` rebuilds both nights' CSVs.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Payout,
    Spec,
    World,
    by_id,
    cell_id,
    count,
    create_payouts,
    exceptions_of,
    explain,
    import_payouts,
    post_notification,
    read_csv,
    recon,
    recon_env,
    served_world,
)

CSVS = ("payouts.csv", "summary.csv", "exceptions.csv", "returns.csv")
FORGED_RETURN = "forged-return-0001"
MADE_UP_ID = "no-such-payout-0001"
SPECS = {
    "abort_bank": Spec("11.01"),
    "abort_account": Spec("11.02"),
    "failed_confirmed": Spec("12.01", account="late"),
    "failed": Spec("12.01"),
    "delayed": Spec("13.01"),
    "auto_return": Spec("14.01"),
    "ordinary": Spec("100.10"),
    "partly_returned": Spec("120.00"),
    "forged_target": Spec("75.50"),
    "amount_differs": Spec("300.00"),
    "currency_differs": Spec("42.00", country="SE"),
    "old_pending": Spec("64.00"),
    "not_recorded": Spec("55.55"),  # the merchant never recorded it: its return has no payout
}


@dataclass
class Nights:
    """What the scenario produced: the payouts by role, the runs' output and the store."""

    tmp: Path
    env: dict[str, str]
    database_url: str
    payouts: dict[str, Payout]
    repaid: Payout
    first: Any
    second: Any
    returned_ids: dict[str, str]  # role -> returned-funds transaction id at the provider
    forged_posts: list[str]
    duplicate_posts: list[str]

    def csv(self, night: int, name: str) -> list[dict[str, str]]:
        return read_csv(self.tmp / f"night{night}" / name)

    def payout_rows(self, night: int) -> dict[str, dict[str, str]]:
        return by_id(self.csv(night, "payouts.csv"))

    def row(self, night: int, role: str) -> dict[str, str]:
        tx_id = MADE_UP_ID if role == "made_up" else self.payouts[role].transaction_id
        return self.payout_rows(night)[tx_id]

    def id(self, role: str) -> str:
        return self.payouts[role].transaction_id


def _wait_for_return_notifications(world: World, originals: set[str]) -> list[dict[str, Any]]:
    """The returned-funds notifications for ``originals``, once the receiver answered each 200."""
    deadline = time.monotonic() + 10
    while True:
        done = [
            d
            for d in world.deliveries()
            if d["kind"] == "returned_funds"
            and d["body"]["original_transaction_id"] in originals
            and d["status"] == 200
        ]
        if {d["body"]["original_transaction_id"] for d in done} == originals:
            return done
        assert time.monotonic() < deadline, f"returned-funds notifications not delivered: {done}"
        time.sleep(0.05)


def _merchant_rows(payouts: dict[str, Payout], repaid: Payout | None) -> list[dict[str, str]]:
    """The merchant's records: one made-up id, one local amount and one currency that differ,
    and one payout recorded as created five days ago (still pending: stale)."""
    rows = []
    for role, payout in payouts.items():
        if role == "not_recorded":
            continue
        overrides = {
            "amount_differs": {"amount": "300.50"},
            "currency_differs": {"currency": "EUR"},
            "old_pending": {"created": f"{payout.created.timestamp() - 5 * 86400:.3f}"},
        }.get(role, {})
        rows.append(payout.csv_row(**overrides))
    made_up = payouts["ordinary"].csv_row(
        transaction_id=MADE_UP_ID, merchant_reference="made-up-1", amount="10.00"
    )
    rows.append(made_up)
    if repaid is not None:
        rows.append(repaid.csv_row())
    return rows


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    """Run the whole scenario once for this module; the provider is stopped when it returns."""
    tmp = tmp_path_factory.mktemp("nights")
    database_url = f"sqlite:///{tmp / 'recon.db'}"
    with served_world(database_url) as world:
        env = recon_env(
            database_url,
            world.sandbox_url,
            **DAILY_SCHEDULES,
        )
        created = create_payouts(world, list(SPECS.values()))
        payouts = dict(zip(SPECS, created, strict=True))
        import_payouts(env, tmp, _merchant_rows(payouts, None))

        out1 = tmp / "night1"
        first = recon(env, "run", "--as-of", world.now(), "--no-email", "--out", str(out1), cwd=tmp)

        # The night goes on: everything ordinary settles, 13.01 leaves the bank, 14.01 returns.
        world.advance(900)
        world.post(f"/sandbox/transactions/{payouts['failed_confirmed'].transaction_id}/confirm")
        world.post(
            f"/sandbox/transactions/{payouts['partly_returned'].transaction_id}/return",
            {"amount": Decimal("50.00")},
        )
        world.post(f"/sandbox/transactions/{payouts['not_recorded'].transaction_id}/return")
        # Believing it failed, the merchant paid the same customer's account again.
        late = payouts["failed_confirmed"]
        again = Spec("12.01", account="late", bank_account_id=late.bank_account_id)
        repaid = create_payouts(world, [again], prefix="repay")[0]
        originals = {payouts[r].transaction_id for r in ("auto_return", "partly_returned")}
        originals.add(payouts["not_recorded"].transaction_id)
        delivered = _wait_for_return_notifications(world, originals)
        returned_ids = {
            role: next(
                d["body"]["transaction_id"]
                for d in delivered
                if d["body"]["original_transaction_id"] == payouts[role].transaction_id
            )
            for role in ("auto_return", "partly_returned", "not_recorded")
        }
        # The provider delivers the 14.01 return a second time (re-serialised: other key order).
        auto = next(
            d["body"]
            for d in delivered
            if d["body"]["original_transaction_id"] == payouts["auto_return"].transaction_id
        )
        duplicate_posts = [
            post_notification(world.receiver_url or "", dict(reversed(auto.items())))
        ]
        forged = {
            "transaction_id": FORGED_RETURN,
            "original_transaction_id": payouts["forged_target"].transaction_id,
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": "sandbox-merchant",
            "country_id": "DE",
            "amount": Decimal("75.50"),
        }
        forged_posts = [post_notification(world.receiver_url or "", forged) for _ in range(2)]
        # The next night: the confirmed payout has settled (5, then 6 after settle-after), and the
        # failed payout is due on the watch schedule (its first check is a day after night one).
        world.advance(86400)

        import_payouts(env, tmp, _merchant_rows(payouts, repaid))
        out2 = tmp / "night2"
        second = recon(
            env, "run", "--as-of", world.now(), "--no-email", "--out", str(out2), cwd=tmp
        )
    return Nights(
        tmp, env, database_url, payouts, repaid, first, second, returned_ids, forged_posts,
        duplicate_posts,
    )  # fmt: skip


def _assert_rows(
    nights: Nights, night: int, columns: tuple[str, ...], expected: dict[str, tuple[str, ...]]
) -> None:
    """Each role's row in night ``night``'s payouts.csv holds the expected values of ``columns``."""
    for role, values in expected.items():
        row = nights.row(night, role)
        assert tuple(row[column] for column in columns) == values, (role, row)


def test_both_nights_complete_with_exit_code_0_and_every_report(nights: Nights) -> None:
    """Exceptions are findings, not failures: both runs exit 0 and write the four CSVs."""
    assert nights.first.returncode == 0, explain(nights.first)
    assert nights.second.returncode == 0, explain(nights.second)
    for night in (1, 2):
        for name in CSVS:
            assert (nights.tmp / f"night{night}" / name).is_file()


def test_night_one_classifies_every_payout_from_the_providers_first_answers(
    nights: Nights,
) -> None:
    """Aborted with its code, failed, delayed in the bank, pending before eta, unknown."""
    expected = {
        "abort_bank": ("aborted", "2", "bank_rejected_transaction"),
        "abort_account": ("aborted", "2", "invalid_recipient_account"),
        "failed_confirmed": ("failed", "3", ""),
        "failed": ("failed", "3", ""),
        "delayed": ("delayed", "4", "transaction_is_delayed_in_bank"),
        "auto_return": ("pending", "4", ""),
        "ordinary": ("pending", "4", ""),
        "old_pending": ("pending", "4", ""),
        "made_up": ("unknown", "", ""),
    }
    _assert_rows(nights, 1, ("outcome", "state", "error_code"), expected)
    assert len(nights.payout_rows(1)) == len(SPECS)  # not_recorded is absent, made_up present


def test_night_two_sees_settlements_returns_and_the_late_bank_confirmation(
    nights: Nights,
) -> None:
    """Delayed then settled, pending then settled or returned, failed then settled (late)."""
    expected = {
        "abort_bank": ("aborted", "bank_rejected_transaction", "0.00"),
        "failed_confirmed": ("settled", "", "0.00"),
        "failed": ("failed", "", "0.00"),
        "delayed": ("settled", "", "0.00"),
        "auto_return": ("returned", "", "14.01"),
        "partly_returned": ("returned", "", "50.00"),
        "ordinary": ("settled", "", "0.00"),
        "forged_target": ("settled", "", "0.00"),
        "made_up": ("unknown", "", "0.00"),
    }
    _assert_rows(nights, 2, ("outcome", "error_code", "returned_amount"), expected)
    assert nights.row(2, "delayed")["previous_outcome"] == "delayed"
    assert nights.row(2, "failed_confirmed")["previous_outcome"] == "failed"
    repaid = nights.payout_rows(2)[nights.repaid.transaction_id]
    assert repaid["outcome"] == "failed"


def test_a_payout_reported_failed_then_settled_names_the_later_repayment(nights: Nights) -> None:
    """late_settlement is raised once the bank confirms it, with the re-payment as a duplicate."""
    row = nights.row(2, "failed_confirmed")
    assert row["exceptions"] == "late_settlement"
    assert row["candidate_duplicates"] == nights.repaid.transaction_id
    detail = next(
        r["detail"]
        for r in nights.csv(2, "exceptions.csv")
        if r["transaction_id"] == nights.id("failed_confirmed")
    )
    assert nights.repaid.transaction_id in detail


def test_exceptions_are_new_persisting_or_cleared_against_the_previous_night(
    nights: Nights,
) -> None:
    """Mismatches and the unknown id persist, stale resolves on settling, late ones are new."""
    first = exceptions_of(nights.csv(1, "exceptions.csv"))
    assert first == {
        (MADE_UP_ID, "unknown_transaction"): "new",
        (nights.id("amount_differs"), "amount_mismatch"): "new",
        (nights.id("currency_differs"), "currency_mismatch"): "new",
        (nights.id("old_pending"), "stale"): "new",
    }
    second = exceptions_of(nights.csv(2, "exceptions.csv"))
    assert second == {
        (MADE_UP_ID, "unknown_transaction"): "persisting",
        (nights.id("amount_differs"), "amount_mismatch"): "persisting",
        (nights.id("currency_differs"), "currency_mismatch"): "persisting",
        (nights.id("old_pending"), "stale"): "cleared",
        (nights.id("failed_confirmed"), "late_settlement"): "new",
        (FORGED_RETURN, "return_unverified"): "new",
        (nights.returned_ids["not_recorded"], "return_without_payout"): "new",
        # The provider's side: the payout the return names, which the record lacks.
        (nights.id("not_recorded"), "unrecorded_payout"): "new",
    }


def test_an_exception_row_carries_what_a_person_needs_to_act(nights: Nights) -> None:
    """Amount and currency of the local record, reference, and the recommended action."""
    rows = {(r["transaction_id"], r["exception"]): r for r in nights.csv(2, "exceptions.csv")}
    mismatch = rows[(nights.id("amount_differs"), "amount_mismatch")]
    assert (mismatch["amount"], mismatch["currency"]) == ("300.50", "EUR")
    assert mismatch["merchant_reference"] == nights.payouts["amount_differs"].reference
    currency = rows[(nights.id("currency_differs"), "currency_mismatch")]
    assert (currency["amount"], currency["currency"]) == ("42.00", "EUR")
    assert "SEK" in currency["detail"]
    assert all(r["action"] for r in rows.values() if r["status"] != "cleared")


def test_a_forged_return_is_unverified_and_does_not_change_the_outcome(nights: Nights) -> None:
    """The provider does not know the forged id: the payout stays settled with nothing returned."""
    returns = by_id(nights.csv(2, "returns.csv"), "return_transaction_id")
    forged = returns[FORGED_RETURN]
    assert forged["original_transaction_id"] == nights.id("forged_target")
    assert (forged["confirmed"], forged["notified"]) == ("false", "true")
    target = nights.row(2, "forged_target")
    assert (target["outcome"], target["returned_amount"], target["exceptions"]) == (
        "settled",
        "0.00",
        "",
    )


def test_returns_are_linked_to_their_payouts_and_confirmed_by_the_provider(
    nights: Nights,
) -> None:
    """Both provider returns are confirmed and matched; one for an unrecorded payout is not."""
    returns = by_id(nights.csv(2, "returns.csv"), "return_transaction_id")
    assert set(returns) == {FORGED_RETURN, *nights.returned_ids.values()}
    auto = returns[nights.returned_ids["auto_return"]]
    assert (auto["original_transaction_id"], auto["amount"], auto["currency"]) == (
        nights.id("auto_return"),
        "14.01",
        "EUR",
    )
    assert (auto["matched"], auto["confirmed"]) == ("true", "true")
    partial = returns[nights.returned_ids["partly_returned"]]
    assert (partial["amount"], partial["matched"], partial["confirmed"]) == (
        "50.00",
        "true",
        "true",
    )
    orphan = returns[nights.returned_ids["not_recorded"]]
    assert orphan["original_transaction_id"] == nights.id("not_recorded")
    assert (orphan["matched"], orphan["confirmed"]) == ("false", "true")


def test_a_notification_delivered_twice_is_stored_and_counted_once(nights: Nights) -> None:
    """The repeated return notification and the repeated forgery are duplicates, counted once."""
    assert nights.duplicate_posts == ["duplicate"]
    assert nights.forged_posts == ["stored", "duplicate"]
    stored = count(
        nights.database_url,
        "SELECT COUNT(*) FROM notifications WHERE transaction_id IN (?, ?)",
        nights.returned_ids["auto_return"],
        FORGED_RETURN,
    )
    assert stored == 2
    assert nights.row(2, "auto_return")["returned_amount"] == "14.01"  # not 28.02
    returns = [r["return_transaction_id"] for r in nights.csv(2, "returns.csv")]
    assert len(returns) == len(set(returns))


def test_summary_counts_and_amounts_are_exact_with_the_currency_digits(nights: Nights) -> None:
    """One row per currency and outcome; amounts such as 100.10 keep both digits."""
    rows = nights.csv(2, "summary.csv")
    assert list(rows[0]) == ["currency", "outcome", "count", "amount", "returned_amount", "net"]
    summary = {(r["currency"], r["outcome"]): (r["count"], r["amount"]) for r in rows}
    payouts = nights.payout_rows(2).values()
    for (currency, outcome), (n, amount) in summary.items():
        mine = [p for p in payouts if (p["currency"], p["outcome"]) == (currency, outcome)]
        assert int(n) == len(mine)
        total = sum((Decimal(p["amount"]) for p in mine), Decimal(0))
        assert amount == f"{total:.2f}", (currency, outcome)
    assert summary[("EUR", "failed")] == ("2", "24.02")
    assert summary[("EUR", "returned")] == ("2", "134.01")
    night1 = {(r["currency"], r["outcome"]): r["amount"] for r in nights.csv(1, "summary.csv")}
    assert night1[("EUR", "aborted")] == "22.03"


def test_report_rebuilds_each_nights_csvs_without_the_provider(nights: Nights) -> None:
    """`recon report --run N` writes the same CSVs and page as run N did; the sandbox is stopped."""
    for night in (1, 2):
        out = nights.tmp / f"rebuilt{night}"
        result = recon(nights.env, "report", "--run", str(night), "--out", str(out), cwd=nights.tmp)
        assert result.returncode == 0, explain(result)
        for name in (*CSVS, "report.html"):
            written = (nights.tmp / f"night{night}" / name).read_bytes()
            assert (out / name).read_bytes() == written, (night, name)


SHEETS = [
    "Summary",
    "Needs action",
    "Acknowledged",
    "Payouts",
    "Returns",
    "Exceptions",
    "Roll-forward",
    "Statement",
]


def _the_nights(payout: dict[str, str]) -> bool:
    """A row of payouts.csv the night needs read: its outcome changed tonight other than
    routinely (new or pending, now pending or settled), or it is open or flagged."""
    before, now = payout["previous_outcome"], payout["outcome"]
    routine = before in ("", "pending") and now in ("pending", "settled")
    return (
        (before != now and not routine)
        or now in ("pending", "delayed", "unchecked")
        or bool(payout["exceptions"] or payout["candidate_duplicates"])
    )


def test_each_night_writes_report_xlsx_holding_the_rows_of_its_csvs(nights: Nights) -> None:
    """report.xlsx beside the CSVs: six sheets; Payouts holds the night's rows of payouts.csv
    (changed tonight other than routinely, open or flagged: not a payout that simply settled),
    Exceptions every row of exceptions.csv; amounts are numbers equal to the CSV's exact text."""
    for night in (1, 2):
        path = nights.tmp / f"night{night}" / "report.xlsx"
        book = openpyxl.load_workbook(path, read_only=True)
        try:
            assert book.sheetnames == SHEETS
            window = nights.csv(night, "payouts.csv")
            payouts = [p for p in window if _the_nights(p)]
            # Night 1 settled nothing routinely; night 2's routine settlements are left off.
            assert 0 < len(payouts) <= len(window)
            assert (len(payouts) < len(window)) is (night == 2)
            sheet = list(book["Payouts"].iter_rows(values_only=True))
            assert list(sheet[0]) == list(window[0])
            cells = [dict(zip(sheet[0], row, strict=True)) for row in sheet[1:]]
            assert [c["transaction_id"] for c in cells] == [p["transaction_id"] for p in payouts]
            for cell, row in zip(cells, payouts, strict=True):
                assert Decimal(str(cell["amount"])) == Decimal(row["amount"])
            exceptions = nights.csv(night, "exceptions.csv")
            sheet = list(book["Exceptions"].iter_rows(values_only=True))
            # The same columns, and the sheets' own `by`; the sheet puts resolution, note, by
            # and until after the finding.
            assert sorted(c for c in sheet[0] if c != "by") == sorted(exceptions[0])
            rows = [dict(zip(sheet[0], row, strict=True)) for row in sheet[1:]]
            found = [(r["transaction_id"], r["exception"], r["status"]) for r in rows]
            assert found == [
                (cell_id(e["transaction_id"]), e["exception"], e["status"]) for e in exceptions
            ]
        finally:
            book.close()


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) not installed")
def test_libreoffice_opens_the_workbook_and_reads_every_sheet(
    nights: Nights, tmp_path: Path
) -> None:
    """LibreOffice converts night 2's report.xlsx, sheet by sheet, to CSV without complaint;
    amounts come out with their currency's digits (its number formats were understood)."""
    # One CSV per sheet (the last filter token, -1); cells as shown (the ninth token, true).
    filter_ = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1"
    done = subprocess.run(
        [
            "soffice", f"-env:UserInstallation=file://{tmp_path / 'profile'}", "--headless",
            "--convert-to", filter_, "--outdir", str(tmp_path),
            str(nights.tmp / "night2" / "report.xlsx"),
        ],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in tmp_path.glob("report-*.csv"))
    assert written == sorted(f"report-{name}.csv" for name in SHEETS), done.stdout + done.stderr
    payouts = read_csv(tmp_path / "report-Payouts.csv")
    assert len(payouts) == len([p for p in nights.csv(2, "payouts.csv") if _the_nights(p)])
    shown = {p["transaction_id"]: p["amount"] for p in payouts}
    assert shown[nights.id("partly_returned")] == "120.00"
