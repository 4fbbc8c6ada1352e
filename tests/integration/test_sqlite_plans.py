"""SQLite reads a payout's rows by the payout, never a whole run's rows per payout.

SQLite plans without statistics, so where a join could look up ``outcome_history`` (or
``observations``, ``run_exceptions``, ``run_returns``) by ``transaction_id`` or by ``run_id``, both
equalities look alike to it. Looking it up by ``run_id`` inside a loop over payouts reads every row
of that run for every payout, and ``recon export payouts`` of a large store never ends (`make
bench` found it: BENCHMARKS.md, "`recon export payouts` searched the whole latest run"). The test
records every statement the night's reads, the report and the export send, asks SQLite for each
one's plan, and fails on a search by a ``run_id`` index that is not the outer loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from recon.decision import PartyRange, PayoutScope, RelatedReads
from recon.report.build import from_store
from recon.report.export import ExportFormat, export_payouts
from recon.store.cases import list_cases, live_cases
from recon.store.db import ensure_schema, make_engine
from recon.store.export_match_reads import read_export
from recon.store.provider_items import recorded_like
from recon.store.report_reads import report_payout_ids
from recon.store.return_reads import load_return_reads
from recon.store.run_inputs import (
    load_failure_callbacks,
    load_payouts,
    load_related,
    stored_outcomes,
)
from recon.store.selection import select_polls
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


def _plan(engine: Engine, statement: str, parameters: Any) -> list[str]:
    """SQLite's plan of ``statement``, a line per step."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        plan = raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
    return [str(row[-1]) for row in plan]


def _run_id_searches_inside_a_loop(engine: Engine, statement: str, parameters: Any) -> list[str]:
    """The plan lines that search a table by its ``run_id`` index below another table's loop."""
    lines = _plan(engine, statement, parameters)
    loops = [line for line in lines if line.startswith(("SCAN", "SEARCH"))]
    return [
        line
        for i, line in enumerate(loops)
        if i > 0 and re.search(r"USING (COVERING )?INDEX ix_\w+_run_id\b", line)
    ]


def test_the_nights_reads_the_report_and_the_export_look_a_payouts_rows_up_by_the_payout(
    tmp_path: Path,
) -> None:
    """No read of the night, the report or the export searches by run id inside a loop."""
    engine = make_engine(f"sqlite:///{tmp_path / 'plans.db'}")
    ensure_schema(engine)
    _, second = _store(engine)
    _with_latest_state(engine, second)
    with _statements(engine) as sent:
        with engine.connect() as conn:
            select_polls(conn, as_of=T0)
            load_return_reads(conn, second)
            load_failure_callbacks(conn, [3, 4])
            stored_outcomes(conn)
            live_cases(conn)
            list_cases(conn, include_ended=True)
        from_store(engine, timezone="UTC", run_id=second, window_days=7)
        for fmt in ExportFormat:
            export_payouts(engine, tmp_path / f"all.{fmt.value}", since=T0, timezone="UTC", fmt=fmt)
    assert any("outcome_history" in statement for statement, _ in sent)
    bad = {
        statement: lines
        for statement, parameters in sent
        if (lines := _run_id_searches_inside_a_loop(engine, statement, parameters))
    }
    assert bad == {}
    engine.dispose()


def _walks_the_account(engine: Engine, statement: str, parameters: Any) -> list[str]:
    """The plan lines that read payouts row by row through the account alone: every payout of
    the account visited, where the read names a narrower set (an aggregate over the account
    reads a covering index and is not one of these)."""
    return [
        line
        for line in _plan(engine, statement, parameters)
        if re.fullmatch(r"SEARCH payouts USING INDEX \w+ \(provider_account=\?\)", line)
        or line.startswith("SCAN payouts")
    ]


def test_the_nights_reads_of_payouts_search_by_their_own_columns_not_the_account_alone(
    tmp_path: Path,
) -> None:
    """Every payout read of the night (the polls, the scope, the related payouts by reference and
    by party range, the export's record, the provider side's look-alikes, the report's ids)
    searches an index by its own columns after the account, never every payout of the account:
    with an OR outside the account SQLite took the account's index and tested each row."""
    engine = make_engine(f"sqlite:///{tmp_path / 'plans.db'}")
    ensure_schema(engine)
    _, second = _store(engine)
    _with_latest_state(engine, second)
    scope = PayoutScope(
        ids=frozenset({"a", "b"}), unscheduled=((frozenset({"settled", "failed"}), T0),)
    )
    ranges = tuple(
        PartyRange(party, "who", 1000, since, until, undated=undated)
        for party in ("bank_account_id", "customer_id")
        for since, until, undated in ((T0, T0 + timedelta(days=7), False), (T0, None, True))
    )
    with _statements(engine) as sent, engine.connect() as conn:
        select_polls(conn, as_of=T0)
        have = load_payouts(conn, scope)
        load_related(conn, have, RelatedReads(frozenset({"r-1"}), ranges))
        read_export(conn, since=T0)
        recorded_like(conn, ["r-1"], [("who", 1000)])
        report_payout_ids(conn, second, T0)
    assert any(" payouts" in statement for statement, _ in sent)
    bad = {
        statement: lines
        for statement, parameters in sent
        if (lines := _walks_the_account(engine, statement, parameters))
    }
    assert bad == {}
    engine.dispose()
