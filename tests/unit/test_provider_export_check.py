"""`recon provider-export check FILE`: what the mapping makes of a file, storing nothing; exit 0
when every row reads, 2 when the file is refused or has rows it cannot read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import main
from recon.sandbox import exports

MAPPING = """\
[export]
delimiter = ";"
decimal_separator = ","
times = "%Y-%m-%d %H:%M:%S"
time_zone = "Europe/Stockholm"

[export.columns]
transaction_id = "Transaction ID"
type = "Type"
state = "Status"
amount = "Amount"
currency = "Currency"
settled = "Settled at"

[export.types]
payout = ["1"]
fee = ["Fee"]
"""
FILE = (
    "Transaction ID;Type;Status;Amount;Currency;Settled at;Channel\r\n"
    "tx-1;1;STATE_SETTLED;1250,00;SEK;2026-03-02 09:15:00;web\r\n"
    "tx-1-fee;Fee;6;2,50;SEK;2026-03-02 09:15:00;web\r\n"
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No RECON_* variable of the machine leaks in; the store is a file that does not exist."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_DATABASE_URL", f"sqlite:///{tmp_path / 'none.db'}")


def check(
    tmp_path: Path, content: bytes, *extra: str, config: str | None = MAPPING
) -> tuple[int, str]:
    """Run the check on ``content`` (with ``config`` as the TOML file): exit code and output."""
    path = tmp_path / "export.csv"
    path.write_bytes(content)
    args = ["provider-export", "check", str(path), *extra]
    if config is not None:
        (tmp_path / "recon.toml").write_text(config, encoding="utf-8")
        args = ["--config", str(tmp_path / "recon.toml"), *args]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def test_a_file_whose_rows_all_read_exits_0_with_what_the_mapping_made_of_it(
    tmp_path: Path,
) -> None:
    """Headers matched and left over, count and sum per type and currency, the first rows."""
    code, out = check(tmp_path, FILE.encode())
    assert code == 0, out
    assert "  transaction_id = 'Transaction ID'" in out
    assert "headers left over (kept with each row): 'Channel'" in out
    assert "type '1' (payout) SEK: 1 row(s), sum 1250.00 SEK" in out
    assert "type 'Fee' (fee) SEK: 1 row(s), sum 2.50 SEK" in out
    assert "rows it cannot read: none" in out
    assert (
        "line 2: tx-1, payout ('1'), state 6 SETTLED, 1250.00 SEK, settled 2026-03-02T08:15:00Z"
        in out
    )
    assert "recon: every row reads (2 rows)" in out
    assert not (tmp_path / "none.db").exists()


def test_the_sandboxs_file_reads_with_no_configuration(tmp_path: Path) -> None:
    """The default mapping is the sandbox's own file."""
    rows = [["tx-1", "1", "6", "12.50", "eur", "r", "1767225600", "1767225600", "", "", ""]]
    code, out = check(tmp_path, exports.render(rows), config=None)
    assert code == 0, out
    assert "type '1' (payout) EUR: 1 row(s), sum 12.50 EUR" in out


def test_unreadable_rows_exit_2_listing_each_line_and_reason(tmp_path: Path) -> None:
    """The rows that read are still shown; the last line says an import would refuse it."""
    content = FILE + "tx-2;1;6;1.250,00;SEK;2026-03-02 10:00:00;app\r\ntx-3;1;6;1,00;SEK;soon;\r\n"
    code, out = check(tmp_path, content.encode())
    assert code == 2
    assert "rows it cannot read: 2" in out
    assert "  line 4: amount: not an amount: '1.250,00'" in out
    assert "  line 5: settled: not a time in the format '%Y-%m-%d %H:%M:%S': 'soon'" in out
    assert "2 row(s) cannot be read: an import would refuse this file (exit 2)" in out


def test_a_file_shaped_unlike_the_mapping_exits_2_with_the_headers_expected_and_found(
    tmp_path: Path,
) -> None:
    """The sandbox's file read through a mapping for another one."""
    rows = [["tx-1", "1", "6", "12.50", "eur", "r", "1767225600", "1767225600", "", "", ""]]
    code, out = check(tmp_path, exports.render(rows))
    assert code == 2
    assert "recon: error:" in out
    assert "an export shaped unlike the mapping: no column for transaction_id" in out
    assert "expected (the [export.columns] mapping): transaction_id = 'Transaction ID'" in out
    assert "found (delimiter ';'): 'id,type,state" in out


def test_an_account_that_is_not_configured_exits_2(tmp_path: Path) -> None:
    """--account names a configured provider account."""
    code, out = check(tmp_path, FILE.encode(), "--account", "nordlys")
    assert code == 2
    assert "'nordlys' is not a configured account" in out
    code, out = check(tmp_path, FILE.encode(), "--account", "default")
    assert code == 0
    assert "(account default)" in out


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    """Named, nothing else said."""
    result = CliRunner().invoke(main, ["provider-export", "check", str(tmp_path / "no.csv")])
    assert result.exit_code == 2
    assert "no.csv" in result.output
