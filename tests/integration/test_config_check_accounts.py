"""`recon config check` with two provider accounts, against the real sandbox serving both over
loopback: each account listed (never its secret) and its keys tested."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recon.cli import main
from recon.sandbox.loopback import LoopbackSandbox, SandboxAccount


@pytest.fixture
def brand_b(payout_sandbox: LoopbackSandbox) -> SandboxAccount:
    """A second merchant of the sandbox, with keys of its own."""
    return payout_sandbox.add_account("brand-b")


@pytest.fixture
def config(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    payout_sandbox: LoopbackSandbox,
    brand_b: SandboxAccount,
) -> Path:
    """Two accounts in a TOML file: brand A's secret in its variable, brand B's in a file."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_") or name.upper() == "CREDENTIALS_DIRECTORY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_DATABASE_URL", f"sqlite:///{tmp_path / 'recon.db'}")
    monkeypatch.setenv("RECON_ACCOUNT_BRAND_A_SECRET", payout_sandbox.secret)
    (tmp_path / "brand-b-secret").write_text(brand_b.secret + "\n", encoding="utf-8")
    monkeypatch.setenv("RECON_ACCOUNT_BRAND_B_SECRET_FILE", str(tmp_path / "brand-b-secret"))
    path = tmp_path / "recon.toml"
    path.write_text(
        f"""\
[accounts.brand_a]
label = "Brand A (DE)"
api_base_url = "{payout_sandbox.url}"
public_key = "{payout_sandbox.public_key}"

[accounts.brand_b]
label = "Brand B (Nordics)"
api_base_url = "{brand_b.url}"
public_key = "{brand_b.public_key}"
concurrency = 4
""",
        encoding="utf-8",
    )
    return path


def config_check(path: Path) -> Result:
    return CliRunner().invoke(main, ["--config", str(path), "config", "check"])


def lines_of(result: Result, start: str) -> list[str]:
    return [ln.strip() for ln in result.output.splitlines() if ln.strip()[2:].startswith(start)]


def assert_no_secret(result: Result, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in result.output


def test_each_account_is_listed_and_its_keys_tested(
    config: Path, payout_sandbox: LoopbackSandbox, brand_b: SandboxAccount
) -> None:
    """Name, label, URL, public key and where the secret comes from; a ✓ per account; exit 0."""
    result = config_check(config)
    assert result.exit_code == 0, result.output
    accounts = result.output.split("Accounts:\n")[1].split("Connections:")[0].splitlines()
    assert [line.split()[0] for line in accounts] == ["name", "brand_a", "brand_b"]
    a, b = accounts[1], accounts[2]
    for line, label, key in ((a, "Brand A (DE)", payout_sandbox.public_key),
                             (b, "Brand B (Nordics)", brand_b.public_key)):  # fmt: skip
        assert label in line
        assert payout_sandbox.url in line
        assert key in line
    assert a.endswith("env RECON_ACCOUNT_BRAND_A_SECRET")
    assert b.endswith("env RECON_ACCOUNT_BRAND_B_SECRET_FILE")
    assert lines_of(result, "provider") == [
        f"✓ provider brand_a  {payout_sandbox.url} as {payout_sandbox.public_key}: "
        "merchant.authorize issued a token",
        f"✓ provider brand_b  {brand_b.url} as {brand_b.public_key}: "
        "merchant.authorize issued a token",
    ]
    assert "  accounts " in result.output
    assert "brand_a, brand_b" in result.output
    assert_no_secret(result, payout_sandbox.secret, brand_b.secret)


def test_one_accounts_refused_keys_fail_it_and_not_the_other(
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    payout_sandbox: LoopbackSandbox,
    brand_b: SandboxAccount,
) -> None:
    """Brand B's secret is brand A's: ✗ for B with the provider's refusal, ✓ for A, exit 1."""
    Path(os.environ["RECON_ACCOUNT_BRAND_B_SECRET_FILE"]).write_text("wrong-b-secret-5f0a", "utf-8")
    result = config_check(config)
    assert result.exit_code == 1, result.output
    a, b = lines_of(result, "provider")
    assert a.startswith("✓ provider brand_a")
    assert b.startswith("✗ provider brand_b")
    assert "merchant.authorize" in b
    assert "401" in b or "403" in b
    assert_no_secret(result, payout_sandbox.secret, brand_b.secret, "wrong-b-secret-5f0a")


def test_a_secret_variable_of_an_account_not_configured_fails_the_check(
    config: Path, monkeypatch: pytest.MonkeyPatch, payout_sandbox: LoopbackSandbox
) -> None:
    """RECON_ACCOUNT_BRNAD_A_SECRET (a typo) does nothing: named, with the accounts there are."""
    monkeypatch.setenv("RECON_ACCOUNT_BRNAD_A_SECRET", "sk-typo-31c9")
    result = config_check(config)
    assert result.exit_code == 1
    assert (
        "✗ env       RECON_ACCOUNT_BRNAD_A_SECRET: no account brnad_a is configured (the "
        "accounts: brand_a, brand_b); it does nothing"
    ) in result.output
    assert_no_secret(result, payout_sandbox.secret, "sk-typo-31c9")


def test_a_bad_account_table_exits_2_before_any_check(config: Path) -> None:
    """Two accounts with one public key: the configuration is refused, naming the setting."""
    text = config.read_text(encoding="utf-8")
    key_b = text.split('public_key = "')[2].split('"')[0]
    config.write_text(text.replace(key_b, text.split('public_key = "')[1].split('"')[0]), "utf-8")
    result = config_check(config)
    assert result.exit_code == 2
    assert "accounts (config file" in result.output
    assert "two accounts have one public key (brand_a and brand_b)" in result.output
    assert "Connections:" not in result.output


def test_the_api_settings_are_shown_as_not_read(config: Path) -> None:
    """With account tables, RECON_API_* are listed as read by nothing."""
    result = config_check(config)
    rows = {ln.split()[0]: ln for ln in result.output.splitlines() if ln.startswith("  api_")}
    assert set(rows) == {"api_base_url", "api_public_key", "api_secret"}
    assert all("(not read: each account gives its own)" in row for row in rows.values())
