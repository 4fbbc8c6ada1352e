"""The roll-forward's breaks as cases (issue 26): which stand, and opening new ones.

A break is a finding like any other (``exception_cases``, ``run_exceptions``): opened by the run
that found it, kept (not judged again by later runs) until a person resolves it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, insert, select

from recon.constants import CaseState, FlagStatus
from recon.frames import ItemKind
from recon.store.tables import exception_cases, run_exceptions

_C = exception_cases.c


def live_break_ids(conn: Connection, flag: str) -> frozenset[str]:
    """The items of the roll-forward's cases of kind ``flag`` that still stand."""
    query = select(_C.item_id).where(
        _C.item_kind == ItemKind.ROLLFORWARD.value,
        _C.flag == flag,
        _C.ended_run_id.is_(None),
    )
    return frozenset(str(i) for i in conn.scalars(query))


def open_break_cases(
    conn: Connection,
    *,
    run_id: int,
    as_of: datetime,
    flag: str,
    items: list[tuple[str, str | None]],
) -> None:
    """A new case (numbered after the run's others) and a report row for each break's (item,
    facts as stored)."""
    opened = int(conn.scalar(select(func.count()).where(_C.opened_run_id == run_id)) or 0)
    cases, rows = [], []
    for n, (item_id, facts) in enumerate(items, start=opened + 1):
        eid = f"E{run_id}-{n}"
        key = {
            "item_kind": ItemKind.ROLLFORWARD.value,
            "item_id": item_id,
            "flag": flag,
        }
        cases.append(
            {
                **key,
                "exception_id": eid,
                "state": CaseState.OPEN.value,
                "facts": facts,
                "last_facts": facts,
                "opened_run_id": run_id,
                "opened_at": as_of,
                "last_seen_run_id": run_id,
                "version": 1,
            }
        )
        rows.append(
            {
                **key,
                "run_id": run_id,
                "status": FlagStatus.NEW.value,
                "facts": facts,
                "exception_id": eid,
                "opened_at": as_of,
            }
        )
    if cases:
        conn.execute(insert(exception_cases), cases)
        conn.execute(insert(run_exceptions), rows)
