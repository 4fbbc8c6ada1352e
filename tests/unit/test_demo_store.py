"""The demo's store and brands, and the one line that points the other commands at them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.demo.brands import BRANDS, JOURNAL
from recon.demo.store import (
    demo_database_url,
    demo_env_line,
    demo_store_hint,
    write_demo_config,
)
from recon.settings import load_settings


def test_the_line_is_relative_to_the_checkout_as_the_readme_writes_it(tmp_path: Path) -> None:
    """`make demo` in a checkout prints the README's line, which works from that directory."""
    line = demo_env_line(Path("demo-out"), cwd=Path.cwd())
    assert line == (
        "export RECON_CONFIG=demo-out/recon.toml CREDENTIALS_DIRECTORY=demo-out/credentials"
    )
    assert demo_env_line(tmp_path / "d", cwd=tmp_path) == (
        "export RECON_CONFIG=d/recon.toml CREDENTIALS_DIRECTORY=d/credentials"
    )


def test_a_store_outside_the_working_directory_is_named_absolutely(tmp_path: Path) -> None:
    """`recon demo --dir /elsewhere` prints absolute paths, and its store's URL is absolute."""
    elsewhere = tmp_path / "elsewhere"
    line = demo_env_line(elsewhere, cwd=tmp_path / "work")
    where = elsewhere.resolve()
    assert line == (
        f"export RECON_CONFIG={where}/recon.toml CREDENTIALS_DIRECTORY={where}/credentials"
    )
    assert demo_database_url(elsewhere) == f"sqlite:///{where}/recon-demo.db"


def test_the_demo_ends_with_the_line_on_a_line_of_its_own(tmp_path: Path) -> None:
    """The hint's last line is the shell line alone, indented, to copy as it is."""
    hint = demo_store_hint(tmp_path / "demo-out")
    assert hint.splitlines()[-1].strip() == demo_env_line(tmp_path / "demo-out")


def test_the_written_configuration_is_the_two_brands_and_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the line points at loads as settings: the demo's store, its journal and both brands'
    accounts with their own journal tables, each secret from the credentials directory
    (owner-only files), none in the file."""
    for name in [n for n in os.environ if n.upper().startswith("RECON_")]:
        monkeypatch.delenv(name)
    tables = {b.name: b.table("http://127.0.0.1:8700") for b in BRANDS}
    config = write_demo_config(tmp_path, tables, JOURNAL)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "credentials"))
    settings = load_settings(config)
    assert settings.database_url == demo_database_url(tmp_path)
    accounts = {a.name: a for a in settings.provider_accounts}
    assert sorted(accounts) == ["fjord", "nordlys"]
    for brand in BRANDS:
        assert accounts[brand.name].label == brand.label
        assert accounts[brand.name].public_key == brand.public_key
        assert accounts[brand.name].secret.get_secret_value() == brand.secret
    # The ledger's codes, and Nordlys Travel's own account for its money at the provider.
    assert settings.journal is not None
    assert settings.journal.accounts.model_dump() == JOURNAL["accounts"]
    own = {name: account.journal for name, account in accounts.items()}
    assert own["nordlys"] is not None
    assert own["nordlys"].accounts.provider_balance == "1941"
    assert own["fjord"] is not None
    assert own["fjord"].sie_series == "F"
    for brand in BRANDS:
        assert brand.secret not in config.read_text(encoding="utf-8")
    for secret in (tmp_path / "credentials").iterdir():
        assert secret.stat().st_mode & 0o077 == 0, secret
