"""The export's settings: `[export]` read from the file (the sandbox's file by default), the
pull settings from the environment, and a wrong key or value refused naming its dotted key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.errors import ConfigError, exit_code_of
from recon.export_rows import ExportKind
from recon.settings import load_settings

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


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No RECON_* variable of the machine leaks in."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_"):
            monkeypatch.delenv(name)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recon.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> str:
    """The message of the ConfigError (exit 2) that loading ``path`` gives."""
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert exit_code_of(caught.value) == 2
    return str(caught.value)


def test_the_defaults_read_the_sandboxs_file_and_pull_nothing() -> None:
    """Comma, dot decimals, UTF-8, epoch seconds; no pull; 3 days' lookback; the 100,000 cap."""
    settings = load_settings()
    assert (settings.export.delimiter, settings.export.decimal_separator) == (",", ".")
    assert (settings.export.encoding, settings.export.times) == ("utf-8", "epoch")
    assert settings.export.columns.transaction_id == "id"
    assert settings.provider_export == "off"
    assert (settings.export_lookback_days, settings.export_row_cap) == (3, 100_000)


def test_an_export_table_is_the_whole_of_its_columns_and_types(tmp_path: Path) -> None:
    """Columns not named are not read; kinds not named have no values."""
    export = load_settings(write(tmp_path, MAPPING)).export
    assert export.columns.named() == {
        "transaction_id": "Transaction ID",
        "type": "Type",
        "state": "Status",
        "amount": "Amount",
        "currency": "Currency",
        "settled": "Settled at",
    }
    assert export.types.kinds() == {"1": ExportKind.PAYOUT, "Fee": ExportKind.FEE}
    assert str(export.zone) == "Europe/Stockholm"


def test_the_pull_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RECON_PROVIDER_EXPORT, RECON_EXPORT_LOOKBACK_DAYS, RECON_EXPORT_ROW_CAP."""
    monkeypatch.setenv("RECON_PROVIDER_EXPORT", "api")
    monkeypatch.setenv("RECON_EXPORT_LOOKBACK_DAYS", "0")
    monkeypatch.setenv("RECON_EXPORT_ROW_CAP", "50")
    settings = load_settings()
    assert (settings.provider_export, settings.export_lookback_days) == ("api", 0)
    assert settings.export_row_cap == 50


def test_a_row_cap_of_zero_exits_2_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cap below one would take every file as cut."""
    monkeypatch.setenv("RECON_EXPORT_ROW_CAP", "0")
    with pytest.raises(ConfigError, match="RECON_EXPORT_ROW_CAP"):
        load_settings()


@pytest.mark.parametrize(
    ("text", "key", "said"),
    [
        ("[export]\ndelimeter = ';'\n", "export.delimeter", "unknown key in [export]"),
        (
            MAPPING + "fees = ['F']\n",
            "export.types.fees",
            "unknown key in [export.types] (the keys: payout, returned_funds, fee,",
        ),
        (
            MAPPING.replace('transaction_id = "Transaction ID"', 'txn = "Transaction ID"'),
            "export.columns.txn",
            "unknown key in [export.columns]",
        ),
        (
            MAPPING.replace('transaction_id = "Transaction ID"\n', ""),
            "export.columns.transaction_id",
            "required when [export.columns] is given",
        ),
        ("[export]\ndelimiter = 'ab'\n", "export.delimiter", "'ab'"),
        ("[export]\ndelimiter = '\"'\n", "export.delimiter", "not a letter, digit, quote"),
        ("[export]\ndecimal_separator = ' '\n", "export.decimal_separator", "' '"),
        ("[export]\nencoding = 'klingon'\n", "export.encoding", "unknown encoding 'klingon'"),
        ("[export]\ntimes = 'YYYY-MM-DD'\n", "export.times", "a strftime format"),
        ("[export]\ntime_zone = 'Mars/Olympus'\n", "export.time_zone", "unknown time zone"),
        ("[export]\nmoney_out = 'minus'\n", "export.money_out", "'positive' or 'negative'"),
        (
            "[export.types]\npayout = ['1']\nfee = ['1']\n",
            "export.types",
            "'1' is under both payout and fee",
        ),
    ],
)
def test_a_wrong_export_key_exits_2_naming_its_dotted_key(
    tmp_path: Path, text: str, key: str, said: str
) -> None:
    """The key as the file writes it, and what is wrong with it."""
    message = refused(write(tmp_path, text))
    assert f"  {key} (config file " in message
    assert said in message
