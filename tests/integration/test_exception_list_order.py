"""`recon exceptions list` lists in the report's order (what needs action first, the most urgent
kind, the most money at stake), and where those are equal orders ids as numbers: the newest run
first, then E<run>-1, -2, … -10, not the text order E2-1, E2-10, E2-11, E2-2. On SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Engine, insert

from recon.ops.findings import list_text
from recon.store.tables import exception_cases, runs

AT = datetime(2026, 12, 1, 5, tzinfo=UTC)


def _run(conn: Any, at: datetime) -> int:
    row = {"started_at": at, "finished_at": at, "as_of": at, "status": "complete",
           "counts": "{}", "host": "h", "pid": 1}  # fmt: skip
    return int(conn.execute(insert(runs).values(row)).inserted_primary_key[0])


def _cases(run_id: int, numbers: list[int], at: datetime) -> list[dict[str, Any]]:
    return [
        {"exception_id": f"E{run_id}-{n}", "item_kind": "payout", "item_id": f"tx-{run_id}-{n}",
         "flag": "stale", "state": "open", "opened_run_id": run_id, "opened_at": at,
         "last_seen_run_id": run_id}
        for n in numbers
    ]  # fmt: skip


def test_ids_sort_as_numbers_newest_run_first(engine: Engine) -> None:
    """Inserted in text order; listed run by run (newest first), each run's ids by number."""
    with engine.begin() as conn:
        first = _run(conn, AT - timedelta(days=1))
        second = _run(conn, AT)
        conn.execute(insert(exception_cases), _cases(first, [1, 10, 2], AT - timedelta(days=1)))
        conn.execute(insert(exception_cases), _cases(second, [1, 10, 11, 2, 3, 9], AT))
    url = engine.url.render_as_string(hide_password=False)
    listed = json.loads(list_text(url, states=(), flags=(), fmt="json", zone=ZoneInfo("UTC")))
    assert [row["exception_id"] for row in listed] == [
        *(f"E{second}-{n}" for n in (1, 2, 3, 9, 10, 11)),
        *(f"E{first}-{n}" for n in (1, 2, 10)),
    ]
