"""The journal step after the account's mark reads only the payouts written or changed since, and
makes exactly the lines the whole account's facts make: a payout a run wrote since, one an import
changed, one settled while ``[journal]`` was off. SQLite, PostgreSQL and MariaDB.

The store is written as the night's writers leave it: payouts imported (``upsert_payouts``), a
run's outcome written with its ``last_run_id`` as ``apply_decision`` sets it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Engine, insert, select, update

from recon.night.journal import book
from recon.night.lifecycle import Run, RunMode
from recon.reconcile.journal import (
    Event,
    JournalLine,
    JournalParams,
    Role,
    booked_entries,
    journal_entries,
)
from recon.store.journal import read_books, read_mark
from recon.store.journal_reads import run_journal
from recon.store.payouts import upsert_payouts
from recon.store.tables import payouts, runs

AT = datetime(2026, 11, 20, 5, tzinfo=UTC)
CODES = {role: str(2000 + n) for n, role in enumerate(Role)}


def _run(conn: Connection, at: datetime) -> Run:
    row = {"started_at": at, "as_of": at, "status": "running", "counts": "{}", "host": "h",
           "pid": 1}  # fmt: skip
    run_id = int(conn.execute(insert(runs).values(row)).inserted_primary_key[0])
    return Run(RunMode.NIGHTLY, at, at, id=run_id)


def _params(at: datetime) -> JournalParams:
    return JournalParams(provider_account="default", codes=CODES, zone=ZoneInfo("UTC"), as_of=at)


def _import(conn: Connection, *amounts: tuple[str, int]) -> None:
    rows = [
        {"transaction_id": tx, "amount_minor": amount, "currency": "SEK",
         "merchant_reference": f"ref-{tx}"}
        for tx, amount in amounts
    ]  # fmt: skip
    upsert_payouts(conn, rows, now=AT)


def _write(conn: Connection, run: Run, tx: str, outcome: str, fee: int | None = None) -> None:
    """What a run's apply writes of one payout: its outcome and money, and its last_run_id."""
    values = {"outcome": outcome, "fee_minor": fee, "settled_at": run.as_of - timedelta(hours=3),
              "returned_minor": 0, "last_run_id": run.stored_id}  # fmt: skip
    conn.execute(update(payouts).where(payouts.c.transaction_id == tx).values(values))


def _whole(conn: Connection, params: JournalParams) -> list[JournalLine]:
    """The lines the whole account's facts make now (the read without a mark)."""
    books = read_books(conn, "default")
    return journal_entries(
        books.payouts, booked_entries(books.lines), params, next_number=books.next_number
    )


def _night(engine: Engine, at: datetime, *, journal: bool = True) -> tuple[list[JournalLine], int]:
    """One run's journal step: the whole account's lines beforehand, and the entries it made."""
    with engine.begin() as conn:
        run, params = _run(conn, at), _params(at)
        expected = _whole(conn, params)
        made = book(conn, run, params if journal else None)
        assert run_journal(conn, run.stored_id, "default") == (expected if journal else [])
    return expected, made


def test_a_night_after_the_mark_books_what_the_whole_account_would(engine: Engine) -> None:
    """With a mark, the step reads only the payouts written or changed since it, yet books the
    same lines as from every payout: a settlement a run wrote since, a payout a run failed (its
    entries reversed), an amount an import changed (reversed and booked again), and a payout
    settled on a night without ``[journal]``; untouched payouts add nothing."""
    with engine.begin() as conn:
        _import(conn, ("tx1", 1000), ("tx2", 2000), ("tx3", 3000), ("tx4", 4000), ("tx5", 5000))
        first = _run(conn, AT)
        for tx in ("tx1", "tx2", "tx3"):
            _write(conn, first, tx, "settled", fee=10)
    _, made = _night(engine, AT + timedelta(hours=1))  # no mark: the whole account
    assert made == 6
    with engine.connect() as conn:
        marked = read_mark(conn, "default")
    assert marked is not None

    later = AT + timedelta(days=1)
    with engine.begin() as conn:
        _import(conn, ("tx2", 2500))  # a record change on a reconciled payout, no run
        night = _run(conn, later)
        _write(conn, night, "tx3", "failed")
        _write(conn, night, "tx4", "settled")
    expected, made = _night(engine, later + timedelta(hours=1))
    with engine.connect() as conn:
        since = read_books(conn, "default", since=marked)
    assert {p.transaction_id for p in since.payouts} == {"tx2", "tx3", "tx4"}
    assert {(line.transaction_id, line.event, line.reverses is None) for line in expected} == {
        ("tx2", Event.PAYOUT_SETTLED, False),
        ("tx2", Event.PAYOUT_SETTLED, True),
        ("tx3", Event.PAYOUT_SETTLED, False),
        ("tx3", Event.PAYOUT_FEE, False),
        ("tx4", Event.PAYOUT_SETTLED, True),
    }
    assert made == 5

    off = later + timedelta(days=1)
    with engine.begin() as conn:
        _write(conn, _run(conn, off), "tx5", "settled")
    assert _night(engine, off + timedelta(hours=1), journal=False)[1] == 0
    expected, made = _night(engine, off + timedelta(hours=2))
    assert {line.transaction_id for line in expected} == {"tx5"}
    assert made == 1
    _, made = _night(engine, off + timedelta(hours=3))
    assert made == 0


def test_the_mark_names_the_last_run_whose_journal_step_ran(engine: Engine) -> None:
    """Each journal step moves the account's mark to its run, in its transaction; a night
    without ``[journal]`` leaves it where it was."""
    with engine.begin() as conn:
        _import(conn, ("tx1", 1000))
    _night(engine, AT)
    with engine.connect() as conn:
        first = read_mark(conn, "default")
        top = conn.scalar(select(runs.c.id).order_by(runs.c.id.desc()).limit(1))
    assert first == top
    _night(engine, AT + timedelta(hours=1), journal=False)
    with engine.connect() as conn:
        assert read_mark(conn, "default") == first
