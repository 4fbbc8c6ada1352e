"""Provider accounts in the configuration: `[accounts.NAME]` tables, their secrets, the default
account of RECON_API_*, `--account`, and every bad input refused naming the setting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import SecretStr

from recon.accounts import DEFAULT_ACCOUNT, Account
from recon.cli import main
from recon.errors import ConfigError, InputError, exit_code_of
from recon.redact import scrubber_for
from recon.settings import Settings, load_settings

THREE_BRANDS = """\
[accounts.northwind]
label = "Northwind (EU)"
api_base_url = "https://api.provider.example"
public_key = "pk_live_northwind_4f2a"

[accounts.fjord]
label = "Fjord Nordics"
api_base_url = "https://api.provider.example"
public_key = "pk_live_fjord_91c0"
rate_limit = 20
concurrency = 8

[accounts.harbour]
label = "Harbour UK"
api_base_url = "https://eu.provider.example/v2"
public_key = "pk_live_harbour_07be"
mail_to = ["finance-uk@harbour.example", "ops@harbour.example"]
"""
SECRETS = {
    "RECON_ACCOUNT_NORTHWIND_SECRET": "sk-northwind-a81f66",
    "RECON_ACCOUNT_FJORD_SECRET": "sk-fjord-0b93d2",
    "RECON_ACCOUNT_HARBOUR_SECRET": "sk-harbour-c4e710",
}
TABLE = 'label = "A"\napi_base_url = "https://api.provider.example"\n'


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No RECON_* variable or credentials directory of the machine leaks into the tests."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_") or name.upper() == "CREDENTIALS_DIRECTORY":
            monkeypatch.delenv(name)


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return SECRETS


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recon.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> str:
    """The message of the ConfigError loading ``path`` gives (and it never shows a secret)."""
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert exit_code_of(caught.value) == 2
    for secret in SECRETS.values():
        assert secret not in message
    return message


def test_three_brands_are_three_accounts_in_name_order(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """Each table is an account with its label, URL, keys and secret; an account without its own
    rate limit or concurrency has the settings' (RECON_RATE_LIMIT unset: none, 32)."""
    settings = load_settings(write(tmp_path, THREE_BRANDS))
    assert settings.provider_accounts == (
        Account(
            name="fjord",
            label="Fjord Nordics",
            api_base_url="https://api.provider.example",
            public_key="pk_live_fjord_91c0",
            secret=SecretStr("sk-fjord-0b93d2"),
            rate_limit=20.0,
            concurrency=8,
            mail_to=(),
        ),
        Account(
            name="harbour",
            label="Harbour UK",
            api_base_url="https://eu.provider.example/v2",
            public_key="pk_live_harbour_07be",
            secret=SecretStr("sk-harbour-c4e710"),
            rate_limit=None,
            concurrency=32,
            mail_to=("finance-uk@harbour.example", "ops@harbour.example"),
        ),
        Account(
            name="northwind",
            label="Northwind (EU)",
            api_base_url="https://api.provider.example",
            public_key="pk_live_northwind_4f2a",
            secret=SecretStr("sk-northwind-a81f66"),
            rate_limit=None,
            concurrency=32,
            mail_to=(),
        ),
    )
    assert [a.secret.get_secret_value() for a in settings.provider_accounts] == [
        secrets["RECON_ACCOUNT_FJORD_SECRET"],
        secrets["RECON_ACCOUNT_HARBOUR_SECRET"],
        secrets["RECON_ACCOUNT_NORTHWIND_SECRET"],
    ]


