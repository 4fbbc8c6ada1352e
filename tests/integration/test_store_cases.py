"""Cases in the store: a person's action wins over a run that read before it; actions are
all or nothing and every one is kept. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, func, insert, select

from recon.constants import CaseAction
from recon.decision import ActionRequest, CaseDecision
from recon.errors import InputError
from recon.ops.findings import act
from recon.store.cases import live_cases, write_case_decision
from recon.store.tables import exception_actions, exception_cases, runs

NOW = datetime(2026, 11, 20, 5, tzinfo=UTC)


def _run(engine: Engine) -> int:
    with engine.begin() as conn:
        result = conn.execute(
            insert(runs).values(
                started_at=NOW, as_of=NOW, status="complete", counts="{}", host="h", pid=1
            )
        )
        return int(result.inserted_primary_key[0])


def _open(engine: Engine, run_id: int, *ids: str) -> None:
    opened = [
        {"exception_id": i, "item_kind": "payout", "item_id": f"tx-{i}", "flag": "stale",
         "state": "open", "facts": "f", "detail": "d", "opened_run_id": run_id, "opened_at": NOW,
         "last_seen_run_id": run_id, "version": 1}
        for i in ids
    ]  # fmt: skip
    with engine.begin() as conn:
        write_case_decision(conn, CaseDecision(exceptions=None, opened=opened))  # type: ignore[arg-type]


def test_a_persons_action_during_a_run_wins_over_the_runs_change(engine: Engine) -> None:
    """An action taken after the run read the case wins: the run's stale change is skipped."""
    run_id = _run(engine)
    _open(engine, run_id, "E1-1")
    with engine.connect() as conn:
        read_by_run = live_cases(conn)  # the run reads the case before a person acts
    with engine.begin() as conn:
        act(conn, [ActionRequest("E1-1", CaseAction.ACKNOWLEDGE, "mine", "anna")], now=NOW,
            source="command line")  # fmt: skip
    version = int(read_by_run["version"].iloc[0])
    change = {
        "exception_id": "E1-1",
        "version": version,
        "state": "cleared",
        "ended_run_id": run_id,
    }
    with engine.begin() as conn:
        skipped = write_case_decision(
            conn,
            CaseDecision(exceptions=None, changed=[change]),  # type: ignore[arg-type]
        )
    assert skipped == 1
    with engine.connect() as conn:
        row = conn.execute(select(exception_cases)).one()
    assert (row.state, row.owner, row.ended_run_id) == ("acknowledged", "anna", None)


def test_actions_are_all_or_nothing_and_every_applied_one_is_kept(engine: Engine) -> None:
    """One refused action writes none of the batch; each applied one is kept in the history."""
    run_id = _run(engine)
    _open(engine, run_id, "E1-1", "E1-2")
    good = ActionRequest("E1-1", CaseAction.RESOLVE, "done", "olof", where="row 2")
    bad = [
        ActionRequest("E9-9", CaseAction.ACKNOWLEDGE, None, "olof", where="row 3"),
        ActionRequest("E1-2", CaseAction.SNOOZE, None, "olof", where="row 4"),
        ActionRequest("E1-2", CaseAction.SNOOZE, None, "olof", NOW - timedelta(1), where="row 5"),
    ]
    with pytest.raises(InputError) as caught, engine.begin() as conn:
        act(conn, [good, *bad], now=NOW, source="report.xlsx")
    text = str(caught.value)
    assert "row 3: no exception 'E9-9'" in text
    assert "row 4: E1-2: snooze needs a date" in text
    assert "row 5" in text
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(exception_actions)) == 0
        assert set(conn.scalars(select(exception_cases.c.state))) == {"open"}
    with engine.begin() as conn:
        act(conn, [good], now=NOW, source="report.xlsx")
    with engine.begin() as conn:
        act(conn, [ActionRequest("E1-1", CaseAction.REOPEN, "not yet", "anna")], now=NOW,
            source="command line")  # fmt: skip
    with engine.connect() as conn:
        actions = conn.execute(
            select(exception_actions.c.by, exception_actions.c.action,
                   exception_actions.c.previous_state, exception_actions.c.state,
                   exception_actions.c.source).order_by(exception_actions.c.id)
        ).all()  # fmt: skip
    assert [tuple(a) for a in actions] == [
        ("olof", "resolve", "open", "resolved", "row 2"),
        ("anna", "reopen", "resolved", "open", "command line"),
    ]


def test_upgrading_opens_cases_for_the_latest_runs_open_exceptions(empty_db_url: str) -> None:
    """A store at revision 0004: the latest finished run's open exceptions become open cases with
    ids, and recon's old "resolved" becomes "cleared"."""
    from alembic import command
    from sqlalchemy import text

    from recon.store.db import make_engine, upgrade, write_transaction
    from recon.store.migrate import alembic_config
    from recon.store.tables import run_exceptions

    engine = make_engine(empty_db_url)
    try:
        with write_transaction(engine) as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "0004")
            for run_id in (1, 2):
                conn.execute(
                    text("INSERT INTO runs (id, started_at, as_of, status, counts, host, pid)"
                         " VALUES (:id, :at, :at, 'complete', '{}', 'h', 1)"),
                    {"id": run_id, "at": (NOW + timedelta(run_id)).replace(tzinfo=None)},
                )  # fmt: skip
            for run_id, item, status in (
                (1, "tx-a", "new"),
                (2, "tx-a", "persisting"),
                (2, "tx-b", "resolved"),
                (2, "tx-c", "new"),
            ):
                conn.execute(
                    text("INSERT INTO run_exceptions (run_id, item_kind, item_id, flag, status,"
                         " detail) VALUES (:run, 'payout', :item, 'stale', :status, 'd')"),
                    {"run": run_id, "item": item, "status": status},
                )  # fmt: skip
        upgrade(engine)
        with engine.connect() as conn:
            cases = conn.execute(
                select(exception_cases.c.exception_id, exception_cases.c.item_id,
                       exception_cases.c.state, exception_cases.c.opened_at)
                .order_by(exception_cases.c.exception_id)
            ).all()  # fmt: skip
            stored = dict(
                conn.execute(
                    select(run_exceptions.c.item_id, run_exceptions.c.status).where(
                        run_exceptions.c.run_id == 2
                    )
                ).all()
            )
            ids = dict(
                conn.execute(
                    select(run_exceptions.c.item_id, run_exceptions.c.exception_id).where(
                        run_exceptions.c.run_id == 2
                    )
                ).all()
            )
    finally:
        engine.dispose()
    assert [(c[0], c[1], c[2]) for c in cases] == [
        ("E2-1", "tx-a", "open"),
        ("E2-2", "tx-c", "open"),
    ]
    assert cases[0][3] == NOW + timedelta(2)
    assert stored == {"tx-a": "persisting", "tx-b": "cleared", "tx-c": "new"}
    assert ids == {"tx-a": "E2-1", "tx-b": None, "tx-c": "E2-2"}
