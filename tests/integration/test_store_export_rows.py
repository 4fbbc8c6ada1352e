"""The provider's export files kept: a file once per account and sha256, a row once per content
(a changed row is its next version, the history keeps both), accounts apart, a file at the cap
recorded as capped, and the reads by settlement window and by covered day. On SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Engine, func, select

from recon.export_rows import ExportKind, ExportRow
from recon.store.export_rows import (
    StoredExport,
    covered_days,
    day_window,
    latest_rows,
    store_export,
)
from recon.store.export_tables import provider_export_files, provider_export_rows

ZONE = ZoneInfo("Europe/Oslo")
DAY = date(2026, 11, 3)
FROM, TO = day_window(DAY, DAY, ZONE)  # 2026-11-02 23:00 UTC to 2026-11-03 23:00 UTC
SETTLED = datetime(2026, 11, 3, 10, tzinfo=UTC)
HEADERS = ("Transaction ID", "Type", "Status", "Amount", "Currency", "Settled at", "Note")


def _row(tid: str, line: int = 2, **changes: Any) -> ExportRow:
    base = ExportRow(
        line=line,
        transaction_id=tid,
        kind=ExportKind.PAYOUT,
        type_raw="1",
        state=4,
        state_raw="4",
        amount_minor=12_50,
        currency="EUR",
        merchant_reference=f"ref-{tid}",
        settled=SETTLED,
        created=SETTLED - timedelta(hours=1),
        fee_amount_minor=30,
        fee_id=f"fee-{tid}",
        extra={"Note": "ÆØÅ"},
    )
    return replace(base, **changes)


def _store(
    engine: Engine,
    rows: Sequence[ExportRow],
    *,
    account: str = "brand_a",
    window: tuple[datetime, datetime] = (FROM, TO),
    cap: int = 100_000,
    data: bytes | None = None,
) -> StoredExport:
    """Store ``rows`` as one file whose bytes are ``data`` (default: made of the rows)."""
    data = data if data is not None else repr(rows).encode()
    return store_export(
        engine,
        account=account,
        settled_from=window[0],
        settled_to=window[1],
        data_sha256=hashlib.sha256(data).hexdigest(),
        headers=HEADERS,
        rows=rows,
        source="file",
        name="export.csv",
        row_cap=cap,
    )


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        files = conn.execute(select(func.count()).select_from(provider_export_files)).scalar_one()
        rows = conn.execute(select(func.count()).select_from(provider_export_rows)).scalar_one()
    return int(files), int(rows)


def _latest(engine: Engine, account: str = "brand_a", **options: Any) -> list[ExportRow]:
    with engine.connect() as conn:
        return latest_rows(conn, account, FROM, TO, **options)


def test_reimported_file_changes_nothing(engine: Engine) -> None:
    """The same bytes for the same account a second time store nothing and say so."""
    rows = [_row("t1"), _row("t2", line=3)]
    first = _store(engine, rows)
    assert (first.new_file, first.rows, first.rows_new, first.capped) == (True, 2, 2, False)
    before = _counts(engine)
    again = _store(engine, rows)
    assert again == StoredExport(first.file_id, new_file=False, rows=2, capped=False)
    assert _counts(engine) == before == (1, 2)


def test_stored_rows_read_back_as_given(engine: Engine) -> None:
    """Every field of a row comes back from the store as it was given (times in UTC, extra
    columns, no fee) and the file keeps its headers."""
    rows = [_row("t1"), _row("t2", line=3, fee_amount_minor=None, fee_id=None, extra={})]
    _store(engine, rows)
    assert _latest(engine) == rows
    with engine.connect() as conn:
        headers, source = conn.execute(
            select(provider_export_files.c.headers, provider_export_files.c.source)
        ).one()
    assert (headers, source) == ('["Transaction ID", "Type", "Status", "Amount", "Currency", '
                                 '"Settled at", "Note"]', "file")  # fmt: skip


def test_unchanged_row_in_another_file_changes_nothing(engine: Engine) -> None:
    """A row seen again in another file with the same content adds no version; only the new
    file and its new rows are stored."""
    _store(engine, [_row("t1"), _row("t2", line=3)])
    second = _store(engine, [_row("t2", line=7), _row("t3", line=8)])
    assert (second.new_file, second.rows_new, second.rows_unchanged) == (True, 1, 1)
    assert second.rows_versioned == 0
    assert _counts(engine) == (2, 3)
    assert [(r.transaction_id, r.line) for r in _latest(engine)] == [
        ("t1", 2),
        ("t2", 3),  # the version stored first: its line in the first file
        ("t3", 8),
    ]


def test_changed_row_is_a_new_version(engine: Engine) -> None:
    """A row whose state changed is its next version: the latest read shows the change, and
    the history keeps both versions."""
    _store(engine, [_row("t1", state=2, state_raw="2"), _row("t2", line=3)])
    later = _store(engine, [_row("t1", state=4, state_raw="4"), _row("t2", line=3)])
    assert (later.rows_new, later.rows_unchanged, later.rows_versioned) == (0, 1, 1)
    assert {r.transaction_id: r.state for r in _latest(engine)} == {"t1": 4, "t2": 4}
    r = provider_export_rows.c
    with engine.connect() as conn:
        history = conn.execute(
            select(r.version, r.state, r.file_id)
            .where(r.transaction_id == "t1")
            .order_by(r.version)
        ).all()
    assert [(v, s) for v, s, _ in history] == [(1, 2), (2, 4)]
    assert history[0].file_id != history[1].file_id
    # and back to the first content: a third version, not the first again
    back = _store(engine, [_row("t1", state=2, state_raw="2")])
    assert back.rows_versioned == 1
    assert {r.transaction_id: r.state for r in _latest(engine)} == {"t1": 2, "t2": 4}


def test_changed_extra_column_is_a_new_version(engine: Engine) -> None:
    """A column the mapping does not name is part of the row's content."""
    _store(engine, [_row("t1")])
    later = _store(engine, [_row("t1", extra={"Note": "corrected"})])
    assert later.rows_versioned == 1
    assert [r.extra for r in _latest(engine)] == [{"Note": "corrected"}]


