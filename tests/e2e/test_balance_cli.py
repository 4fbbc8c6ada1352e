"""`recon balance record` and `recon balance show`: closings kept, never overwritten, and the
statement between two of them printed with its lines and status."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select

from recon.constants import ExitCode
from recon.store.db import ensure_schema, make_engine
from recon.store.export_tables import balance_records, provider_export_files, provider_export_rows
from tests.e2e.run_support import explain, recon, recon_env

# In UTC: the days are read in RECON_TIMEZONE, UTC here.
SETTLED = [
    ("P1", "payout", 6, 10_000, datetime(2026, 11, 3, 9, tzinfo=UTC)),
    ("F1", "fee", 6, 30, datetime(2026, 11, 3, 9, tzinfo=UTC)),
    ("T1", "top_up", 6, 50_000, datetime(2026, 11, 2, 9, tzinfo=UTC)),
]


def _store(tmp_path: Path) -> str:
    """A store with one export file covering November (not capped) and three of its rows."""
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    engine = make_engine(url)
    ensure_schema(engine)
    with engine.begin() as conn:
        file_id = conn.execute(
            insert(provider_export_files).values(
                provider_account="default",
                sha256="0" * 64,
                settled_from=datetime(2026, 11, 1, tzinfo=UTC),
                settled_to=datetime(2026, 12, 1, tzinfo=UTC),
                rows=len(SETTLED),
                capped=False,
                headers="[]",
                source="file",
                stored_at=datetime(2026, 12, 1, tzinfo=UTC),
            )
        ).inserted_primary_key[0]
        conn.execute(
            insert(provider_export_rows),
            [
                {"provider_account": "default", "kind": kind, "transaction_id": tid,
                 "version": 1, "file_id": file_id, "line": n + 2, "digest": "1" * 64,
                 "type_raw": kind, "state": state, "state_raw": str(state),
                 "amount_minor": amount, "currency": "EUR", "settled": at}
                for n, (tid, kind, state, amount, at) in enumerate(SETTLED)
            ],
        )  # fmt: skip
    engine.dispose()
    return url


def _records(url: str) -> int:
    engine = make_engine(url)
    with engine.connect() as conn:
        n = int(conn.execute(select(func.count()).select_from(balance_records)).scalar_one())
    engine.dispose()
    return n


def test_record_then_show_a_tied_statement_and_a_restated_closing(tmp_path: Path) -> None:
    """Two closings a month apart make a statement; a second figure for the same day is kept
    and the first shown as restated; the one that matches the export ties."""
    env = recon_env(_store(tmp_path), "http://127.0.0.1:9", timezone="UTC")
    for args in (
        ("--date", "2026-10-31", "--closing", "1000.00"),
        ("--date", "2026-11-30", "--closing", "1000.00", "--note", "typed wrong"),
        ("--date", "2026-11-30", "--closing", "1399.70"),
    ):
        done = recon(env, "balance", "record", "--currency", "eur", *args, cwd=tmp_path)
        assert done.returncode == ExitCode.OK, explain(done)
    assert "restates record 2: 1000.00 EUR (typed wrong)" in done.stdout
    shown = recon(env, "balance", "show", cwd=tmp_path)
    assert shown.returncode == ExitCode.OK, explain(shown)
    out = shown.stdout
    assert "default EUR 2026-11-01 to 2026-11-30: tied" in out
    assert "restated: record 2 of 2026-11-30 said 1,000.00 EUR" in out
    for words, count, amount in [
        ("+ Top-ups", "1", "500.00"),
        ("- Payouts settled", "1", "100.00"),
        ("- Fees", "1", "0.30"),
        ("= Computed closing", "", "1,399.70"),
        ("Difference (recorded - computed)", "", "0.00"),
    ]:
        line = next(x for x in out.splitlines() if x.strip().startswith(words))
        assert line.split()[-2:] == [amount, "EUR"]
        assert not count or count in line.split()


def test_show_says_break_by_the_difference(tmp_path: Path) -> None:
    """A recorded closing off by 1.00 from opening + movements is a break by that difference."""
    env = recon_env(_store(tmp_path), "http://127.0.0.1:9", timezone="UTC")
    for day, closing in (("2026-10-31", "1000"), ("2026-11-30", "1398.70")):
        done = recon(
            env, "balance", "record", "--date", day, "--currency", "EUR", "--closing", closing,
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == ExitCode.OK, explain(done)
    shown = recon(env, "balance", "show", "--account", "default", cwd=tmp_path)
    assert "2026-11-01 to 2026-11-30: break: differs by -1.00 EUR" in shown.stdout, explain(shown)


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--closing", "12.345", "more than 2 decimals for EUR"),
        ("--closing", "12,34", "not a decimal number"),
        ("--currency", "XYZ", "unknown currency code"),
        ("--date", "2026-11-31", "expected a date like"),
    ],
)
def test_record_refuses_a_bad_figure_with_exit_2(
    tmp_path: Path, option: str, value: str, says: str
) -> None:
    """A closing not exact in the currency's digits, an unknown currency or a day that does
    not exist is a usage error (exit 2), and nothing is recorded."""
    url = _store(tmp_path)
    env = recon_env(url, "http://127.0.0.1:9")
    args = {"--date": "2026-11-30", "--currency": "EUR", "--closing": "1.00", option: value}
    done = recon(env, "balance", "record", *(x for kv in args.items() for x in kv), cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE, explain(done)
    assert says in done.stderr
    assert _records(url) == 0
