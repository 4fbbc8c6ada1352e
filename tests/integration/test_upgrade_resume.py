"""A schema upgrade stopped after any statement completes when run again.

MariaDB commits each schema change at once, so a killed upgrade leaves the changes made so far and
the version stamp of the last finished revision. Here every database is driven into that state on
purpose: the upgrade runs on an AUTOCOMMIT connection (each statement commits, as DDL does on
MariaDB) and is stopped before its next change, again and again, one change per attempt, until an
attempt finishes. Each attempt is the product's own ``upgrade``; only the stop is the test's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, Engine, event, text

from recon.errors import StoreError
from recon.store.db import make_engine, upgrade, write_transaction
from recon.store.migrate import alembic_config, current_revision, head_revision
from recon.store.tables import VERSION_TABLE, metadata

# A statement that changes the database (the inspections between them change nothing).
_CHANGE = re.compile(r"\s*(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|RENAME)\b", re.IGNORECASE)


class Stopped(Exception):
    """The test stopped the upgrade (where a SIGKILL would)."""


def upgrade_stopped_after(url: str, changes: int, done: set[tuple[str, str]]) -> bool:
    """Upgrade with every statement committed at once, stopped before its ``changes + 1``-th
    change not in ``done`` (the changes earlier attempts made: a data step run again repeats
    its ``UPDATE``); whether the upgrade finished first. Adds the changes made to ``done``."""
    base = make_engine(url)
    engine: Any = base.execution_options(isolation_level="AUTOCOMMIT")
    made = 0

    @event.listens_for(engine, "before_cursor_execute")
    def _stop(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        nonlocal made
        key = (statement, repr(parameters))
        if _CHANGE.match(statement) and key not in done:
            if made == changes:
                raise Stopped(statement)
            made += 1
            done.add(key)

    try:
        upgrade(engine)
    except Stopped:
        return False
    finally:
        base.dispose()
    return True


def upgrade_stopped_at_every_change(url: str) -> int:
    """Stop the upgrade after one change, then again after the next, until it finishes; the
    number of stops (each attempt resumes where the last was stopped)."""
    done: set[tuple[str, str]] = set()
    stops = 0
    while not upgrade_stopped_after(url, 1, done):
        stops += 1
        assert stops < 500, "the upgrade makes no progress when resumed"
    return stops


def insert_finished_run(conn: Connection) -> None:
    """Run 1, complete, at 2026-03-01 06:00, written in SQL (the schema before head may differ)."""
    conn.execute(
        text(
            "INSERT INTO runs (id, started_at, finished_at, as_of, status, counts, host,"
            " pid) VALUES (1, :at, :at, :at, 'complete', '{}', 'h', 1)"
        ),
        {"at": "2026-03-01 06:00:00"},
    )


def upgrade_to(engine: Engine, revision: str) -> None:
    config = alembic_config()
    with write_transaction(engine) as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def schema_differences(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
        )
        return list(compare_metadata(context, metadata))


def test_an_upgrade_stopped_after_any_change_completes_when_run_again(empty_db_url: str) -> None:
    """From an empty store, stopped after each change in turn (every step of every revision,
    every version stamp), the upgrade still reaches the newest revision and the schema of
    recon.store.tables."""
    stops = upgrade_stopped_at_every_change(empty_db_url)
    assert stops > 40  # every table, column and index of 0001..0007 was a place to stop
    engine = make_engine(empty_db_url)
    try:
        assert current_revision(engine) == head_revision()
        assert schema_differences(engine) == []
    finally:
        engine.dispose()


def test_the_exception_cases_step_moves_the_data_once_however_often_it_is_stopped(
    empty_db_url: str,
) -> None:
    """A store at 0004 with a finished run's exceptions, upgraded with a stop after each change:
    the open exceptions become one case each, recon's 'resolved' becomes 'cleared', as when the
    upgrade runs uninterrupted."""
    engine = make_engine(empty_db_url)
    try:
        upgrade_to(engine, "0004")
        with engine.begin() as conn:
            insert_finished_run(conn)
            for item, status in (("p1", "new"), ("p2", "persisting"), ("p3", "resolved")):
                conn.execute(
                    text(
                        "INSERT INTO run_exceptions (run_id, item_kind, item_id, flag, status,"
                        " detail) VALUES (1, 'payout', :item, 'stuck', :status, :detail)"
                    ),
                    {"item": item, "status": status, "detail": f"{item} is stuck"},
                )
        upgrade_stopped_at_every_change(empty_db_url)
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            cases = conn.execute(
                text("SELECT exception_id, item_id, state FROM exception_cases ORDER BY 1")
            ).all()
            rows = conn.execute(
                text("SELECT item_id, status, exception_id FROM run_exceptions ORDER BY 1")
            ).all()
        assert [tuple(c) for c in cases] == [("E1-1", "p1", "open"), ("E1-2", "p2", "open")]
        assert [tuple(r) for r in rows] == [
            ("p1", "new", "E1-1"),
            ("p2", "persisting", "E1-2"),
            ("p3", "cleared", None),
        ]
    finally:
        engine.dispose()


def test_a_table_the_upgrade_did_not_make_stops_it_with_one_paragraph_saying_what_to_do(
    empty_db_url: str,
) -> None:
    """An ``exception_cases`` table of another shape in the way of revision 0005: the upgrade
    changes nothing, and its error names the table, the columns missing and what to do, on one
    line."""
    engine = make_engine(empty_db_url)
    try:
        upgrade_to(engine, "0004")
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE exception_cases (id INTEGER PRIMARY KEY)"))
        with pytest.raises(StoreError) as caught:
            upgrade(engine)
        assert current_revision(engine) == "0004"
    finally:
        engine.dispose()
    message = str(caught.value)
    assert "\n" not in message
    assert "exception_cases" in message
    assert "exception_id" in message  # a column it lacks
    assert "recon db upgrade" in message  # what to run once it is out of the way