def test_row_repeated_in_one_file(engine: Engine) -> None:
    """A row twice in one file with the same content is stored once; with another content, the
    later line is the next version."""
    stored = _store(engine, [_row("t1"), _row("t1", line=3), _row("t1", line=4, state=5)])
    assert (stored.rows_new, stored.rows_unchanged, stored.rows_versioned) == (1, 1, 1)
    assert [(r.line, r.state) for r in _latest(engine)] == [(4, 5)]


def test_same_id_of_another_kind_is_another_row(engine: Engine) -> None:
    """A fee row naming the payout's id is a row of its own, read by kind."""
    fee = _row("t1", line=3, kind=ExportKind.FEE, type_raw="Fee", amount_minor=30)
    stored = _store(engine, [_row("t1"), fee])
    assert stored.rows_new == 2
    assert [r.kind for r in _latest(engine)] == [ExportKind.FEE, ExportKind.PAYOUT]
    assert _latest(engine, kinds=[ExportKind.FEE]) == [fee]
    assert _latest(engine, kinds=[ExportKind.PAYOUT, ExportKind.TOP_UP]) == [_row("t1")]


def test_two_accounts_never_mix(engine: Engine) -> None:
    """The same file and the same ids in two accounts are two files and two rows each; a change
    in one account is not a version in the other, and each account reads its own."""
    rows = [_row("t1"), _row("t2", line=3)]
    a = _store(engine, rows, account="brand_a", data=b"same bytes")
    b = _store(engine, rows, account="brand_b", data=b"same bytes")
    assert (a.new_file, b.new_file, b.rows_new) == (True, True, 2)
    assert a.file_id != b.file_id
    changed = _store(engine, [_row("t1", amount_minor=99)], account="brand_b")
    assert changed.rows_versioned == 1
    assert [r.amount_minor for r in _latest(engine, "brand_a")] == [12_50, 12_50]
    assert [r.amount_minor for r in _latest(engine, "brand_b")] == [99, 12_50]
    assert _latest(engine, "brand_c") == []
    assert _counts(engine) == (3, 5)
    with engine.connect() as conn:
        assert covered_days(conn, "brand_c", ZONE).days == frozenset()


def test_capped_file_is_recorded_capped_and_covers_no_day(engine: Engine) -> None:
    """A file of exactly the row cap is stored capped: its rows are kept, but its days are not
    covered until a file below the cap covers them."""
    two_days = day_window(DAY, DAY + timedelta(days=1), ZONE)
    capped = _store(engine, [_row("t1"), _row("t2", line=3)], window=two_days, cap=2)
    assert (capped.capped, capped.rows_new) == (True, 2)
    with engine.connect() as conn:
        flag = conn.execute(select(provider_export_files.c.capped)).scalar_one()
        assert bool(flag) is True
        assert covered_days(conn, "brand_a", ZONE).days == frozenset()
    assert len(_latest(engine)) == 2
    below = _store(engine, [_row("t1")], window=(FROM, TO), cap=2)
    assert below.capped is False
    with engine.connect() as conn:
        coverage = covered_days(conn, "brand_a", ZONE)
    assert (coverage.days, coverage.last_pulled) == (frozenset({DAY}), DAY)


