"""Retention in the store: raw bodies past RECON_KEEP_RAW_DAYS go, evidence and
parsed fields stay; a nightly run prunes at its end. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, insert, select, update

from recon.night.prune import PruneCounts, prune_raw
from recon.night.run import RunOptions, run_reconciliation
from recon.sandbox.app import create_app
from recon.settings import Settings
from recon.store.lock import RunLock
from recon.store.tables import exception_cases, notifications, observations, run_returns, runs

AS_OF = datetime(2026, 12, 1, 5, tzinfo=UTC)
BEFORE = AS_OF - timedelta(days=90)
OLD = AS_OF - timedelta(days=100)
RECENT = AS_OF - timedelta(days=10)

# id: (transaction_id, fetched_at, type, related_transaction_id, status)
ANSWERS: dict[int, tuple[str, datetime, int | None, str | None, str]] = {
    1: ("P-old", OLD, 1, None, "ok"),  # dropped
    2: ("P-recent", RECENT, 1, None, "ok"),  # within retention
    3: ("P-open", OLD, 1, None, "ok"),  # its finding is open
    4: ("P-closed", OLD, 1, None, "ok"),  # dropped: its finding ended
    5: ("R-13", OLD, 13, None, "ok"),  # a return
    6: ("P-ret", OLD, 1, "R-13", "ok"),  # names a return
    7: ("R-claim", OLD, None, None, "not_found"),  # about an announced return
    8: ("R-judged", OLD, None, None, "not_found"),  # about a return a run judged
    9: ("P-old2", OLD, 1, None, "ok"),  # dropped (same time as 1: the keyset's tie)
}
# id: (kind, transaction_id, received_at)
NOTIFICATIONS: dict[int, tuple[str, str | None, datetime]] = {
    1: ("transaction", "P-old", OLD),  # dropped
    2: ("transaction", "P-recent", RECENT),
    3: ("returned_funds", "R-claim", OLD),
    4: ("transaction", "P-open", OLD),
    5: ("unknown", None, OLD),  # itself an open finding
    6: ("transaction", "R-13", OLD),  # about a return
    7: ("unknown", None, OLD),  # dropped: its finding ended
}


SEEDED = "seed"  # the host of the run whose answers the tables above are


def _run_row(conn: Any, at: datetime) -> int:
    row = {"started_at": at, "finished_at": at, "as_of": at, "status": "complete",
           "counts": "{}", "host": SEEDED, "pid": 1}  # fmt: skip
    return int(conn.execute(insert(runs).values(row)).inserted_primary_key[0])


def _case(n: int, kind: str, item: str, run_id: int, *, ended: bool) -> dict[str, Any]:
    return {"exception_id": f"E{run_id}-{n}", "item_kind": kind, "item_id": item,
            "flag": "stale", "state": "open" if not ended else "cleared", "opened_run_id": run_id,
            "opened_at": OLD, "last_seen_run_id": run_id,
            "ended_run_id": run_id if ended else None}  # fmt: skip


def _dedupe_key(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def seed(
    engine: Engine,
    answers: tuple[int, ...] = tuple(ANSWERS),
    notes: tuple[int, ...] = tuple(NOTIFICATIONS),
    *,
    findings: bool = True,
) -> None:
    """These answers and notifications of the tables above and (``findings``) two findings open,
    two ended and a judged return.

    The database numbers the rows, as it does a run's: an id written by hand does not move
    PostgreSQL's sequence, and the run's own answer would then collide with it. The tables' keys
    are found again through each row's transaction id (answers) or dedupe key (notifications)."""
    with engine.begin() as conn:
        run_id = _run_row(conn, OLD)
        conn.execute(
            insert(observations),
            [{"run_id": run_id, "transaction_id": tid, "fetched_at": at, "status": st,
              "state": 6, "type": typ, "amount": "1.00", "amount_minor": 100, "currency": "EUR",
              "related_transaction_id": rel, "raw": f'{{"id": "{tid}", "iban": "FI**"}}'}
             for i, (tid, at, typ, rel, st) in ANSWERS.items() if i in answers],
        )  # fmt: skip
        conn.execute(
            insert(notifications),
            [{"dedupe_key": _dedupe_key(i), "kind": kind, "transaction_id": tid, "state": 6,
              "amount": "1.00", "body": f"body {i}", "query": "", "source": "receiver",
              "received_at": at}
             for i, (kind, tid, at) in NOTIFICATIONS.items() if i in notes],
        )  # fmt: skip
        if not findings:
            return
        note_id = {n: stored for stored, n in _note_keys(conn)}
        conn.execute(
            insert(exception_cases),
            [_case(1, "payout", "P-open", run_id, ended=False),
             _case(2, "notification", str(note_id[5]), run_id, ended=False),
             _case(3, "payout", "P-closed", run_id, ended=True),
             _case(4, "notification", str(note_id[7]), run_id, ended=True)],
        )  # fmt: skip
        conn.execute(
            insert(run_returns).values(
                run_id=run_id, return_id="R-judged", confirmed=False, matched=False, notified=False
            )
        )


