"""Nights that keep the books: with ``[journal]`` configured every nightly run writes the entries
the record proves, dated from the provider's settled time, and a night run again, resumed or
rebuilt by ``recon report`` adds no line. Bad journal settings end the night with exit 2 and no
line written. The sandbox over loopback HTTP; SQLite, PostgreSQL and MariaDB.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from recon.errors import ConfigError, InputError, ReportDirError, exit_code_of
from recon.ingest.notification_file import import_notifications
from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.report.build import from_store
from recon.report.pack import write_configured
from recon.settings import Settings
from recon.store.journal_tables import journal_lines
from recon.store.tables import observations, payouts, runs
from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Payout,
    Spec,
    World,
    create_payouts,
    served_world,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(180, method="thread")

ZONE = "Europe/Stockholm"
CODES = {
    "payouts_payable": "2890",
    "provider_balance": "1940",
    "fee_expense": "6570",
    "suspense": "2999",
}
DAY = 86400


@dataclass
class Books:
    """A served sandbox, a store with the payouts recon was told of, and nights run on them."""

    world: World
    engine: Engine
    workdir: Path
    payouts: list[Payout]
    nights: int = 0

    def settings(self, **overrides: Any) -> Settings:
        options: dict[str, Any] = {
            "database_url": self.engine.url.render_as_string(hide_password=False),
            "api_base_url": self.world.sandbox_url,
            "out_dir": self.workdir,
            "timezone": ZONE,
            "retry_attempts": 2,
            "retry_initial_wait": 0,
            "journal": {"accounts": CODES},
            **DAILY_SCHEDULES,
            **overrides,
        }
        return Settings(**options)

    def as_of(self) -> datetime:
        return datetime.fromtimestamp(float(Decimal(self.world.now())), UTC)

    def night(self, as_of: datetime | None = None, **settings: Any) -> RunResult:
        """One nightly run as of the sandbox's now (or ``as_of``), with ``settings`` changed."""
        self.nights += 1
        return run_reconciliation(
            self.settings(**settings),
            RunOptions(
                out_dir=self.workdir / f"night{self.nights}",
                as_of=as_of or self.as_of(),
                email=False,
            ),
            engine=self.engine,
        )

    def settled(self, transaction_id: str) -> datetime:
        """The provider's settled time of a transaction, as the sandbox holds it."""
        listed = self.world.admin.get("/sandbox/transactions").json()["transactions"]
        (record,) = [t for t in listed if t["id"] == transaction_id]
        return datetime.fromtimestamp(float(record["settled"]), UTC)


@pytest.fixture
def books(engine: Engine, tmp_path: Path) -> Iterator[Books]:
    """Two payouts at the sandbox (10.00 and 20.00 EUR, the schedule's fee on each), the
    merchant's record of both in the store; the sandbox's clock an hour on (both settled)."""
    with served_world("sqlite://", settle_after=60, receiver=False) as world:
        made = create_payouts(world, [Spec("10.00"), Spec("20.00")], prefix="jn")
        world.advance(3600)
        import_payouts_csv(
            engine, write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in made])
        )
        yield Books(world, engine, tmp_path, made)


def _lines(engine: Engine) -> list[dict[str, Any]]:
    j = journal_lines.c
    with engine.connect() as conn:
        rows = conn.execute(select(journal_lines).order_by(j.number, j.line)).mappings().all()
    return [dict(row) for row in rows]


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(journal_lines)).scalar_one())