def test_covered_days_are_whole_days_in_the_zone(engine: Engine) -> None:
    """A day is covered when a file's window holds it whole in the zone; the last pulled day is
    the latest covered."""
    week = day_window(date(2026, 10, 24), date(2026, 10, 26), ZONE)  # over the end of summer time
    _store(engine, [], window=week, data=b"week")
    part = (TO - timedelta(hours=12), TO + timedelta(days=1, hours=1))  # half of the 3rd, the 4th
    _store(engine, [], window=part, data=b"part")
    with engine.connect() as conn:
        coverage = covered_days(conn, "brand_a", ZONE)
        utc = covered_days(conn, "brand_a", ZoneInfo("UTC"))
    days = {date(2026, 10, 24), date(2026, 10, 25), date(2026, 10, 26), date(2026, 11, 4)}
    assert coverage.days == days
    assert coverage.last_pulled == date(2026, 11, 4)
    # the same windows in UTC hold other whole days
    assert utc.days == {date(2026, 10, 24), date(2026, 10, 25), date(2026, 11, 4)}


def test_window_reads_latest_version_settled_in_it(engine: Engine) -> None:
    """The window is [from, to): a row settled at its start is in it, at its end is not; a row
    whose latest version settled outside the window is not read, whichever version was in it."""
    rows = [
        _row("start", settled=FROM),
        _row("end", line=3, settled=TO),
        _row("before", line=4, settled=FROM - timedelta(microseconds=1)),
        _row("last", line=5, settled=TO - timedelta(microseconds=1)),
        _row("unsettled", line=6, settled=None, state=2, state_raw="2"),
        _row("moved", line=7),
    ]
    _store(engine, rows)
    _store(engine, [_row("moved", settled=TO + timedelta(days=1))])
    assert [r.transaction_id for r in _latest(engine)] == ["last", "start"]
    with engine.connect() as conn:
        later = latest_rows(conn, "brand_a", TO, TO + timedelta(days=2))
    assert [(r.transaction_id, r.settled) for r in later] == [
        ("end", TO),
        ("moved", TO + timedelta(days=1)),
    ]


def test_store_in_the_callers_transaction(engine: Engine) -> None:
    """Given a connection, the file and its rows are written in the caller's transaction: rolled
    back with it."""
    with engine.connect() as conn, conn.begin() as tx:
        stored = store_export(
            conn,
            account="brand_a",
            settled_from=FROM,
            settled_to=TO,
            data_sha256="0" * 64,
            headers=HEADERS,
            rows=[_row("t1")],
            source="api",
            name=None,
            row_cap=100_000,
        )
        assert stored.rows_new == 1
        tx.rollback()
    assert _counts(engine) == (0, 0)


def test_a_day_pulled_in_two_halves_is_covered(engine: Engine) -> None:
    """A day is covered when the complete files' windows together hold it whole (a day pulled as
    two halves after a cap split), not only when one file does; a half alone covers nothing, and
    a capped half does not count."""
    noon = FROM + timedelta(hours=12)
    _store(engine, [_row("t1")], window=(FROM, noon), data=b"first half")
    with engine.connect() as conn:
        assert covered_days(conn, "brand_a", ZONE).days == frozenset()
    _store(engine, [_row("t2")], window=(noon, TO), data=b"second half, capped", cap=1)
    with engine.connect() as conn:
        assert covered_days(conn, "brand_a", ZONE).days == frozenset()
    _store(engine, [_row("t2"), _row("t3")], window=(noon, TO), data=b"second half")
    with engine.connect() as conn:
        coverage = covered_days(conn, "brand_a", ZONE)
    assert (coverage.days, coverage.last_pulled) == (frozenset({DAY}), DAY)


def test_the_same_bytes_for_two_windows_are_two_files(engine: Engine) -> None:
    """Two empty days give byte-identical files (the header only): each is stored as the claim
    about its own window, so both days are covered; the same bytes for the same window again
    change nothing."""
    next_day = day_window(DAY + timedelta(days=1), DAY + timedelta(days=1), ZONE)
    first = _store(engine, [], data=b"header only")
    second = _store(engine, [], window=next_day, data=b"header only")
    assert (first.new_file, second.new_file) == (True, True)
    assert first.file_id != second.file_id
    again = _store(engine, [], window=next_day, data=b"header only")
    assert again == StoredExport(second.file_id, new_file=False, rows=0, capped=False)
    assert _counts(engine) == (2, 0)
    with engine.connect() as conn:
        coverage = covered_days(conn, "brand_a", ZONE)
    assert coverage.days == frozenset({DAY, DAY + timedelta(days=1)})
