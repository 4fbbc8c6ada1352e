"""SQLite reads a payout's history by the payout, never a whole run's history per payout.

SQLite plans without statistics, so where a join could look up ``outcome_history`` by
``transaction_id`` or by ``run_id``, both equalities look alike to it. Looking it up by ``run_id``
inside a loop over payouts reads every row of that run for every payout: ``recon export payouts``
over 100,000 payouts ran more than ten minutes instead of a quarter of a second (`make bench`,
issue 16 goal 2). The test records every statement the report and the export send, asks SQLite
for each one's plan, and fails on a run-id search of ``outcome_history`` that is not the outer loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from recon.report.build import from_store
from recon.report.export import ExportFormat, export_payouts
from recon.store.db import ensure_schema, make_engine
from tests.integration.test_report_window import _with_latest_state
from tests.integration.test_store_report_frames import T0, _store


@contextmanager
def _statements(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    """Every SELECT ``engine`` sends while the block runs, with its parameters."""
    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _history_by_run_inside_a_loop(engine: Engine, statement: str, parameters: Any) -> list[str]:
    """The plan lines that search ``outcome_history`` by ``run_id`` below another table's loop."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        plan = raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
    lines = [str(row[-1]) for row in plan]
    loops = [line for line in lines if line.startswith(("SCAN", "SEARCH"))]
    return [
        line
        for i, line in enumerate(loops)
        if i > 0 and "ix_outcome_history_run_id" in line and not line.startswith("SEARCH runs")
    ]


def test_the_report_and_the_export_look_a_payouts_history_up_by_the_payout(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'plans.db'}")
    ensure_schema(engine)
    _, second = _store(engine)
    _with_latest_state(engine, second)
    with _statements(engine) as sent:
        from_store(engine, timezone="UTC", run_id=second, window_days=7)
        for fmt in ExportFormat:
            export_payouts(engine, tmp_path / f"all.{fmt.value}", since=T0, timezone="UTC", fmt=fmt)
    assert any("outcome_history" in statement for statement, _ in sent)
    bad = {
        statement: lines
        for statement, parameters in sent
        if (lines := _history_by_run_inside_a_loop(engine, statement, parameters))
    }
    assert bad == {}
    engine.dispose()
