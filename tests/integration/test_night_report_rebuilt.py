"""A night reports from its decision in memory; ``recon report`` rebuilds the same run from the
store alone: every file of the two packs is the same, byte for byte, night after night.

Nights over a scripted provider (``httpx.MockTransport``): payouts arrive, settle, fail and go
unknown, an import changes a record, a person acts, a row is edited behind recon's back.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, update

from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, run_reconciliation
from recon.report.build import from_store
from recon.report.pack import write_configured
from recon.store.db import ensure_schema, make_engine
from recon.store.tables import payouts
from tests.integration.scripted_provider import START, Provider, act_on_open_cases, night_settings

# Per night: the provider's states, the record's amounts, what people do before it.
NIGHTS: list[tuple[dict[str, int | None], dict[str, str], tuple[tuple[int, str], ...]]] = [
    (
        {"p0": 1, "p1": 1, "p2": 1, "p5": 1},
        {"p0": "10.00", "p1": "10.00", "p2": "10.00", "p5": "10.00"},
        (),
    ),
    ({"p0": 6, "p1": 3, "p3": 1}, {"p3": "25.00", "p1": "11.50"}, ()),
    ({"p2": None, "p3": 6}, {"p4": "7.00"}, ((0, "acknowledge"),)),
    ({"p4": 2, "p1": 6}, {}, ((1, "resolve"), (0, "snooze"))),
]


def _import(engine: Engine, work: Path, amounts: dict[str, str]) -> None:
    path = work / "payouts.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["transaction_id", "merchant_reference", "amount", "currency",
                         "bank_account_id", "created"])  # fmt: skip
        for i, amount in amounts.items():
            writer.writerow([i, f"ref-{i}", amount, "SEK", f"ba-{i}", "1799300000"])
    import_payouts_csv(engine, path)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_each_nights_pack_equals_the_pack_recon_report_rebuilds(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """Four nights; before the third, rows edited behind recon's back (a roll-forward break, and a
    payout decided without a change whose stored record is not the one its history row kept)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    provider = Provider()
    settings = night_settings(engine, tmp_path)
    amounts: dict[str, str] = {}
    try:
        for n, (states, record, actions) in enumerate(NIGHTS):
            as_of = START + timedelta(hours=6 * n)
            provider.states.update(states)
            amounts.update(record)
            _import(engine, tmp_path, amounts)
            act_on_open_cases(engine, actions, as_of - timedelta(hours=1))
            if n == 2:
                with engine.begin() as conn:  # behind recon's back
                    conn.execute(
                        update(payouts)
                        .where(payouts.c.transaction_id == "p0")
                        .values(amount_minor=payouts.c.amount_minor + 1)
                    )
                    # p5 stays pending: its report row is the record its history row kept
                    conn.execute(
                        update(payouts)
                        .where(payouts.c.transaction_id == "p5")
                        .values(created=datetime(2027, 1, 7, 5, 34, 20, tzinfo=UTC))
                    )
            night = tmp_path / f"night{n}"
            result = run_reconciliation(
                settings, RunOptions(out_dir=night, as_of=as_of, email=False),
                transport=provider.transport(), engine=engine,
            )  # fmt: skip
            rebuilt = tmp_path / f"rebuilt{n}"
            data = from_store(
                engine, timezone=settings.timezone, run_id=result.run_id,
                window_days=settings.report_days,
            )  # fmt: skip
            write_configured(settings, rebuilt, data)
            assert _files(night) == _files(rebuilt), n
        assert "rollforward_break" in (tmp_path / "night2" / "exceptions.csv").read_text("utf-8")
    finally:
        engine.dispose()
