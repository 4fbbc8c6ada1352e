"""A roll-forward break found again after a person resolved its case: the night finishes, and the
person's resolution stands, as for any finding whose facts did not change.

A payout's amount is edited behind recon's back before each of two nights (another payout each
time), so the same line (``SEK/all outcomes/moved_in``) breaks on both, with the case of the
first resolved in between. The provider is scripted at the HTTP boundary (``httpx.MockTransport``).
"""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine, select, update

from recon.constants import CaseAction, ExitCode
from recon.decision import ActionRequest
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.ops.findings import act
from recon.store.db import ensure_schema, make_engine, write_transaction
from recon.store.tables import exception_cases, payouts
from tests.integration.scripted_provider import START, Provider, night_settings

LINE = "SEK/all outcomes/moved_in"


def _import(engine: Engine, work: Path, ids: list[str]) -> None:
    path = work / "payouts.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["transaction_id", "merchant_reference", "amount", "currency",
                         "bank_account_id", "created"])  # fmt: skip
        for i in ids:
            writer.writerow([i, f"ref-{i}", "10.00", "SEK", f"ba-{i}", "1799300000"])
    import_payouts_csv(engine, path)


def _edit(engine: Engine, transaction_id: str) -> None:
    """One minor unit more on the payout's amount, behind recon's back."""
    with engine.begin() as conn:
        conn.execute(
            update(payouts)
            .where(payouts.c.transaction_id == transaction_id)
            .values(amount_minor=payouts.c.amount_minor + 1)
        )


def _breaks(out: Path) -> list[tuple[str, str, str]]:
    with (out / "exceptions.csv").open(encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        return [
            (r["exception_id"], r["transaction_id"], r["status"])
            for r in rows
            if r["exception"] == "rollforward_break"
        ]


def test_a_break_found_again_after_its_case_was_resolved_keeps_the_resolution(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """Night 1 opens the break, a person resolves it, night 2 finds it again: listed resolved."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    provider = Provider(states={"p0": 1, "p1": 1})
    settings = night_settings(engine, tmp_path)

    def night(n: int) -> tuple[int, list[tuple[str, str, str]]]:
        out = tmp_path / f"night{n}"
        result = run_reconciliation(
            settings, RunOptions(out_dir=out, as_of=START + timedelta(hours=6 * n), email=False),
            transport=provider.transport(), engine=engine,
        )  # fmt: skip
        return result.exit_code, _breaks(out)

    try:
        _import(engine, tmp_path, ["p0", "p1"])
        assert night(0) == (ExitCode.OK, [])
        _edit(engine, "p0")
        code, found = night(1)
        assert code == ExitCode.INCOMPLETE
        [(first, _item, status)] = [b for b in found if b[1] == LINE]
        assert status == "new"
        request = ActionRequest(first, CaseAction.RESOLVE, "checked", "anna")
        with write_transaction(engine) as conn:
            act(conn, [request], now=START + timedelta(hours=7), source="test")
        _edit(engine, "p1")
        code, found = night(2)
        assert code == ExitCode.INCOMPLETE
        assert [b for b in found if b[1] == LINE] == [(first, LINE, "resolved")]
        with engine.connect() as conn:
            cases = conn.execute(
                select(exception_cases.c.exception_id, exception_cases.c.state).where(
                    exception_cases.c.item_id == LINE
                )
            ).all()
        assert [tuple(c) for c in cases] == [(first, "resolved")]
    finally:
        engine.dispose()
