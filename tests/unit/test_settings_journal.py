"""The journal's settings: `[journal]`, `[accounts.NAME.journal]` and
RECON_JOURNAL_LOCKED_THROUGH read, refused naming the key, and shown by `recon config check`."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import main
from recon.config_check import render_journal, shown_value
from recon.errors import ConfigError, exit_code_of
from recon.journal_settings import account_books
from recon.reconcile.journal import Role
from recon.settings import Settings, load_settings

SECRETS = {
    "RECON_ACCOUNT_NORDLYS_SECRET": "sk-nordlys-5d0e21",
    "RECON_ACCOUNT_FJORD_SECRET": "sk-fjord-a7c390",
}
JOURNAL = """\
[journal]
sie_series = "R"

[journal.accounts]
payouts_payable = "2890"
provider_balance = "1940"
fee_expense = "6570"
"""
ACCOUNTS = """\
[accounts.nordlys]
label = "Nordlys"
api_base_url = "http://127.0.0.1:9"
public_key = "pk_nordlys"

[accounts.fjord]
label = "Fjord"
api_base_url = "http://127.0.0.1:9"
public_key = "pk_fjord"
"""
OWN = """\
[accounts.nordlys.journal]
sie_series = "N"

[accounts.nordlys.journal.accounts]
provider_balance = "1941"
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No RECON_* variable of the machine leaks in; the accounts' secrets are set; the store a
    config check looks at is a file that does not exist (the check creates nothing)."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_") or name.upper() == "CREDENTIALS_DIRECTORY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_DATABASE_URL", f"sqlite:///{tmp_path / 'none.db'}")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


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


def checked(path: Path) -> tuple[int, str]:
    """`recon --config PATH config check`: its exit code and output."""
    result = CliRunner().invoke(main, ["--config", str(path), "config", "check"])
    return result.exit_code, result.output


def test_the_journal_and_an_accounts_own_codes_are_read(tmp_path: Path) -> None:
    """An account's own codes and series over [journal]'s; the other account takes [journal]'s."""
    path = write(tmp_path, JOURNAL + "\n" + ACCOUNTS + "\n" + OWN)
    settings = load_settings(path)
    assert settings.journal is not None
    assert settings.journal.accounts.by_role() == {
        Role.PAYOUTS_PAYABLE: "2890",
        Role.PROVIDER_BALANCE: "1940",
        Role.FEE_EXPENSE: "6570",
    }
    books = {
        account.name: account_books(settings.journal, account.name, account.journal)
        for account in settings.provider_accounts
    }
    nordlys, fjord = books["nordlys"], books["fjord"]
    assert nordlys is not None
    assert fjord is not None
    assert nordlys.codes[Role.PROVIDER_BALANCE] == "1941"
    assert nordlys.codes[Role.PAYOUTS_PAYABLE] == "2890"
    assert (nordlys.sie_series, fjord.sie_series) == ("N", "R")
    assert fjord.codes[Role.PROVIDER_BALANCE] == "1940"
    assert fjord.setting == "[journal.accounts]"
    assert nordlys.setting == "[accounts.nordlys.journal.accounts] or [journal.accounts]"


def test_without_a_journal_table_no_books_are_kept(tmp_path: Path) -> None:
    """No [journal]: no codes for any account (no entries are made)."""
    settings = load_settings(write(tmp_path, ACCOUNTS))
    assert settings.journal is None
    assert settings.journal_locked_through is None
    assert all(
        account_books(settings.journal, account.name, account.journal) is None
        for account in settings.provider_accounts
    )


@pytest.mark.parametrize(
    ("text", "key", "keys"),
    [
        (JOURNAL.replace("sie_series", "sie_serie"), "journal.sie_serie", "sie_series"),
        (
            JOURNAL.replace("fee_expense", "fee_expenses"),
            "journal.accounts.fee_expenses",
            "payouts_payable, provider_balance, fee_expense, suspense",
        ),
        (
            JOURNAL + ACCOUNTS + "[accounts.fjord.journal]\nseries = 'F'\n",
            "accounts.fjord.journal.series",
            "accounts, sie_series",
        ),
    ],
)
def test_an_unknown_key_in_a_journal_table_exits_2_naming_it(
    tmp_path: Path, text: str, key: str, keys: str
) -> None:
    """The dotted key, the file and the keys that table has; `recon config check` exits 2."""
    path = write(tmp_path, text)
    message = refused(path)
    assert f"{key} (config file {path}): unknown key in [" in message
    assert keys in message
    code, output = checked(path)
    assert code == 2
    assert key in output
    assert "Connections:" not in output


