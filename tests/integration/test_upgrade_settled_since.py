"""Revision 0011 fills ``payouts.settled_since`` from what the store knows, so a
payout reversed after settlement before the upgrade is still found, however often it is stopped."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, text

from recon.store.db import make_engine
from recon.store.migrate import current_revision, head_revision
from recon.store.tables import payouts
from tests.integration.test_upgrade_resume import (
    insert_finished_run,
    upgrade_stopped_at_every_change,
    upgrade_to,
)

SETTLED_AT = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


def test_the_settled_time_is_filled_from_the_outcome_and_its_history(empty_db_url: str) -> None:
    """Settled now: its outcome_since; failed now after a settled history row: that row's time;
    never settled: NULL."""
    engine = make_engine(empty_db_url)
    try:
        upgrade_to(engine, "0010")
        with engine.begin() as conn:
            insert_finished_run(conn)
            for tid, outcome, since in (
                ("settled", "settled", "2026-03-01 06:00:00"),
                ("reversed", "failed", "2026-03-03 06:00:00"),
                ("failed", "failed", "2026-03-03 06:00:00"),
            ):
                conn.execute(
                    text(
                        "INSERT INTO payouts (transaction_id, merchant_reference, amount_minor,"
                        " currency, imported_at, outcome, outcome_since, ever_failed) VALUES"
                        " (:tid, :tid, 100, 'EUR', :since, :outcome, :since, :failed)"
                    ),
                    {"tid": tid, "outcome": outcome, "since": since, "failed": tid != "settled"},
                )
            for tid, outcome, since in (
                ("reversed", "settled", "2026-03-01 06:00:00"),
                ("reversed", "failed", "2026-03-03 06:00:00"),
                ("failed", "failed", "2026-03-03 06:00:00"),
            ):
                conn.execute(
                    text(
                        "INSERT INTO outcome_history (transaction_id, run_id, outcome,"
                        " outcome_since, changed_at) VALUES (:tid, 1, :outcome, :since, :since)"
                    ),
                    {"tid": tid, "outcome": outcome, "since": since},
                )
        upgrade_stopped_at_every_change(empty_db_url)
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            rows = conn.execute(
                select(payouts.c.transaction_id, payouts.c.settled_since).order_by(
                    payouts.c.transaction_id
                )
            ).all()
        assert [tuple(r) for r in rows] == [
            ("failed", None),
            ("reversed", SETTLED_AT),
            ("settled", SETTLED_AT),
        ]
    finally:
        engine.dispose()
