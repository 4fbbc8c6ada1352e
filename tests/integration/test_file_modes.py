"""Files recon creates are readable by their owner only (0600), whatever the umask: the SQLite
store with its -wal and -shm files, and every file of the report pack; directories it creates are
0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from recon.report.export import ExportFormat, export_payouts
from recon.report.pack import write_pack
from recon.store.db import ensure_schema, make_engine
from tests.unit.report_fixtures import report_input


@pytest.fixture(params=[0o000, 0o022], ids=["umask-000", "umask-022"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set for the test (0: nothing is taken away from a file's mode)."""
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_sqlite_store_and_its_wal_and_shm_files_are_0600(tmp_path: Path, umask: int) -> None:
    """A new store: recon.db, recon.db-wal and recon.db-shm are rw for the owner only."""
    path = tmp_path / "recon.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        ensure_schema(engine)
        with engine.connect() as conn:  # an open connection keeps -wal and -shm in place
            conn.execute(text("SELECT 1"))
            files = [path, path.with_name("recon.db-wal"), path.with_name("recon.db-shm")]
            assert all(f.exists() for f in files), sorted(p.name for p in tmp_path.iterdir())
            assert {f.name: oct(mode(f)) for f in files} == {f.name: "0o600" for f in files}
    finally:
        engine.dispose()


def test_an_existing_store_keeps_the_mode_its_owner_gave_it(tmp_path: Path, umask: int) -> None:
    """recon does not change the mode of a database file it did not create (0640 stays)."""
    path = tmp_path / "shared.db"
    path.touch()
    path.chmod(0o640)
    engine = make_engine(f"sqlite:///{path}")
    try:
        ensure_schema(engine)
    finally:
        engine.dispose()
    assert mode(path) == 0o640


def test_every_report_file_is_0600(tmp_path: Path, umask: int) -> None:
    """Every report file (report.xlsx too) goes through mkstemp: rw for the owner only."""
    files = write_pack(tmp_path / "out", report_input(), row_cap=200)
    written = [files.html, *files.attachments] + ([files.chart] if files.chart else [])
    assert {f.name: oct(mode(f)) for f in written} == {f.name: "0o600" for f in written}


def test_report_files_take_the_configured_mode_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    """RECON_REPORT_MODE=640 (group may read): every file is 0640, under umask 000 and 022."""
    files = write_pack(tmp_path / "out", report_input(), row_cap=200, mode=0o640)
    written = [files.html, *files.attachments] + ([files.chart] if files.chart else [])
    assert {f.name: oct(mode(f)) for f in written} == {f.name: "0o640" for f in written}


def test_directories_recon_creates_are_0700_and_existing_ones_keep_their_mode(
    tmp_path: Path, umask: int
) -> None:
    """The report directory, the export's and their missing parents are 0700 under any umask
    (before: 0777 under umask 000); a directory that was already there is left as it was."""
    tmp_path.chmod(0o755)
    files = write_pack(tmp_path / "reports" / "night", report_input(), row_cap=200)
    engine = make_engine(f"sqlite:///{tmp_path / 'recon.db'}")
    try:
        ensure_schema(engine)
        export = export_payouts(
            engine,
            tmp_path / "exports" / "2026" / "all.csv",
            since=datetime(2026, 1, 1, tzinfo=UTC),
            timezone="UTC",
            fmt=ExportFormat.CSV,
        )
    finally:
        engine.dispose()
    made = [files.out_dir.parent, files.out_dir, export.parent.parent, export.parent]
    assert {str(d): oct(mode(d)) for d in made} == {str(d): "0o700" for d in made}
    assert mode(tmp_path) == 0o755
