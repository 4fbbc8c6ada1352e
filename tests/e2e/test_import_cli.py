"""`recon db upgrade` and `recon import payouts` run as the user runs them: a subprocess."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.store.migrate import head_revision
from tests.integration.provider_standin import serve_standin, token_answer

RECON = str(Path(sys.executable).with_name("recon"))
HEADER = "transaction_id,merchant_reference,amount,currency,created\n"


def recon_env(db: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{db}"
    return env | settings


def run(db: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RECON, *args],
        env=recon_env(db, **settings),
        cwd=db.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write_payouts(path: Path, count: int, reference: str, amount: str) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for i in range(count):
            out.write(f"p{i:07d},{reference}-{i},{amount},EUR,1740830400\n")
    return path


def payouts_in(db: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT transaction_id, merchant_reference, amount_minor FROM payouts"
        ).fetchall()


def test_db_upgrade_twice_reports_the_revision_and_changes_nothing(tmp_path: Path) -> None:
    """`recon db upgrade` creates the schema, and a second run succeeds without change."""
    db = tmp_path / "recon.db"
    first = run(db, "db", "upgrade")
    second = run(db, "db", "upgrade")
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert f"schema at revision {head_revision()}" in second.stdout


def test_import_prints_one_line_and_a_second_import_changes_nothing(tmp_path: Path) -> None:
    """The import creates the schema itself, prints its counts, and is idempotent."""
    db = tmp_path / "recon.db"
    csv_file = write_payouts(tmp_path / "payouts.csv", 3, "ref", "10.10")
    first = run(db, "import", "payouts", str(csv_file))
    second = run(db, "import", "payouts", str(csv_file))
    assert first.returncode == 0, first.stderr
    assert "3 rows, 3 inserted, 0 updated, 0 unchanged" in first.stdout
    assert "3 rows, 0 inserted, 0 updated, 3 unchanged" in second.stdout
    assert len(first.stdout.strip().splitlines()) == 1


def test_a_bad_file_exits_2_with_line_numbers_and_writes_nothing(tmp_path: Path) -> None:
    """Every problem is listed with its line; the exit code is 2; the store is untouched."""
    db = tmp_path / "recon.db"
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "a,r,1.00,EUR,\n,,1.00,EUR,\nb,r,1.001,EUR,\nc,r,1,EURO,\n")
    result = run(db, "import", "payouts", str(bad))
    assert result.returncode == 2
    assert "line 3: merchant_reference is missing" in result.stderr
    assert "line 4: amount 1.001 has more than 2 decimals for EUR" in result.stderr
    assert "line 5: malformed currency code 'EURO'" in result.stderr
    assert payouts_in(db) == []


def test_an_amount_that_would_round_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    """`100000000000000.010000000000000001` EUR is refused (exit 2), never stored rounded."""
    db = tmp_path / "recon.db"
    bad = tmp_path / "exact.csv"
    bad.write_text(HEADER + "a,r,100000000000000.010000000000000001,EUR,\nb,r,1,XYZ,\n")
    result = run(db, "import", "payouts", str(bad))
    assert result.returncode == 2, result.stderr
    assert f"{bad}: nothing was imported, 2 problems:" in result.stderr
    assert (
        "  line 2: amount 100000000000000.010000000000000001 has more than 2 decimals for EUR"
        in result.stderr
    )
    assert "  line 3: unknown currency code 'XYZ' (not an ISO 4217 currency)" in result.stderr
    assert payouts_in(db) == []


def test_naive_created_times_are_read_in_recon_timezone(tmp_path: Path) -> None:
    """`created` without an offset is Helsinki wall-clock time when RECON_TIMEZONE says so."""
    db = tmp_path / "recon.db"
    csv_file = tmp_path / "local.csv"
    csv_file.write_text(HEADER + "a,r,1.00,EUR,2025-03-01 14:00:00\n")
    result = run(db, "import", "payouts", str(csv_file), RECON_TIMEZONE="Europe/Helsinki")
    assert result.returncode == 0, result.stderr
    assert "1 row, 1 inserted," in result.stdout
    with sqlite3.connect(db) as conn:
        created = conn.execute("SELECT created FROM payouts").fetchone()[0]
    assert str(created).startswith("2025-03-01 12:00:00")


def test_a_naive_as_of_is_read_in_recon_timezone(tmp_path: Path) -> None:
    """`recon run --as-of 2025-03-01T12:00:00` in Helsinki is 10:00 UTC (a run of no payouts,
    which only asks the provider for its token)."""
    db = tmp_path / "recon.db"
    with serve_standin(lambda operation, body: token_answer()) as standin:
        result = run(
            db,
            "run", "--as-of", "2025-03-01T12:00:00", "--no-email", "--out", str(tmp_path / "out"),
            RECON_TIMEZONE="Europe/Helsinki", RECON_API_BASE_URL=standin.url,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(db) as conn:
        as_of = conn.execute("SELECT as_of FROM runs").fetchone()[0]
    assert str(as_of).startswith("2025-03-01 10:00:00")


def test_a_semicolon_separated_file_gets_a_separator_hint(tmp_path: Path) -> None:
    """Excel's `;` export: exit 2, the missing columns, and a hint naming the separator."""
    db = tmp_path / "recon.db"
    semi = tmp_path / "excel.csv"
    semi.write_text("transaction_id;merchant_reference;amount;currency\na;r;1,00;EUR\n")
    result = run(db, "import", "payouts", str(semi))
    assert result.returncode == 2
    assert "missing required column(s)" in result.stderr
    assert "the file seems to be separated by semicolon (;)" in result.stderr