def test_an_account_without_its_own_limits_takes_the_settings(
    tmp_path: Path, secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECON_RATE_LIMIT and RECON_CONCURRENCY are every account's unless its table says."""
    monkeypatch.setenv("RECON_RATE_LIMIT", "5")
    monkeypatch.setenv("RECON_CONCURRENCY", "4")
    by_name = {a.name: a for a in load_settings(write(tmp_path, THREE_BRANDS)).provider_accounts}
    assert (by_name["northwind"].rate_limit, by_name["northwind"].concurrency) == (5.0, 4)
    assert (by_name["fjord"].rate_limit, by_name["fjord"].concurrency) == (20.0, 8)


def test_without_tables_the_api_settings_are_the_one_account_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An existing setup: RECON_API_*, its rate limit, concurrency and recipients are `default`."""
    for name, value in {
        "RECON_API_BASE_URL": "https://api.provider.example",
        "RECON_API_PUBLIC_KEY": "pk-live-1",
        "RECON_API_SECRET": "sk-live-9",
        "RECON_RATE_LIMIT": "12.5",
        "RECON_CONCURRENCY": "8",
        "RECON_MAIL_TO": "finance@x.test,ops@x.test",
    }.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.accounts == {}
    assert settings.provider_accounts == (
        Account(
            name=DEFAULT_ACCOUNT,
            label=DEFAULT_ACCOUNT,
            api_base_url="https://api.provider.example",
            public_key="pk-live-1",
            secret=SecretStr("sk-live-9"),
            rate_limit=12.5,
            concurrency=8,
            mail_to=("finance@x.test", "ops@x.test"),
        ),
    )
    assert settings.for_account(settings.provider_accounts[0]) == settings


def test_the_defaults_are_the_sandboxs_one_account() -> None:
    """No setting at all: the demo's sandbox keys are the account default."""
    (account,) = Settings().provider_accounts
    assert (account.name, account.public_key) == ("default", "sandbox-public-key")


def test_an_accounts_secret_comes_from_its_file_or_the_credentials_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECON_ACCOUNT_<NAME>_SECRET_FILE names a file; a credentials directory holds a file named
    as the variable; the file's final newline is not part of the secret."""
    (tmp_path / "northwind-secret").write_text("sk-from-file-71\n", encoding="utf-8")
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "RECON_ACCOUNT_HARBOUR_SECRET").write_text("sk-credential-3\n", "utf-8")
    monkeypatch.setenv("RECON_ACCOUNT_NORTHWIND_SECRET_FILE", str(tmp_path / "northwind-secret"))
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    monkeypatch.setenv("RECON_ACCOUNT_FJORD_SECRET", "sk-env-5")
    accounts = load_settings(write(tmp_path, THREE_BRANDS)).provider_accounts
    assert {a.name: a.secret.get_secret_value() for a in accounts} == {
        "northwind": "sk-from-file-71",
        "harbour": "sk-credential-3",
        "fjord": "sk-env-5",
    }


@pytest.mark.parametrize("name", ["Brand_A", "brand-a", "1brand", "_brand", "a" * 33, "brand a"])
def test_an_account_name_that_is_not_a_plain_identifier_is_refused(
    tmp_path: Path, name: str
) -> None:
    """The name becomes a column value, a URL path and a variable: plain lower-case only."""
    message = refused(write(tmp_path, f'[accounts."{name}"]\n{TABLE}public_key = "pk"\n'))
    assert f"accounts.{name} (config file" in message
    assert "is not a plain identifier" in message
    assert "secret" not in message  # not looked for under a name that is refused


