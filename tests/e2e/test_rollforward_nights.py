"""The night proves its own numbers: rollforward.csv on every run, and a row removed or
edited behind recon's back is the finding rollforward_break (exit 3), on every database.

Each night is a real `recon run` over the sandbox, served on loopback.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path

from sqlalchemy import delete, func, select, update

from recon.store.db import make_engine
from recon.store.rollforward_tables import rollforward_lines, rollforward_runs
from recon.store.tables import observations, outcome_history, payouts, record_changes
from tests.e2e.run_support import (
    Spec,
    create_payouts,
    import_payouts,
    read_csv,
    recon_env,
    run_night,
    served_world,
)

DAY = 86400
HEADER = "currency,provider_account,outcome,line,count,amount"


def _first_night(db_url: str, tmp: Path) -> tuple[dict[str, str], Path, object]:
    """Three payouts in two currencies, imported and settled on night 1."""
    world_cm = served_world(db_url, settle_after=30)
    world = world_cm.__enter__()
    env = recon_env(db_url, world.sandbox_url)
    world.advance_to_hour(1)
    specs = [Spec("100.00"), Spec("20.50"), Spec("7.00", "SE")]
    made = create_payouts(world, specs)
    import_payouts(env, tmp, [p.csv_row() for p in made], name="v1.csv")
    world.advance(120)
    night1 = run_night(env, tmp, "night1", world.now())
    return env, night1, (world_cm, world)


def _lines(out: Path) -> dict[tuple[str, str, str], tuple[int, str]]:
    rows = read_csv(out / "rollforward.csv")
    return {(r["currency"], r["outcome"], r["line"]): (int(r["count"]), r["amount"]) for r in rows}


def _fee_positions(out: Path) -> dict[str, tuple[int, Decimal]]:
    """Per currency, the payouts with a fee charged and the fees' sum, from fees.csv."""
    got: dict[str, tuple[int, Decimal]] = {}
    for r in read_csv(out / "fees.csv"):
        if r["fee_charged"]:
            n, total = got.get(r["currency"], (0, Decimal(0)))
            got[r["currency"]] = (n + 1, total + Decimal(r["fee_charged"]))
    return got


def _payout_positions(out: Path) -> dict[tuple[str, str], tuple[int, Decimal]]:
    counts: Counter[tuple[str, str]] = Counter()
    sums: dict[tuple[str, str], Decimal] = {}
    for r in read_csv(out / "payouts.csv"):
        key = (r["currency"], r["outcome"])
        counts[key] += 1
        sums[key] = sums.get(key, Decimal(0)) + Decimal(r["amount"])
    return {k: (counts[k], sums[k]) for k in counts}


def test_every_night_writes_a_roll_forward_that_carries_the_previous_one(tmp_path: Path) -> None:
    """Night 2's previous is night 1's now; each now equals payouts.csv per currency and outcome;
    both nights exit 0. On SQLite: the identities are tested in tests/unit/test_rollforward_core.py,
    and the next test carries a roll-forward from night to night on every database."""
    env, night1, (world_cm, world) = _first_night(f"sqlite:///{tmp_path / 'recon.db'}", tmp_path)
    try:
        world.advance(DAY)
        night2 = run_night(env, tmp_path, "night2", world.now())
    finally:
        world_cm.__exit__(None, None, None)
    assert (night1 / "rollforward.csv").read_text(encoding="utf-8").startswith(HEADER + "\n")
    first, second = _lines(night1), _lines(night2)
    for out, lines in ((night1, first), (night2, second)):
        now = {
            (c, o): (n, Decimal(a))
            for (c, o, line), (n, a) in lines.items()
            if line == "now" and o not in ("findings", "returns_confirmed", "fees")
        }
        assert now == _payout_positions(out)
        fees = {c: (n, Decimal(a)) for (c, o, line), (n, a) in lines.items()
                if o == "fees" and line == "now"}  # fmt: skip
        assert fees == _fee_positions(out)
    for (c, o, line), value in first.items():
        if line == "now":
            assert second[(c, o, "previous")] == value
    assert sum(n for (_, _, line), (n, _) in first.items() if line == "recorded") == 3
    assert ("", "findings", "opened") in first
    html = (night2 / "report.html").read_text(encoding="utf-8")
    assert "<h2>Roll-forward</h2>" in html


def test_a_payout_row_removed_and_a_history_row_edited_break_the_roll_forward(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Between two nights a payout row is deleted and a history row's amount edited: night 2
    exits 3 with rollforward_break naming the lines; the finding stands on night 3."""
    env, _, (world_cm, world) = _first_night(empty_db_url, tmp_path)
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            gone, edited = conn.execute(
                select(payouts.c.transaction_id).order_by(payouts.c.transaction_id).limit(2)
            ).scalars().all()  # fmt: skip
            for table in (outcome_history, record_changes, observations):
                conn.execute(delete(table).where(table.c.transaction_id == gone))
            conn.execute(delete(payouts).where(payouts.c.transaction_id == gone))
            conn.execute(
                update(outcome_history)
                .where(outcome_history.c.transaction_id == edited)
                .values(amount_minor=outcome_history.c.amount_minor + 1)
            )
        world.advance(DAY)
        night2 = run_night(env, tmp_path, "night2", world.now(), code=3)
        breaks = [
            r for r in read_csv(night2 / "exceptions.csv") if r["exception"] == "rollforward_break"
        ]
        items = {r["transaction_id"] for r in breaks}
        assert any(i.endswith("/settled/now") for i in items), items
        assert any(i.endswith("/run 1") for i in items), items  # the edited row of run 1
        assert all("differs" in r["detail"] for r in breaks)
        world.advance(DAY)
        night3 = run_night(env, tmp_path, "night3", world.now())
        standing = {
            r["transaction_id"]: r["status"]
            for r in read_csv(night3 / "exceptions.csv")
            if r["exception"] == "rollforward_break"
        }
        assert standing == dict.fromkeys(items, "persisting")
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(payouts)) == 2
    finally:
        engine.dispose()
        world_cm.__exit__(None, None, None)


def test_a_store_from_before_the_roll_forward_starts_it_from_its_latest_run_without_a_break(
    tmp_path: Path,
) -> None:
    """Night 1's lines removed (a store from before 0015): night 2 exits 0, says where the
    roll-forward starts, and its previous is night 1's position."""
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    env, night1, (world_cm, world) = _first_night(url, tmp_path)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(delete(rollforward_lines))
            conn.execute(delete(rollforward_runs))
        world.advance(DAY)
        night2 = run_night(env, tmp_path, "night2", world.now())
    finally:
        engine.dispose()
        world_cm.__exit__(None, None, None)
    html = (night2 / "report.html").read_text(encoding="utf-8")
    assert "The roll-forward starts here, from run 1" in html
    first, second = _lines(night1), _lines(night2)
    for (c, o, line), value in first.items():
        if line == "now" and o != "findings":
            assert second[(c, o, "previous")] == value
    assert not [
        r for r in read_csv(night2 / "exceptions.csv") if r["exception"] == "rollforward_break"
    ]