def _entries(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_id: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_id.setdefault(line["journal_id"], []).append(line)
    return by_id


def test_a_settled_payout_books_its_settlement_and_fee_on_the_providers_settled_day(
    books: Books,
) -> None:
    """Two days after both settled: each payout's payout_settled (payable / provider balance) and
    payout_fee (fee expense / provider balance), dated the day the provider settled it in the
    configured zone, not the run's day; numbered 1 to 4; the run's id on every line."""
    books.world.advance(2 * DAY)
    result = books.night()
    assert result.exit_code == 0, result.summary
    lines = _lines(books.engine)
    entries = _entries(lines)
    assert len(entries) == result.counts.journal_entries == 4
    assert sorted({line["number"] for line in lines}) == [1, 2, 3, 4]
    assert {line["run_id"] for line in lines} == {result.run_id}
    zone = books.settings().zone
    for payout in books.payouts:
        tid = payout.transaction_id
        settled_day = books.settled(tid).astimezone(zone).date()
        mine = {e[0]["event"]: e for e in entries.values() if e[0]["transaction_id"] == tid}
        assert set(mine) == {"payout_settled", "payout_fee"}
        settled, fee = mine["payout_settled"], mine["payout_fee"]
        amount = int(payout.amount * 100)
        charged = int((Decimal("0.25") + payout.amount * Decimal("0.005")) * 100)
        assert [(x["account"], x["debit_minor"], x["credit_minor"]) for x in settled] == [
            ("2890", amount, 0),
            ("1940", 0, amount),
        ]
        assert [(x["account"], x["debit_minor"], x["credit_minor"]) for x in fee] == [
            ("6570", charged, 0),
            ("1940", 0, charged),
        ]
        for line in settled + fee:
            assert (line["event_date"], line["posting_date"]) == (settled_day, settled_day)
            assert (line["late"], line["reverses"], line["batch"]) == (False, None, None)
            assert (line["currency"], line["merchant_reference"]) == ("EUR", payout.reference)
        assert settled_day < result.as_of.astimezone(zone).date()


def test_the_providers_settled_time_is_kept_per_answer_and_on_the_payout(books: Books) -> None:
    """Every answer keeps the settled time it carried; the payout the latest answer's, which a
    night that does not ask about it leaves as it was."""
    books.night()
    tid = books.payouts[0].transaction_id
    expected = books.settled(tid)
    o, p = observations.c, payouts.c
    with books.engine.connect() as conn:
        answered = conn.execute(select(o.settled).where(o.transaction_id == tid)).scalars().all()
        kept = conn.execute(select(p.settled_at).where(p.transaction_id == tid)).scalar_one()
    assert answered == [expected]
    assert kept == expected
    # A minute on, nothing is due to be asked about: the settled time stays.
    books.world.advance(60)
    books.night()
    with books.engine.connect() as conn:
        asked = conn.execute(select(func.count()).where(o.transaction_id == tid)).scalar_one()
        kept = conn.execute(select(p.settled_at).where(p.transaction_id == tid)).scalar_one()
    assert (asked, kept) == (1, expected)


def test_running_the_night_again_and_recon_report_add_no_line(books: Books) -> None:
    """A night that books four entries; the next night (the payouts asked about again on the
    watch schedule), and `recon report` rebuilding the first night, add none."""
    first = books.night()
    written = _lines(books.engine)
    assert len(_entries(written)) == 4
    books.world.advance(DAY)
    again = books.night()
    assert again.counts.polled > 0  # asked about again, the same facts
    assert (first.counts.journal_entries, again.counts.journal_entries) == (4, 0)
    data = from_store(
        books.engine, timezone=ZONE, run_id=first.run_id, window_days=books.settings().report_days
    )
    write_configured(books.settings(), books.workdir / "rebuilt", data)
    assert _lines(books.engine) == written


def test_a_night_killed_after_its_decision_is_resumed_without_a_new_line(books: Books) -> None:
    """The first night stops while writing its reports (its folder is a file): the decision and
    its entries are stored. Resumed as of the same time, it writes its reports and no line."""
    blocked = books.workdir / "night1"
    blocked.write_text("in the way", encoding="utf-8")
    as_of = books.as_of()
    with pytest.raises(ReportDirError):
        books.night(as_of)
    written = _lines(books.engine)
    assert len(_entries(written)) == 4
    with books.engine.connect() as conn:
        (stopped,) = conn.execute(select(runs.c.id, runs.c.status)).all()
    assert stopped.status == "failed"
    resumed = books.night(as_of)
    assert (resumed.run_id, resumed.exit_code) == (stopped.id, 0)
    assert resumed.counts.journal_entries == 4  # the entries its decision came with
    assert _lines(books.engine) == written


def test_a_payout_settled_then_failed_gets_reversals_naming_the_originals(books: Books) -> None:
    """The bank recalls the 10.00 payout after the night booked it: the next night takes back
    its settlement and its fee, each reversal the original's lines swapped, naming it, dated the
    night's own day. The other payout's entries stand."""
    books.night()
    before = _entries(_lines(books.engine))
    tid = books.payouts[0].transaction_id
    books.world.post(f"/sandbox/transactions/{tid}/reverse", {"state": 3})
    books.world.advance(DAY)
    result = books.night()
    assert result.exit_code == 0, result.summary
    after = _entries(_lines(books.engine))
    new = {k: v for k, v in after.items() if k not in before}
    assert len(new) == 2
    day = result.as_of.astimezone(books.settings().zone).date()
    originals = {k: v for k, v in before.items() if v[0]["transaction_id"] == tid}
    for lines in new.values():
        original = originals[lines[0]["reverses"]]
        assert lines[0]["transaction_id"] == tid
        assert [(x["account"], x["debit_minor"], x["credit_minor"]) for x in lines] == [
            (x["account"], x["credit_minor"], x["debit_minor"]) for x in original
        ]
        assert {(x["event_date"], x["posting_date"], x["late"]) for x in lines} == {
            (day, day, False)
        }
        assert {x["run_id"] for x in lines} == {result.run_id}
    assert {lines[0]["reverses"] for lines in new.values()} == set(originals)
    # Run again: the reversals stand, nothing is booked twice.
    books.world.advance(DAY)
    books.night()
    assert _entries(_lines(books.engine)).keys() == after.keys()


def test_a_missing_account_code_ends_the_night_with_exit_2_and_nothing_written(
    books: Books,
) -> None:
    """No fee_expense code while a fee is due: ConfigError (exit 2) naming the event and the
    setting; no line, and the decision it would have come with is not stored either."""
    codes = {k: v for k, v in CODES.items() if k != "fee_expense"}
    with pytest.raises(ConfigError) as raised:
        books.night(journal={"accounts": codes})
    assert exit_code_of(raised.value) == 2
    assert "payout_fee" in str(raised.value)
    assert "fee_expense in [journal.accounts]" in str(raised.value)
    assert _count(books.engine) == 0
    with books.engine.connect() as conn:
        outcomes = conn.execute(select(payouts.c.outcome)).scalars().all()
    assert outcomes == [None, None]


def test_a_closed_period_after_the_runs_day_ends_the_night_with_exit_2_before_any_write(
    books: Books,
) -> None:
    """RECON_JOURNAL_LOCKED_THROUGH the day after the run's: InputError (exit 2) naming the
    setting, before the night asks the provider anything: no answer, no decision, no line."""
    as_of = books.as_of()
    tomorrow = as_of.astimezone(books.settings().zone).date() + timedelta(days=1)
    with pytest.raises(InputError) as raised:
        books.night(as_of, journal_locked_through=tomorrow)
    assert exit_code_of(raised.value) == 2
    assert "RECON_JOURNAL_LOCKED_THROUGH" in str(raised.value)
    with books.engine.connect() as conn:
        answers = conn.execute(select(func.count()).select_from(observations)).scalar_one()
        outcomes = conn.execute(select(payouts.c.outcome)).scalars().all()
    assert (answers, outcomes, _count(books.engine)) == (0, [None, None], 0)


def test_a_settlement_in_a_closed_period_posts_on_the_first_open_day_marked_late(
    books: Books,
) -> None:
    """Closed through the days the payouts settled: each entry keeps its event date (the
    settled day) and posts on the day after the closed period, marked late."""
    books.world.advance(2 * DAY)
    zone = books.settings().zone
    days = {p.transaction_id: books.settled(p.transaction_id).astimezone(zone).date()
            for p in books.payouts}  # fmt: skip
    closed = max(days.values())
    books.night(journal_locked_through=closed)
    lines = _lines(books.engine)
    assert len(lines) == 8
    for line in lines:
        assert line["event_date"] == days[line["transaction_id"]]
        assert (line["posting_date"], line["late"]) == (closed + timedelta(days=1), True)


def test_without_journal_settings_a_night_books_nothing(books: Books) -> None:
    """No [journal]: the night runs as ever and the journal stays empty."""
    result = books.night(journal=None)
    assert result.exit_code == 0, result.summary
    assert _count(books.engine) == 0


def test_a_payout_the_record_lacks_waits_in_suspense_until_it_is_recorded(
    books: Books, tmp_path: Path
) -> None:
    """The provider made and settled a payout the merchant never recorded, and told of it by a
    callback: the night books its amount out of the provider balance to suspense. Once the
    merchant records it, the next night reverses that entry and books its settlement and fee."""
    (ghost,) = create_payouts(books.world, [Spec("30.00")], prefix="jg")
    books.world.advance(3600)
    body = {"merchant_id": "sandbox-merchant", "transaction_id": ghost.transaction_id,
            "transaction_state": 6}  # fmt: skip
    told = tmp_path / "told.jsonl"
    told.write_text(json.dumps(body) + "\n", encoding="utf-8")
    import_notifications(books.engine, told, received_at=books.as_of())
    first = books.night()
    assert first.exit_code in (0, 3), first.summary
    lines = [
        line for line in _lines(books.engine) if line["transaction_id"] == ghost.transaction_id
    ]
    assert [(x["event"], x["account"], x["debit_minor"], x["credit_minor"]) for x in lines] == [
        ("unrecorded_payout", "2999", 3000, 0),
        ("unrecorded_payout", "1940", 0, 3000),
    ]
    suspense_id = lines[0]["journal_id"]
    import_payouts_csv(
        books.engine,
        write_payouts_csv(tmp_path / "more.csv", [p.csv_row() for p in [*books.payouts, ghost]]),
    )
    books.world.advance(DAY)
    books.night()
    later = [
        line
        for line in _lines(books.engine)
        if line["transaction_id"] == ghost.transaction_id and line["run_id"] != first.run_id
    ]
    events = {(x["event"], x["reverses"]) for x in later}
    assert events == {
        ("unrecorded_payout", suspense_id),
        ("payout_settled", None),
        ("payout_fee", None),
    }