def test_a_name_of_32_characters_is_plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The longest name allowed, its variable upper-cased."""
    name = "b" + "r4nd_" * 6 + "x"
    assert len(name) == 32
    monkeypatch.setenv(f"RECON_ACCOUNT_{name.upper()}_SECRET", "sk-1")
    settings = load_settings(write(tmp_path, f"[accounts.{name}]\n{TABLE}public_key = 'pk'\n"))
    assert [a.name for a in settings.provider_accounts] == [name]


def test_two_accounts_with_one_public_key_are_refused(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """Each brand's payouts would be asked for under the other's name: refused, both named."""
    text = THREE_BRANDS.replace("pk_live_harbour_07be", "pk_live_fjord_91c0")
    message = refused(write(tmp_path, text))
    assert "accounts (config file" in message
    assert "two accounts have one public key (fjord and harbour)" in message


def test_an_account_whose_secret_is_nowhere_is_refused_naming_its_variables(
    tmp_path: Path, secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No variable, file or credential holds it: one line naming the three places."""
    monkeypatch.delenv("RECON_ACCOUNT_FJORD_SECRET")
    message = refused(write(tmp_path, THREE_BRANDS))
    assert message.splitlines()[1:] == [
        f"  accounts.fjord.secret (config file {tmp_path / 'recon.toml'}): no secret found: set "
        "RECON_ACCOUNT_FJORD_SECRET, or RECON_ACCOUNT_FJORD_SECRET_FILE naming its file, or "
        "give the credential RECON_ACCOUNT_FJORD_SECRET"
    ]


