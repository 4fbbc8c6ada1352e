"""`recon import provider-export FILE --account NAME --settled-from DATE --settled-to DATE`: a
file downloaded by hand stored with its window (days in RECON_TIMEZONE), once; a changed row a
new version; a file with a row that cannot be read, or days out of order, refused with exit 2
and nothing stored. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, select

from recon.cli import main
from recon.export_rows import ExportKind
from recon.sandbox import exports
from recon.store.export_rows import latest_rows
from recon.store.export_tables import provider_export_files, provider_export_rows

TWO_BRANDS = """\
[accounts.brand_a]
label = "Brand A"
api_base_url = "https://api.provider.example"
public_key = "pk_a"

[accounts.brand_b]
label = "Brand B"
api_base_url = "https://api.provider.example"
public_key = "pk_b"
"""
SECRETS = {"RECON_ACCOUNT_BRAND_A_SECRET": "sk-a", "RECON_ACCOUNT_BRAND_B_SECRET": "sk-b"}
T0 = "1793696400"  # 2026-11-03 09:00 UTC
ROWS = [
    ["tx-1", "1", "6", "12.50", "EUR", "ref-1", T0, T0, "0.25", "fee-1", ""],
    ["fee-1", "fee", "6", "0.25", "EUR", "ref-1", T0, T0, "", "", "tx-1"],
    ["mv-1", "top_up", "6", "1000.00", "EUR", "", T0, T0, "", "", ""],
]
# Europe/Oslo: 2026-11-03 is 2026-11-02 23:00 UTC to 2026-11-03 23:00 UTC
FROM, TO = datetime(2026, 11, 2, 23, tzinfo=UTC), datetime(2026, 11, 3, 23, tzinfo=UTC)


@pytest.fixture
def env(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two provider accounts, the store on ``engine``, days in Europe/Oslo; the folder."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_"):
            monkeypatch.delenv(name)
    config = tmp_path / "recon.toml"
    config.write_text(TWO_BRANDS, encoding="utf-8")
    url = engine.url.render_as_string(hide_password=False)
    for name, value in {
        "RECON_CONFIG": str(config),
        "RECON_DATABASE_URL": url,
        "RECON_TIMEZONE": "Europe/Oslo",
        **SECRETS,
    }.items():
        monkeypatch.setenv(name, value)
    return tmp_path


def _import(
    folder: Path, rows: list[list[str]], *args: str, name: str = "e.csv"
) -> tuple[int, str]:
    path = folder / name
    path.write_bytes(exports.render(rows))
    command = ["import", "provider-export", str(path), *args]
    result = CliRunner().invoke(main, command)
    return result.exit_code, result.output


def _day(*extra: str, account: str = "brand_a") -> tuple[str, ...]:
    return ("--account", account, "--settled-from", "2026-11-03", "--settled-to", "2026-11-03",
            *extra)  # fmt: skip


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        files = conn.execute(select(func.count()).select_from(provider_export_files)).scalar_one()
        rows = conn.execute(select(func.count()).select_from(provider_export_rows)).scalar_one()
    return int(files), int(rows)


def test_file_stored_with_its_window_once(engine: Engine, env: Path) -> None:
    """The file is stored with the window of its days in RECON_TIMEZONE and its rows; the same
    file again changes nothing and says so."""
    code, out = _import(env, ROWS, *_day())
    assert code == 0, out
    assert "3 rows): 3 new, 0 changed (new versions), 0 unchanged" in out
    f = provider_export_files.c
    with engine.connect() as conn:
        stored = conn.execute(
            select(f.provider_account, f.settled_from, f.settled_to, f.rows, f.capped, f.source)
        ).one()
        rows = latest_rows(conn, "brand_a", FROM, TO)
    assert tuple(stored) == ("brand_a", FROM, TO, 3, False, "file")
    assert [(r.kind, r.transaction_id, r.amount_minor) for r in rows] == [
        (ExportKind.FEE, "fee-1", 25),
        (ExportKind.PAYOUT, "tx-1", 12_50),
        (ExportKind.TOP_UP, "mv-1", 1000_00),
    ]
    code, out = _import(env, ROWS, *_day())
    assert code == 0, out
    assert "already stored for brand_a" in out
    assert "nothing changed" in out
    assert _counts(engine) == (1, 3)


def test_changed_row_is_stored_as_its_next_version(engine: Engine, env: Path) -> None:
    """A later file with one row's state changed stores that row again; the others are
    unchanged."""
    _import(env, ROWS, *_day())
    failed = [["tx-1", "1", "7", *ROWS[0][3:]], *ROWS[1:]]
    code, out = _import(env, failed, *_day(), name="later.csv")
    assert code == 0, out
    assert "0 new, 1 changed (new versions), 2 unchanged" in out
    assert _counts(engine) == (2, 4)


def test_two_accounts_files_stay_apart(engine: Engine, env: Path) -> None:
    """The same file for two accounts is stored for each; with several accounts configured,
    a file without --account is refused."""
    for account in ("brand_a", "brand_b"):
        code, out = _import(env, ROWS, *_day(account=account))
        assert code == 0, out
    assert _counts(engine) == (2, 6)
    code, out = _import(env, ROWS, "--settled-from", "2026-11-03", "--settled-to", "2026-11-03")
    assert code == 2
    assert "several accounts are configured (brand_a, brand_b)" in out
    code, out = _import(env, ROWS, *_day(account="brand_c"))
    assert code == 2
    assert "'brand_c' is not a configured account" in out
    assert _counts(engine) == (2, 6)


def test_unreadable_row_refuses_the_file(engine: Engine, env: Path) -> None:
    """A row whose amount cannot be read refuses the whole file, naming its line and reason;
    nothing is stored."""
    bad = [*ROWS, ["tx-2", "1", "6", "twelve", "EUR", "ref-2", T0, T0, "", "", ""]]
    code, out = _import(env, bad, *_day())
    assert code == 2
    assert "nothing was stored" in out
    assert "line 5: amount:" in out
    assert _counts(engine) == (0, 0)


def test_days_out_of_order_exit_2(engine: Engine, env: Path) -> None:
    """--settled-from after --settled-to is a usage error; nothing is stored."""
    code, out = _import(
        env,
        ROWS,
        *("--account", "brand_a", "--settled-from", "2026-11-04", "--settled-to", "2026-11-03"),
    )
    assert code == 2
    assert "--settled-from 2026-11-04 is after --settled-to 2026-11-03" in out
    assert _counts(engine) == (0, 0)


def test_file_of_the_row_cap_is_recorded_capped(
    engine: Engine, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With RECON_EXPORT_ROW_CAP at the file's row count, the file is kept as capped and the
    command says it is not taken as complete."""
    monkeypatch.setenv("RECON_EXPORT_ROW_CAP", "3")
    code, out = _import(env, ROWS, *_day())
    assert code == 0, out
    assert "exactly the row cap: not taken as complete" in out
    with engine.connect() as conn:
        assert conn.execute(select(provider_export_files.c.capped)).scalar_one()