def test_import_from_a_sql_source_reads_the_merchant_database(tmp_path: Path) -> None:
    """`--sql Q.sql --source-url URL` imports what the query returns, with the URL from the env."""
    source = tmp_path / "merchant.db"
    with sqlite3.connect(source) as conn:
        conn.execute("CREATE TABLE po (id TEXT, ref TEXT, amt TEXT, cur TEXT)")
        conn.executemany("INSERT INTO po VALUES (?, ?, ?, ?)", [("m1", "r1", "5.50", "eur")])
    query = tmp_path / "q.sql"
    query.write_text(
        "SELECT id AS transaction_id, ref AS merchant_reference, amt AS amount, cur AS currency "
        "FROM po;\n"
    )
    db = tmp_path / "recon.db"
    env = {**recon_env(db), "RECON_SOURCE_URL": f"sqlite:///{source}"}
    result = subprocess.run(
        [RECON, "import", "payouts", "--sql", str(query)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert payouts_in(db) == [("m1", "r1", 550)]


def test_file_and_sql_are_mutually_exclusive(tmp_path: Path) -> None:
    """Giving neither or both inputs is a usage error (exit 2)."""
    db = tmp_path / "recon.db"
    assert run(db, "import", "payouts").returncode == 2


def _max_rss_kib(db: Path, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run recon and return its peak resident memory (from the kernel, via wait4)."""
    proc = subprocess.Popen(
        [RECON, *args],
        env=recon_env(db),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = proc.communicate()
    return usage.ru_maxrss, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_200k_row_file_imports_in_bounded_memory(tmp_path: Path) -> None:
    """200,000 rows stream through in batches: memory grows far less than 200,000 row dicts."""
    small = write_payouts(tmp_path / "small.csv", 10, "s", "1.00")
    baseline, _ = _max_rss_kib(tmp_path / "small.db", "import", "payouts", str(small))
    big = write_payouts(tmp_path / "big.csv", 200_000, "b", "2.25")
    peak, result = _max_rss_kib(tmp_path / "big.db", "import", "payouts", str(big))
    assert result.returncode == 0, result.stderr
    assert "200000 rows, 200000 inserted" in result.stdout
    # 200,000 validated row dicts alone take about 110 MiB; the import keeps one batch and a
    # compact id map (about 100 bytes per id).
    growth_mib = (peak - baseline) / 1024
    print(f"peak memory grew by {growth_mib:.0f} MiB")  # noqa: T201 - shown with -s
    assert growth_mib < 60, f"memory grew by {growth_mib:.0f} MiB"
    with sqlite3.connect(tmp_path / "big.db") as conn:
        assert conn.execute("SELECT count(*), sum(amount_minor) FROM payouts").fetchone() == (
            200_000,
            200_000 * 225,
        )


def test_an_import_killed_half_way_leaves_the_old_data(tmp_path: Path) -> None:
    """SIGKILL during a large import leaves all the old rows or all the new, never a part."""
    db = tmp_path / "recon.db"
    old = write_payouts(tmp_path / "old.csv", 1000, "old", "1.00")
    assert run(db, "import", "payouts", str(old)).returncode == 0
    big = write_payouts(tmp_path / "big.csv", 300_000, "new", "2.00")
    wal = tmp_path / "recon.db-wal"
    proc = subprocess.Popen(
        [RECON, "import", "payouts", str(big)],
        env=recon_env(db),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Uncommitted pages spill into the WAL once SQLite's cache is full: the write is under way.
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if wal.exists() and wal.stat().st_size > 4 * 1024 * 1024:
                break
            time.sleep(0.01)
        if proc.poll() is not None:
            pytest.fail("the import finished before it could be killed; make the file larger")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    rows = sorted(payouts_in(db))
    old_rows = [(f"p{i:07d}", f"old-{i}", 100) for i in range(1000)]
    new_rows = [(f"p{i:07d}", f"new-{i}", 200) for i in range(300_000)]
    assert rows in (old_rows, new_rows), f"{len(rows)} rows: a partial import"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
