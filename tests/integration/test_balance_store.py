"""Closing balances kept and read back, and the statements read from the store, on SQLite,
PostgreSQL and MariaDB: a record never overwrites, the latest version of an export row counts,
a file cut at the cap covers nothing, and two accounts never mix."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import Engine, insert

from recon.reconcile.balance import Line, Status
from recon.store.balance import balance_statements, read_closings, record_closing
from recon.store.export_tables import provider_export_files, provider_export_rows

UTC_ZONE = ZoneInfo("UTC")
NOV_FROM, NOV_TO = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)


def _file(engine: Engine, account: str, sha: str, *, capped: bool = False) -> int:
    with engine.begin() as conn:
        key = conn.execute(
            insert(provider_export_files).values(
                provider_account=account, sha256=sha * 64, settled_from=NOV_FROM,
                settled_to=NOV_TO, rows=1, capped=capped, headers="[]", source="file",
                stored_at=NOV_TO,
            )
        ).inserted_primary_key  # fmt: skip
    assert key is not None
    return int(key[0])


def _row(engine: Engine, account: str, file_id: int, version: int, state: int, amount: int) -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(provider_export_rows).values(
                provider_account=account, kind="payout", transaction_id="P1", version=version,
                file_id=file_id, line=2, digest=str(version) * 64, type_raw="1", state=state,
                state_raw=str(state), amount_minor=amount, currency="EUR",
                settled=datetime(2026, 11, 3, 9, tzinfo=UTC),
            )
        )  # fmt: skip


def _record(engine: Engine, account: str, day: date, minor: int) -> None:
    record_closing(
        engine, account=account, currency="EUR", day=day, closing_minor=minor, note=None, by="t"
    )


def test_records_are_kept_and_the_latest_row_version_counts(engine: Engine) -> None:
    """A second record of a day is kept beside the first and restates it; a payout settled then
    reversed (version 2, state 3) is not counted; the statement ties at the opening."""
    _row(engine, "default", _file(engine, "default", "a"), 1, 6, 10_000)
    _row(engine, "default", _file(engine, "default", "b"), 2, 3, 10_000)
    _record(engine, "default", date(2026, 10, 31), 50_000)
    _record(engine, "default", date(2026, 11, 30), 40_000)
    _, earlier = record_closing(
        engine, account="default", currency="EUR", day=date(2026, 11, 30), closing_minor=50_000,
        note="the reversal came back", by="t",
    )  # fmt: skip
    assert [r.closing_minor for r in earlier] == [40_000]
    with engine.connect() as conn:
        assert len(read_closings(conn)) == 3
        [s], _ = balance_statements(conn, UTC_ZONE)
    assert (s.count(Line.PAYOUTS_SETTLED), s.status) == (0, Status.TIED)
    assert s.closing.closing_minor == 50_000


def test_a_capped_file_covers_nothing_and_accounts_never_mix(engine: Engine) -> None:
    """Account b's only file is cut at the cap: its statement is incomplete; account a's rows
    never count in b's statement, nor b's in a's."""
    _row(engine, "a", _file(engine, "a", "c"), 1, 6, 10_000)
    _row(engine, "b", _file(engine, "b", "d", capped=True), 1, 6, 7_000)
    for account, closing in (("a", 90_000), ("b", 93_000)):
        _record(engine, account, date(2026, 10, 31), 100_000)
        _record(engine, account, date(2026, 11, 30), closing)
    with engine.connect() as conn:
        found, _ = balance_statements(conn, UTC_ZONE)
        only_b, _ = balance_statements(conn, UTC_ZONE, "b")
    got = {s.account: (s.amount(Line.PAYOUTS_SETTLED), s.status, len(s.uncovered)) for s in found}
    assert got == {"a": (10_000, Status.TIED, 0), "b": (7_000, Status.INCOMPLETE, 30)}
    assert [s.account for s in only_b] == ["b"]