def test_a_secret_given_directly_and_by_file_is_refused(
    tmp_path: Path, secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both RECON_ACCOUNT_<NAME>_SECRET and its _FILE: refused rather than one silently winning."""
    (tmp_path / "fjord").write_text("sk-other", encoding="utf-8")
    monkeypatch.setenv("RECON_ACCOUNT_FJORD_SECRET_FILE", str(tmp_path / "fjord"))
    message = refused(write(tmp_path, THREE_BRANDS))
    assert "accounts.fjord.secret" in message
    assert "RECON_ACCOUNT_FJORD_SECRET and RECON_ACCOUNT_FJORD_SECRET_FILE are both set" in message
    assert "sk-other" not in message


def test_an_unknown_key_in_an_account_table_is_refused_with_the_keys_there_are(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """A misspelt key is named with the keys a table has, not silently ignored."""
    text = THREE_BRANDS.replace("concurrency = 8", "concurency = 8")
    message = refused(write(tmp_path, text))
    assert (
        "accounts.fjord.concurency (config file "
        f"{tmp_path / 'recon.toml'}): unknown key in an account table (the keys: label, "
        "api_base_url, public_key, rate_limit, concurrency, mail_to, journal)"
    ) in message


def test_a_secret_in_the_file_is_refused(tmp_path: Path, secrets: dict[str, str]) -> None:
    """The file is read by more people than a secret may be: the secret goes in the environment."""
    text = THREE_BRANDS + 'secret = "sk-written-in-the-file"\n'
    message = refused(write(tmp_path, text))
    assert "accounts.harbour.secret" in message
    assert "set RECON_ACCOUNT_HARBOUR_SECRET or RECON_ACCOUNT_HARBOUR_SECRET_FILE" in message
    assert "sk-written-in-the-file" not in message


def test_every_wrong_key_of_every_table_gets_its_line(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """A missing label, a URL that is not http(s), a limit below zero: one line each, the value
    shown where it is not the secret, and the secret never (the table holds it)."""
    text = (
        THREE_BRANDS.replace('label = "Fjord Nordics"\n', "")
        .replace("https://eu.provider.example/v2", "ftp://eu.provider.example")
        .replace("rate_limit = 20", "rate_limit = -2")
    )
    lines = refused(write(tmp_path, text)).splitlines()[1:]
    path = tmp_path / "recon.toml"
    assert lines == [
        f"  accounts.fjord.label (config file {path}): Field required",
        f"  accounts.fjord.rate_limit (config file {path}): Input should be greater than 0 "
        "(got -2)",
        f"  accounts.harbour.api_base_url (config file {path}): not an http:// or https:// URL: "
        "'ftp://eu.provider.example'",
    ]


def test_api_settings_alongside_account_tables_are_refused(
    tmp_path: Path, secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing would read them: set, they are a mistake (the operator means one of the accounts)."""
    monkeypatch.setenv("RECON_API_PUBLIC_KEY", "pk-live-1")
    monkeypatch.setenv("RECON_API_SECRET", "sk-live-9")
    message = refused(write(tmp_path, THREE_BRANDS))
    assert "RECON_API_PUBLIC_KEY, RECON_API_SECRET: not read when [accounts.NAME] tables" in message
    assert "sk-live-9" not in message


def test_a_fee_entry_of_an_account_not_configured_is_refused(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """A fee entry naming no configured account would never price a payout."""
    fee = '[[fees]]\ncurrency = "EUR"\nvalid_from = 2026-11-01\nfixed = "0.25"\n'
    assert load_settings(write(tmp_path, THREE_BRANDS + fee + 'account = "fjord"\n')).fees
    message = refused(write(tmp_path, THREE_BRANDS + fee + 'account = "default"\n'))
    assert "account 'default' is not configured (the accounts: fjord, harbour, northwind)" in (
        message
    )


def test_the_account_tables_come_from_the_file_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """RECON_ACCOUNTS is no setting: the tables are written in the TOML file."""
    monkeypatch.setenv("RECON_ACCOUNTS", '{"a": {"label": "A"}}')
    assert load_settings().accounts == {}


def test_select_accounts_takes_every_account_or_those_named(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """No --account: every account; named ones once each, in name order."""
    settings = load_settings(write(tmp_path, THREE_BRANDS))
    assert [a.name for a in settings.select_accounts([])] == ["fjord", "harbour", "northwind"]
    named = settings.select_accounts(["northwind", "fjord", "northwind"])
    assert [a.name for a in named] == ["fjord", "northwind"]


def test_an_account_option_not_configured_is_a_usage_error_naming_the_option(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """Exit 2, the option and the configured accounts named."""
    settings = load_settings(write(tmp_path, THREE_BRANDS))
    with pytest.raises(InputError) as caught:
        settings.select_accounts(["fjord", "brand_b"])
    assert exit_code_of(caught.value) == 2
    assert str(caught.value) == (
        "--account: 'brand_b' is not a configured account (the accounts: fjord, harbour, northwind)"
    )
    with pytest.raises(InputError, match="the accounts: default"):
        Settings().select_accounts(["fjord"])


def test_the_settings_for_an_account_carry_its_url_keys_and_limits(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """What the provider client and the night's asking read (RECON_API_*, RECON_RATE_LIMIT,
    RECON_CONCURRENCY) become the account's; everything else stays."""
    settings = load_settings(write(tmp_path, THREE_BRANDS))
    fjord = settings.provider_accounts[0]
    own = settings.for_account(fjord)
    assert (own.api_base_url, own.api_public_key, own.api_secret.get_secret_value()) == (
        "https://api.provider.example",
        "pk_live_fjord_91c0",
        "sk-fjord-0b93d2",
    )
    assert (own.rate_limit, own.concurrency) == (20.0, 8)
    assert (own.database_url, own.accounts) == (settings.database_url, settings.accounts)


def test_every_accounts_secret_is_masked_by_the_scrubber(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    """An account's secret echoed in any message is masked; an Account's repr holds none."""
    scrub = scrubber_for(load_settings(write(tmp_path, THREE_BRANDS)))
    assert scrub(f"refused: {secrets['RECON_ACCOUNT_HARBOUR_SECRET']}") == "refused: ***"
    assert "sk-" not in repr(load_settings(write(tmp_path, THREE_BRANDS)).provider_accounts)


def test_a_bad_account_table_exits_2_naming_it(tmp_path: Path, secrets: dict[str, str]) -> None:
    """Any command: the configuration is refused before anything runs."""
    path = write(tmp_path, THREE_BRANDS.replace("[accounts.fjord]", "[accounts.Fjord]"))
    result = CliRunner().invoke(main, ["--config", str(path), "config", "check"])
    assert result.exit_code == 2
    assert "accounts.Fjord (config file" in result.output
    assert "is not a plain identifier" in result.output
