"""Re-importing payouts a run reconciled, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, select, update

from recon.ingest.payouts import import_payouts_csv
from recon.store.db import write_transaction
from recon.store.payouts import UpsertCounts
from recon.store.tables import payouts, record_changes

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HEADER = "transaction_id,merchant_reference,amount,currency,bank_account_id,created,eta\n"
ROWS = "tx-1,ref-1,100.00,SEK,ba-1,2026-11-20T10:00:00Z,\ntx-2,ref-2,7.00,EUR,ba-2,,\n"


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(HEADER + text, encoding="utf-8")
    return path


def _reconciled_with_eta(engine: Engine, eta: datetime) -> None:
    """What a night leaves: both payouts settled, the provider's eta filled in where none was."""
    with write_transaction(engine) as conn:
        conn.execute(update(payouts).values(outcome="settled", state=6, eta=eta))


def test_an_unchanged_reimport_counts_unchanged_and_keeps_the_eta_a_run_filled_in(
    engine: Engine, tmp_path: Path
) -> None:
    """The same rows again: every row unchanged, the provider's eta kept, no change recorded."""
    path = _write(tmp_path, ROWS, "v1.csv")
    import_payouts_csv(engine, path, now=T0)
    _reconciled_with_eta(engine, T0 + timedelta(hours=1))
    again = import_payouts_csv(engine, path, now=T0 + timedelta(days=1))
    assert again.counts == UpsertCounts(unchanged=2)
    with engine.connect() as conn:
        etas = {r.transaction_id: r.eta for r in conn.execute(select(payouts))}
        assert conn.execute(select(record_changes)).all() == []
    assert etas == {"tx-1": T0 + timedelta(hours=1), "tx-2": T0 + timedelta(hours=1)}


def test_a_changed_reimport_of_a_reconciled_payout_records_each_change_with_both_values(
    engine: Engine, tmp_path: Path
) -> None:
    """100.00 SEK becomes 150.00 SEK, and 7.00 EUR becomes 50.00 SEK: each field's before and
    after is kept, open, with the import's time; the record itself is the new one."""
    import_payouts_csv(engine, _write(tmp_path, ROWS, "v1.csv"), now=T0)
    _reconciled_with_eta(engine, T0 + timedelta(hours=1))
    changed = ROWS.replace("100.00,SEK", "150.00,SEK").replace("7.00,EUR", "50.00,SEK")
    later = T0 + timedelta(days=1)
    result = import_payouts_csv(engine, _write(tmp_path, changed, "v2.csv"), now=later)
    assert result.counts == UpsertCounts(updated=2)
    c = record_changes.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                c.transaction_id, c.field, c.before, c.after, c.imported_at,
                c.answered_run_id, c.closed_run_id,
            ).order_by(c.id)
        ).all()  # fmt: skip
        amounts = {r.transaction_id: r.amount_minor for r in conn.execute(select(payouts))}
    assert [tuple(r) for r in rows] == [
        ("tx-1", "amount", "100.00 SEK", "150.00 SEK", later, None, None),
        ("tx-2", "amount", "7.00 EUR", "50.00 SEK", later, None, None),
        ("tx-2", "currency", "EUR", "SEK", later, None, None),
    ]
    assert amounts == {"tx-1": 15000, "tx-2": 5000}


def test_a_changed_reimport_of_a_payout_never_reconciled_records_no_change(
    engine: Engine, tmp_path: Path
) -> None:
    """Before the first run the record is simply the latest import: nothing to compare."""
    import_payouts_csv(engine, _write(tmp_path, ROWS, "v1.csv"), now=T0)
    changed = ROWS.replace("100.00,SEK", "150.00,SEK")
    result = import_payouts_csv(engine, _write(tmp_path, changed, "v2.csv"), now=T0)
    assert result.counts == UpsertCounts(updated=1, unchanged=1)
    with engine.connect() as conn:
        assert conn.execute(select(record_changes)).all() == []
