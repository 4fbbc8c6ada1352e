"""`recon export payouts` as a command: a bad --since is refused with a clear line and exit 2; an
export stopped or killed half-way leaves no partial file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import update

from recon.ingest.payouts import import_payouts_csv
from recon.store.db import make_engine, write_transaction
from recon.store.tables import payouts
from tests.e2e.run_support import RECON, start_recon, write_payouts_csv

# Enough payouts that writing the export takes a second or more, so that it is stopped half-way.
PAYOUTS = 20_000
PATIENCE = 60.0  # how long a test waits for the export to get somewhere (never a measurement)


def test_a_since_that_is_not_a_date_exits_2_naming_the_option(tmp_path: Path) -> None:
    """Nothing is written; the message names --since and the forms it accepts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    result = subprocess.run(
        [RECON, "export", "payouts", "--since", "last tuesday", "--out", str(tmp_path / "p.csv")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "--since" in result.stderr
    assert "ISO 8601" in result.stderr
    assert not (tmp_path / "p.csv").exists()


def test_an_empty_store_exports_the_header_alone(tmp_path: Path) -> None:
    """A date with no payouts after it: payouts.csv's header line, exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = f"sqlite:///{tmp_path / 'recon.db'}"
    out = tmp_path / "p.csv"
    result = subprocess.run(
        [RECON, "export", "payouts", "--since", "2026-01-01", "--out", str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith(
        "transaction_id,provider_account,merchant_reference,amount,"
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store of PAYOUTS reconciled payouts (settled); its URL."""
    root = tmp_path_factory.mktemp("history")
    rows = [
        {
            "transaction_id": f"tx{i:09d}Ab",
            "merchant_reference": f"ref-{i:09d}",
            "amount": f"{100 + i % 900}.{i % 100:02d}",
            "currency": "EUR",
            "customer_id": f"cust-{i % 5000}",
            "created": "2026-03-01T10:00:00Z",
        }
        for i in range(PAYOUTS)
    ]
    url = f"sqlite:///{root / 'recon.db'}"
    engine = make_engine(url)
    try:
        import_payouts_csv(engine, write_payouts_csv(root / "payouts.csv", rows))
        with write_transaction(engine) as conn:
            conn.execute(update(payouts).values(outcome="settled", state=6))
    finally:
        engine.dispose()
    return url


def start_export(url: str, out: Path, fmt: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DATABASE_URL"] = url
    args = ["export", "payouts", "--since", "2026-01-01", "--format", fmt, "--out", str(out)]
    return start_recon(env, *args, cwd=out.parent.parent)


def hidden_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.startswith("."))


def written(partial: Path) -> int:
    """Bytes in a partial file, or in the files of a partial directory (xlsxwriter's rows)."""
    files = [partial] if partial.is_file() else [p for p in partial.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files)


def wait_for_partial_data(process: subprocess.Popen[str], directory: Path) -> Path:
    """The export's partial file or directory, once it holds some rows (the export running)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline and process.poll() is None:
        found = [p for p in hidden_files(directory) if written(p) > 0]
        if found:
            return found[0]
        time.sleep(0.005)
    raise AssertionError(f"no partial file with data while the export ran ({process.poll()})")


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_an_export_stopped_by_sigterm_removes_its_partial_file(
    history: str, tmp_path: Path, fmt: str
) -> None:
    """SIGTERM half-way: the process ends by the signal and leaves neither file nor partial file."""
    out = tmp_path / "out" / f"payouts.{fmt}"
    out.parent.mkdir()
    process = start_export(history, out, fmt)
    try:
        wait_for_partial_data(process, out.parent)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=PATIENCE)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGTERM, stderr
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_the_partial_file_of_a_killed_export_is_swept_by_the_next_export(
    history: str, tmp_path: Path, fmt: str
) -> None:
    """SIGKILL leaves a partial file (xlsx: directory) with customer rows; the next export into
    the directory removes it and writes its own file whole."""
    out = tmp_path / "out" / f"payouts.{fmt}"
    out.parent.mkdir()
    process = start_export(history, out, fmt)
    try:
        leftover = wait_for_partial_data(process, out.parent)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=PATIENCE)
    finally:
        process.kill()
    assert hidden_files(out.parent) == [leftover]
    assert written(leftover) > 0  # customer rows: what the sweep is for

    again = start_export(history, tmp_path / "out" / "again.csv", "csv")
    _, stderr = again.communicate(timeout=PATIENCE * 2)
    assert again.returncode == 0, stderr
    assert hidden_files(out.parent) == []
    lines = (out.parent / "again.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == PAYOUTS + 1