def test_an_accounts_journal_without_a_journal_table_exits_2(tmp_path: Path) -> None:
    """Its codes alone would book nothing: refused, naming the account's table."""
    path = write(tmp_path, ACCOUNTS + "\n" + OWN)
    assert "[accounts.nordlys.journal] needs a [journal] table" in refused(path)
    code, output = checked(path)
    assert code == 2
    assert "[accounts.nordlys.journal] needs a [journal] table" in output


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (JOURNAL.replace('"2890"', '"28\\n90"'), "journal.accounts.payouts_payable"),
        (JOURNAL + ACCOUNTS + OWN.replace('"1941"', '"19\\r41"'), "accounts.nordlys.journal"),
        (JOURNAL.replace('"6570"', '" 6570"'), "journal.accounts.fee_expense"),
        (JOURNAL.replace('"6570"', '""'), "journal.accounts.fee_expense"),
        (JOURNAL.replace('"6570"', f'"{"6" * 65}"'), "journal.accounts.fee_expense"),
        (JOURNAL.replace('sie_series = "R"', 'sie_series = "R-1"'), "journal.sie_series"),
    ],
)
def test_a_code_that_is_not_one_short_line_exits_2_naming_it(
    tmp_path: Path, text: str, key: str
) -> None:
    """A control character, a space at an end, empty, over 64 characters, a bad series."""
    path = write(tmp_path, text)
    assert key in refused(path)
    code, output = checked(path)
    assert code == 2
    assert key in output


def test_a_newline_in_a_code_is_named_with_the_character(tmp_path: Path) -> None:
    """The message says which character, and shows the value (a code is no secret)."""
    message = refused(write(tmp_path, JOURNAL.replace('"2890"', '"28\\n90"')))
    assert "journal.accounts.payouts_payable" in message
    assert "control character ('\\n')" in message


def test_the_locked_through_date_is_read_from_the_environment_or_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`RECON_JOURNAL_LOCKED_THROUGH=2026-10-31`, or a TOML date, is the last closed day."""
    in_file = load_settings(write(tmp_path, "journal_locked_through = 2026-09-30\n" + JOURNAL))
    assert in_file.journal_locked_through == date(2026, 9, 30)
    monkeypatch.setenv("RECON_JOURNAL_LOCKED_THROUGH", "2026-10-31")
    assert load_settings().journal_locked_through == date(2026, 10, 31)


@pytest.mark.parametrize("value", ["last month", "2026-13-01", "31/10/2026"])
def test_a_locked_through_that_is_not_a_date_exits_2_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Refused at start, naming the variable and the value; `recon config check` exits 2."""
    monkeypatch.setenv("RECON_JOURNAL_LOCKED_THROUGH", value)
    path = write(tmp_path, JOURNAL)
    message = refused(path)
    assert "journal_locked_through (environment variable RECON_JOURNAL_LOCKED_THROUGH)" in message
    assert repr(value) in message
    code, output = checked(path)
    assert code == 2
    assert "RECON_JOURNAL_LOCKED_THROUGH" in output


def test_config_check_shows_each_accounts_codes_and_the_closed_period(tmp_path: Path) -> None:
    """One row per account: its codes per role, its series, where they are configured; a role
    nobody set is (unset); the closed period; never a secret."""
    path = write(tmp_path, "journal_locked_through = 2026-10-31\n" + JOURNAL + ACCOUNTS + OWN)
    settings = load_settings(path)
    rows = render_journal(settings).splitlines()
    assert rows[0].split() == [
        "account",
        "payouts_payable",
        "provider_balance",
        "fee_expense",
        "suspense",
        "sie",
        "series",
        "codes",
        "from",
    ]
    assert rows[1].split() == [
        "fjord",
        "2890",
        "1940",
        "6570",
        "(unset)",
        "R",
        "[journal.accounts]",
    ]
    assert rows[2].split()[:6] == ["nordlys", "2890", "1941", "6570", "(unset)", "N"]
    assert "[accounts.nordlys.journal.accounts] or [journal.accounts]" in rows[2]
    assert "closed through 2026-10-31" in rows[3]
    assert "(unset)" in rows[4]
    assert "payouts_payable 2890" in shown_value(settings, "journal")
    code, output = checked(path)
    assert "Journal:\n" + render_journal(settings) in output
    assert code != 2
    for secret in SECRETS.values():
        assert secret not in output


def test_config_check_without_a_journal_shows_it_unset_and_no_journal_section(
    tmp_path: Path,
) -> None:
    """No [journal]: the settings' table says (unset), and there is no Journal section."""
    assert render_journal(Settings()) == (
        "  none: [journal] is not configured, so no entries are made"
    )
    assert shown_value(Settings(), "journal") == "(unset)"
    code, output = checked(write(tmp_path, ACCOUNTS))
    assert code != 2
    assert "Journal:" not in output
    assert "journal_locked_through" in output
