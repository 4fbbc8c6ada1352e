"""`recon journal export` on a real store: a batch holds every unexported line once, a second
export only what is new, `--batch N` writes the same bytes, and a batch that fails its checks
writes nothing and marks nothing. SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine, func, select, update

from recon.cli import main
from recon.constants import DEFAULT_ACCOUNT
from recon.reconcile.journal import (
    JournalLine,
    JournalParams,
    PayoutMoney,
    Role,
    booked_entries,
    journal_entries,
)
from recon.store.journal_export import add_journal_lines, batch_lines, line_from_row
from recon.store.journal_tables import journal_batches, journal_lines
from recon.store.runs import start_run

ZONE = "Europe/Stockholm"
CODES = {
    Role.PAYOUTS_PAYABLE: "2890",
    Role.PROVIDER_BALANCE: "1940",
    Role.FEE_EXPENSE: "6570",
    Role.SUSPENSE: "2999",
}
SETTLED = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
CONFIG = """
[journal]
sie_series = "P"

[journal.accounts]
payouts_payable = "2890"
provider_balance = "1940"
fee_expense = "6570"
suspense = "2999"
"""


def _payout(tid: str, fee: int | None = 75, currency: str = "EUR") -> PayoutMoney:
    return PayoutMoney(
        transaction_id=tid,
        merchant_reference=f"ref-{tid}",
        currency=currency,
        amount_minor=10000,
        outcome="settled",
        settled_at=SETTLED,
        settled_since=SETTLED,
        fee_minor=fee,
        returned_minor=None,
    )


def _night(engine: Engine, payouts: list[PayoutMoney], day: int) -> list[JournalLine]:
    """What a night stores: the core's lines for ``payouts`` given what is stored already."""
    as_of = datetime(2026, 11, day, 2, 0, tzinfo=UTC)
    params = JournalParams(DEFAULT_ACCOUNT, CODES, ZoneInfo(ZONE), as_of)
    with engine.begin() as conn:
        stored = _all_lines(engine)
        number = max((line.number for line in stored), default=0) + 1
        lines = journal_entries(payouts, booked_entries(stored), params, next_number=number)
        run_id = start_run(conn, as_of=as_of, started_at=as_of, host="test", pid=1)
        add_journal_lines(conn, lines, run_id)
    return lines


def _all_lines(engine: Engine) -> list[JournalLine]:
    with engine.connect() as conn:
        return [line_from_row(row) for row in conn.execute(select(journal_lines))]


def _export(engine: Engine, tmp_path: Path, *args: str) -> Result:
    config = tmp_path / "recon.toml"
    config.write_text(CONFIG, encoding="utf-8")
    env = {
        "RECON_DATABASE_URL": engine.url.render_as_string(hide_password=False),
        "RECON_TIMEZONE": ZONE,
    }
    return CliRunner().invoke(main, ["--config", str(config), "journal", "export", *args], env=env)


def _files(directory: Path) -> dict[str, bytes]:
    if not directory.exists():
        return {}
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def _batches(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(journal_batches)).scalar() or 0)


def test_export_once_then_only_what_is_new_and_a_batch_again_byte_for_byte(
    engine: Engine, tmp_path: Path
) -> None:
    """Batch 1 (SIE) holds night 1's lines; a second export finds nothing; night 2's change (a
    fee raised: its reversal and the new fee) is batch 2 (Xero) alone, then night 3's batch 3
    (CSV); no line is in two batches; --batch 1 writes the same bytes, verified by the manifest's
    sha256s; --batch 99 exits 2 naming it."""
    first = _night(engine, [_payout("tx-1"), _payout("tx-2", fee=None)], day=21)
    one = tmp_path / "one"
    result = _export(engine, tmp_path, "--format", "sie", "--out", str(one))
    assert result.exit_code == 0, result.output
    assert "journal batch 1 (sie): 6 lines, 3 entries" in result.output
    written = _files(one)
    assert sorted(written) == ["journal-batch-1-default-EUR.si", "journal-batch-1-manifest.json"]
    manifest = json.loads(written["journal-batch-1-manifest.json"])
    assert manifest["lines"] == len(first) == 6
    for entry in manifest["files"]:
        assert hashlib.sha256(written[entry["name"]]).hexdigest() == entry["sha256"]
    assert b"#VER P 1 20261120" in written["journal-batch-1-default-EUR.si"]

    again = _export(engine, tmp_path, "--format", "sie", "--out", str(tmp_path / "again"))
    assert again.exit_code == 0, again.output
    assert "nothing to export" in again.output
    assert _batches(engine) == 1
    assert _files(tmp_path / "again") == {}

    second = _night(engine, [_payout("tx-1", fee=120), _payout("tx-2", fee=None)], day=23)
    assert any(line.reverses for line in second)
    two = tmp_path / "two"
    result = _export(engine, tmp_path, "--format", "xero", "--out", str(two))
    assert result.exit_code == 0, result.output
    assert sorted(_files(two)) == [
        "journal-batch-2-manifest.json",
        "journal-batch-2-xero-EUR-1.csv",
    ]
    third = _night(engine, [_payout("tx-1", fee=120), _payout("tx-3", currency="SEK")], day=24)
    result = _export(engine, tmp_path, "--account", DEFAULT_ACCOUNT, "--out", str(tmp_path / "3"))
    assert result.exit_code == 0, result.output
    assert "journal-batch-3.csv" in _files(tmp_path / "3")
    with engine.connect() as conn:
        batches = [batch_lines(conn, n) for n in (1, 2, 3)]
    keys = [(line.journal_id, line.line) for lines in batches for line in lines]
    assert len(keys) == len(set(keys)) == len(first) + len(second) + len(third)

    rewritten = tmp_path / "rewritten"
    result = _export(engine, tmp_path, "--batch", "1", "--out", str(rewritten))
    assert result.exit_code == 0, result.output
    assert _files(rewritten) == written
    assert _batches(engine) == 3

    missing = _export(engine, tmp_path, "--batch", "99", "--out", str(tmp_path / "none"))
    assert missing.exit_code == 2
    assert "no journal batch 99" in missing.output
    assert _files(tmp_path / "none") == {}


