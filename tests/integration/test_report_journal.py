"""The journal lines a run made, read from the store by its run id, in the night's pack and in the
pack ``recon report`` rebuilds: the same bytes, with and without entries; on SQLite, PostgreSQL
and MariaDB for the read.

The nights' lines are the night's own journal step's (from the scripted provider's answers);
the store read's test books the core's entries from literal money facts.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, func, insert, select, update

from recon.journal_settings import JournalCodes, JournalSetting
from recon.night.run import RunOptions, run_reconciliation
from recon.reconcile.journal import PayoutMoney
from recon.report.build import from_store
from recon.report.pack import write_configured
from recon.settings import Settings
from recon.store.db import ensure_schema, make_engine
from recon.store.journal_reads import run_journal, run_journal_batches
from recon.store.journal_tables import journal_batches, journal_lines
from recon.store.tables import runs
from tests.integration.journal_support import book
from tests.integration.scripted_provider import START, Provider, night_settings
from tests.integration.test_night_report_rebuilt import _files, _import

AT = datetime(2026, 11, 20, 5, tzinfo=UTC)


def _money(tx: str, amount: int, fee: int | None = None) -> PayoutMoney:
    return PayoutMoney(tx, f"ref-{tx}", "SEK", amount, "settled", AT, None, fee, None)


def _run(engine: Engine, at: datetime) -> int:
    row = {"started_at": at, "finished_at": at, "as_of": at, "status": "complete",
           "counts": "{}", "host": "h", "pid": 1}  # fmt: skip
    with engine.begin() as conn:
        return int(conn.execute(insert(runs).values(row)).inserted_primary_key[0])


def test_a_runs_lines_are_read_by_its_id_in_entry_order(engine: Engine) -> None:
    """Two runs' lines: each run reads its own, by entry number and line, as the core made
    them; another account's are not among them."""
    first, second = _run(engine, AT), _run(engine, AT + timedelta(days=1))
    with engine.begin() as conn:
        made = book(conn, first, [_money("b", 500), _money("a", 1000, fee=25)], AT)
        again = book(conn, second, [_money("b", 500), _money("a", 1000, fee=30)],
                     AT + timedelta(days=1))  # fmt: skip
        book(conn, second, [_money("a", 1000)], AT, account="other")
    assert run_journal(engine, first, "default") == made
    assert [(line.number, line.line) for line in made] == [(1, 1), (1, 2), (2, 1), (2, 2),
                                                           (3, 1), (3, 2)]  # fmt: skip
    assert run_journal(engine, second, "default") == again
    assert [line.reverses is not None for line in again] == [True, True, False, False]
    with engine.connect() as conn:
        lines, batches = run_journal_batches(conn, second, "default")
    assert lines == again
    assert batches == [None] * 4


def _journal_settings(engine: Engine, work: Path) -> Settings:
    codes = JournalCodes(payouts_payable="2890", provider_balance="1940", fee_expense="6570")
    return night_settings(engine, work).model_copy(
        update={"journal": JournalSetting(accounts=codes), "report_workbook": "night"}
    )


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"))))


def test_the_nights_pack_shows_its_journal_and_the_rebuild_is_the_same(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """Three nights with a journal: entries, none, a reversal. Each night's journal.csv holds the
    lines it made, report.html its section, report.xlsx its sheet; ``recon report --run`` of the
    night rebuilds every file byte for byte, after an export stamped a batch too (a run's report
    shows its lines as it left them); ``recon report`` of the latest nights shows the batch."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    provider = Provider(states={"p0": 6, "p1": 6})
    settings = _journal_settings(engine, tmp_path)
    # The record of p0 changes before the third night: asked again, its settlement is reversed
    # and booked again at the new amount.
    records = [{"p0": "10.00", "p1": "10.00"}] * 2 + [{"p0": "12.00", "p1": "10.00"}]
    try:
        for n, amounts in enumerate(records):
            as_of = START + timedelta(hours=6 * n)
            _import(engine, tmp_path, amounts)
            night = tmp_path / f"night{n}"
            result = run_reconciliation(
                settings, RunOptions(out_dir=night, as_of=as_of, email=False),
                transport=provider.transport(), engine=engine,
            )  # fmt: skip
            lines = _rows(night / "journal.csv")
            assert len(lines) == [4, 0, 4][n], n
            page = (night / "report.html").read_text("utf-8")
            assert "<h2>Journal</h2>" in page
            assert ("No entries tonight." in page) == (n == 1)
            with engine.begin() as conn:  # an export sends the run's lines before the rebuild
                conn.execute(
                    insert(journal_batches).values(
                        batch=n + 1, format="csv", created_at=as_of, lines=len(lines),
                        options="{}", files="[]",
                    )
                )  # fmt: skip
                conn.execute(
                    update(journal_lines)
                    .where(journal_lines.c.run_id == result.run_id)
                    .values(batch=n + 1)
                )
            rebuilt = tmp_path / f"rebuilt{n}"
            data = from_store(engine, timezone=settings.timezone, run_id=result.run_id,
                              window_days=settings.report_days, journal=True)  # fmt: skip
            write_configured(settings, rebuilt, data)
            assert _files(night) == _files(rebuilt), n
        reversal = _rows(tmp_path / "night2" / "journal.csv")
        assert [r["reverses"] != "" for r in reversal] == [True, True, False, False]
        standing = from_store(engine, timezone="UTC", standing=True, journal=True)
        assert standing.journal is not None
        assert standing.journal["batch"].tolist() == [3] * 4
    finally:
        engine.dispose()


def test_without_a_journal_the_night_writes_no_journal_csv(
    no_retry_waits: None, tmp_path: Path
) -> None:
    """No [journal]: no entries are made or reported, and an earlier journal.csv in the report
    directory goes."""
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    ensure_schema(engine)
    provider = Provider(states={"p0": 6})
    _import(engine, tmp_path, {"p0": "10.00"})
    night = tmp_path / "night"
    night.mkdir()
    (night / "journal.csv").write_text("old\n", encoding="utf-8")
    try:
        run_reconciliation(
            night_settings(engine, tmp_path), RunOptions(out_dir=night, as_of=START, email=False),
            transport=provider.transport(), engine=engine,
        )  # fmt: skip
        assert not (night / "journal.csv").exists()
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(journal_lines)) == 0
        assert "Journal" not in (night / "report.html").read_text("utf-8")
    finally:
        engine.dispose()
