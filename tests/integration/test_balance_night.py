"""Nights with closing balances recorded: a statement that breaks is the finding balance_break in
the night's exceptions, the pack holds balance.csv and a Balance section; the closing recorded
again ties it, and the next night clears the finding. The sandbox over loopback HTTP; SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from recon.ingest.payouts import import_payouts_csv
from recon.night.run import RunOptions, RunResult, run_reconciliation
from recon.settings import Settings
from recon.store.balance import record_closing
from recon.store.export_tables import provider_export_files, provider_export_rows
from tests.e2e.run_support import (
    DAILY_SCHEDULES,
    Spec,
    World,
    create_payouts,
    read_csv,
    served_world,
    write_payouts_csv,
)

pytestmark = pytest.mark.timeout(180, method="thread")

ZONE = "Europe/Stockholm"


def _settings(engine: Engine, world: World, out: Path) -> Settings:
    options: dict[str, Any] = {
        "database_url": engine.url.render_as_string(hide_password=False),
        "api_base_url": world.sandbox_url,
        "out_dir": out,
        "timezone": ZONE,
        "retry_attempts": 2,
        "retry_initial_wait": 0,
        **DAILY_SCHEDULES,
    }
    return Settings(**options)


@pytest.fixture
def world(engine: Engine, tmp_path: Path) -> Iterator[World]:
    """One payout of 10.00 EUR at the sandbox, settled, and the merchant's record of it."""
    with served_world("sqlite://", settle_after=60, receiver=False) as served:
        made = create_payouts(served, [Spec("10.00")], prefix="bal")
        served.advance(3600)
        import_payouts_csv(
            engine, write_payouts_csv(tmp_path / "payouts.csv", [p.csv_row() for p in made])
        )
        yield served


def _night(engine: Engine, world: World, out: Path) -> RunResult:
    as_of = datetime.fromtimestamp(float(Decimal(world.now())), UTC)
    options = RunOptions(out_dir=out, as_of=as_of, email=False)
    return run_reconciliation(_settings(engine, world, out), options, engine=engine)


def test_a_break_is_found_then_cleared_once_the_closing_is_recorded_again(
    engine: Engine, world: World, tmp_path: Path
) -> None:
    """The export shows the 10.00 payout settled; the closing recorded 0.01 short is a break of
    -0.01 (balance_break, in exceptions.csv and balance.csv); recorded again it ties and the
    next night clears the finding."""
    zone = _settings(engine, world, tmp_path).zone
    now = datetime.fromtimestamp(float(Decimal(world.now())), UTC).astimezone(zone)
    today = now.date()
    opening = today - timedelta(days=3)
    start = datetime.combine(opening + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    end = datetime.combine(today + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    settled = (now - timedelta(hours=1)).astimezone(UTC)
    with engine.begin() as conn:
        file_id = conn.execute(
            insert(provider_export_files).values(
                provider_account="default", sha256="a" * 64, settled_from=start.astimezone(UTC),
                settled_to=end.astimezone(UTC), rows=1, capped=False, headers="[]",
                source="file", stored_at=now.astimezone(UTC),
            )
        ).inserted_primary_key[0]  # fmt: skip
        conn.execute(
            insert(provider_export_rows).values(
                provider_account="default", kind="payout", transaction_id="X1", version=1,
                file_id=file_id, line=2, digest="b" * 64, type_raw="1", state=6, state_raw="6",
                amount_minor=1000, currency="EUR", settled=settled,
            )
        )  # fmt: skip
    for day, minor in ((opening, 50_000), (today, 48_999)):
        record_closing(engine, account="default", currency="EUR", day=day, closing_minor=minor,
                       note=None, by="test")  # fmt: skip
    first = _night(engine, world, tmp_path / "night1")
    assert first.exit_code == 0, first.summary
    found = [r for r in read_csv(tmp_path / "night1" / "exceptions.csv")
             if r["exception"] == "balance_break"]  # fmt: skip
    item = f"EUR/{(opening + timedelta(days=1)).isoformat()}/{today.isoformat()}"
    assert [(r["transaction_id"], r["status"], r["item_kind"]) for r in found] == [
        (item, "new", "balance")
    ]
    lines = {r["line"]: r for r in read_csv(tmp_path / "night1" / "balance.csv")}
    assert (lines["difference"]["amount"], lines["difference"]["status"]) == ("-0.01", "break")
    assert "<h2>Balance</h2>" in (tmp_path / "night1" / "report.html").read_text(encoding="utf-8")
    record_closing(engine, account="default", currency="EUR", day=today, closing_minor=49_000,
                   note="typed wrong", by="test")  # fmt: skip
    world.advance(60)
    second = _night(engine, world, tmp_path / "night2")
    assert second.exit_code == 0, second.summary
    lines = {r["line"]: r for r in read_csv(tmp_path / "night2" / "balance.csv")}
    assert lines["difference"]["status"] == "tied"
    again = [r for r in read_csv(tmp_path / "night2" / "exceptions.csv")
             if r["exception"] == "balance_break"]  # fmt: skip
    assert [r["status"] for r in again] == ["cleared"]