def test_an_entry_edited_in_the_store_refuses_the_batch_with_exit_3(
    engine: Engine, tmp_path: Path
) -> None:
    """A line's amount changed by hand: exit 3 naming the entry, no file nor directory, no batch,
    and every line still unexported."""
    lines = _night(engine, [_payout("tx-1"), _payout("tx-2")], day=21)
    edited = lines[0]
    with engine.begin() as conn:
        conn.execute(
            update(journal_lines)
            .where(journal_lines.c.journal_id == edited.journal_id, journal_lines.c.line == 1)
            .values(debit_minor=9999)
        )
    out = tmp_path / "out"
    result = _export(engine, tmp_path, "--format", "csv", "--out", str(out))
    assert result.exit_code == 3, result.output
    assert f"recon: error: journal_unbalanced: entry {edited.journal_id}" in result.output
    assert not out.exists()  # a refusal makes nothing, not even the directory
    assert _batches(engine) == 0
    with engine.connect() as conn:
        exported = conn.execute(
            select(func.count())
            .select_from(journal_lines)
            .where(journal_lines.c.batch.is_not(None))
        ).scalar()
    assert exported == 0


def test_a_fee_on_the_wrong_side_refuses_the_batch_with_exit_3(
    engine: Engine, tmp_path: Path
) -> None:
    """The fee's lines swapped (still balanced): exit 3 naming the fee entry, nothing written."""
    lines = _night(engine, [_payout("tx-1")], day=21)
    fee = next(line for line in lines if line.event == "payout_fee")
    with engine.begin() as conn:
        for line in (line for line in lines if line.journal_id == fee.journal_id):
            conn.execute(
                update(journal_lines)
                .where(
                    journal_lines.c.journal_id == line.journal_id,
                    journal_lines.c.line == line.line,
                )
                .values(debit_minor=line.credit_minor, credit_minor=line.debit_minor)
            )
    out = tmp_path / "out"
    result = _export(engine, tmp_path, "--format", "xero", "--out", str(out))
    assert result.exit_code == 3, result.output
    assert f"journal_unbalanced: entry {fee.journal_id}" in result.output
    assert "wrong side of provider_balance" in result.output
    assert _files(out) == {}
    assert _batches(engine) == 0


def test_a_batch_whose_stored_line_changed_is_not_written_again(
    engine: Engine, tmp_path: Path
) -> None:
    """--batch 1 after a stored line of it changed: exit 1 naming the file whose sha256 differs,
    nothing written."""
    lines = _night(engine, [_payout("tx-1", fee=None)], day=21)
    assert _export(engine, tmp_path, "--out", str(tmp_path / "one")).exit_code == 0
    with engine.begin() as conn:
        conn.execute(
            update(journal_lines)
            .where(journal_lines.c.journal_id == lines[0].journal_id)
            .values(account="9999")
        )
    result = _export(engine, tmp_path, "--batch", "1", "--out", str(tmp_path / "again"))
    assert result.exit_code == 1, result.output
    assert "journal-batch-1.csv" in result.output
    assert _files(tmp_path / "again") == {}


@pytest.mark.parametrize("args", [["--batch", "1", "--format", "csv"], ["--format", "pdf"]])
def test_bad_options_exit_2(engine: Engine, tmp_path: Path, args: list[str]) -> None:
    """--batch with --format, or an unknown format: a usage error, exit 2."""
    result = _export(engine, tmp_path, *args)
    assert result.exit_code == 2, result.output


def test_an_account_not_configured_exits_2(engine: Engine, tmp_path: Path) -> None:
    """--account naming no configured account: exit 2 naming the accounts there are."""
    result = _export(engine, tmp_path, "--account", "nosuch")
    assert result.exit_code == 2, result.output
    assert "'nosuch' is not a configured account" in result.output