def _note_keys(conn: Any, *where: Any) -> list[tuple[int, int]]:
    """(stored id, key in NOTIFICATIONS) of the notifications ``where`` selects."""
    key = {_dedupe_key(n): n for n in NOTIFICATIONS}
    rows = conn.execute(select(notifications.c.id, notifications.c.dedupe_key).where(*where))
    return [(stored, key[dedupe]) for stored, dedupe in rows]


def held(engine: Engine) -> tuple[set[int], set[int]]:
    """Keys (in the tables above) of the seeded answers and the notifications that still hold a
    raw body; a later run's own answers are not in the tables."""
    key = {tid: n for n, (tid, *_) in ANSWERS.items()}
    with engine.connect() as conn:
        answers = conn.execute(
            select(observations.c.transaction_id)
            .join(runs, runs.c.id == observations.c.run_id)
            .where(runs.c.host == SEEDED, observations.c.raw.is_not(None))
        )  # fmt: skip
        notes = _note_keys(conn, notifications.c.body.is_not(None))
        return {key[tid] for tid in answers.scalars()}, {n for _, n in notes}


def test_a_prune_drops_raw_bodies_past_retention_and_keeps_evidence(engine: Engine) -> None:
    """Dry: counted, nothing changed. Then only raw bodies go; evidence and parsed fields stay."""
    seed(engine)
    expected = PruneCounts(
        answers_dropped=3, answers_kept=5, notifications_dropped=2, notifications_kept=4
    )
    dry = prune_raw(engine.connect, before=BEFORE, dry_run=True, batch=2)
    assert dry == expected
    assert held(engine) == (set(ANSWERS), set(NOTIFICATIONS))

    with RunLock(engine) as lock:
        assert prune_raw(lock.fenced_transaction, before=BEFORE, batch=2) == expected
    assert held(engine) == ({2, 3, 5, 6, 7, 8}, {2, 3, 4, 5, 6})
    with engine.connect() as conn:
        parsed = conn.execute(
            select(observations.c.transaction_id, observations.c.state, observations.c.amount)
            .where(observations.c.transaction_id == "P-old")
        ).one()  # fmt: skip
        kind = conn.execute(
            select(notifications.c.kind).where(notifications.c.dedupe_key == _dedupe_key(1))
        ).scalar()
    assert tuple(parsed) == ("P-old", 6, "1.00")
    assert kind == "transaction"

    with RunLock(engine) as lock:  # a second prune finds nothing more to drop
        again = prune_raw(lock.fenced_transaction, before=BEFORE, batch=2)
    assert again == PruneCounts(answers_kept=5, notifications_kept=4)


def test_evidence_goes_once_its_finding_has_ended(engine: Engine) -> None:
    """P-open's answer and notification are kept while its case is open, dropped after it ends."""
    seed(engine)
    with RunLock(engine) as lock:
        prune_raw(lock.fenced_transaction, before=BEFORE)
        with lock.fenced_transaction() as conn:
            conn.execute(
                update(exception_cases)
                .where(exception_cases.c.item_id == "P-open")
                .values(ended_run_id=exception_cases.c.opened_run_id)
            )
        counts = prune_raw(lock.fenced_transaction, before=BEFORE)
    assert (counts.answers_dropped, counts.notifications_dropped) == (1, 1)
    assert held(engine) == ({2, 5, 6, 7, 8}, {2, 3, 5, 6})


@pytest.mark.timeout(120, method="thread")
def test_a_nightly_run_drops_raw_bodies_past_recon_keep_raw_days(
    engine: Engine, tmp_path: Path
) -> None:
    """At the end of a run as of AS_OF, with RECON_KEEP_RAW_DAYS=90: the 100-day-old answers
    and notification lose their raw body, the 10-day-old ones keep theirs (the evidence rules
    are the tests above)."""
    seed(engine, answers=(1, 2, 9), notes=(1, 2), findings=False)
    url = engine.url.render_as_string(hide_password=False)
    settings = Settings(database_url=url, out_dir=tmp_path, keep_raw_days=90)
    # No payout is stored; the run asks only about the transaction ids the two notifications name
    # (the sandbox knows neither), so it stores two answers of its own beside the seeded ones.
    sandbox = httpx.ASGITransport(app=create_app())
    result = run_reconciliation(
        settings,
        RunOptions(out_dir=tmp_path, as_of=AS_OF, email=False),
        transport=sandbox,
        engine=engine,
    )
    assert result.status == "complete", result.summary
    assert held(engine) == ({2}, {2})
