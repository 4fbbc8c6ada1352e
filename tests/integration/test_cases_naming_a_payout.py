"""`recon show` of a payout lists the findings about it and those naming it among their members (a
double payment is filed under its twin); an id's LIKE wildcards match only themselves. SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import Engine, insert

from recon.store.cases import cases_of_items
from recon.store.tables import exception_cases, runs

AT = datetime(2026, 11, 20, 6, tzinfo=UTC)


def _case(eid: str, item: str, members: list[str]) -> dict[str, object]:
    return {
        "exception_id": eid, "item_kind": "payout", "item_id": item, "flag": "double_payment",
        "state": "open", "last_facts": json.dumps({"members": members}, ensure_ascii=False),
        "opened_run_id": 1, "opened_at": AT, "last_seen_run_id": 1,
    }  # fmt: skip


def test_a_payout_finds_the_finding_filed_under_its_twin_and_no_other(engine: Engine) -> None:
    """`_`, `%`, a backslash and a non-ASCII letter in ids are matched as themselves."""
    with engine.begin() as conn:
        conn.execute(insert(runs).values(id=1, started_at=AT, as_of=AT, status="complete",
                                         counts="{}", host="h", pid=1))  # fmt: skip
        conn.execute(insert(exception_cases), [
            _case("E1-1", "tx_1", ["tx_1", "twin%2", "åsa-9", "back\\slash"]),
            _case("E1-2", "tx11", ["tx11", "twinx2"]),
        ])  # fmt: skip
    with engine.connect() as conn:
        assert [c.exception_id for c in cases_of_items(conn, ["twin%2"])] == ["E1-1"]
        assert [c.exception_id for c in cases_of_items(conn, ["tx_1"])] == ["E1-1"]
        assert [c.exception_id for c in cases_of_items(conn, ["åsa-9"])] == ["E1-1"]
        assert [c.exception_id for c in cases_of_items(conn, ["back\\slash"])] == ["E1-1"]
        assert [c.exception_id for c in cases_of_items(conn, ["twinx2"])] == ["E1-2"]
        assert cases_of_items(conn, ["tx"]) == []
