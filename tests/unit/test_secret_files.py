"""Secret settings from files: RECON_<NAME>_FILE and a credentials directory (systemd's
$CREDENTIALS_DIRECTORY); errors name the file, never the secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.errors import ConfigError
from recon.settings import SECRET_FIELDS, load_settings

SECRET = "s3cret-from-a-file-8d1f"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("RECON_") or name == "CREDENTIALS_DIRECTORY":
            monkeypatch.delenv(name)


def secret_file(tmp_path: Path, name: str, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("api_secret", SECRET),
        ("smtp_password", SECRET),
        ("receiver_path_token", SECRET),
        ("heartbeat_url", f"https://hc-ping.com/{SECRET}"),
        ("database_url", f"postgresql+psycopg://recon:{SECRET}@db/recon"),
        ("import_source_url", f"postgresql+psycopg://reader:{SECRET}@shop/shop"),
    ],
)
def test_every_secret_setting_can_be_read_from_a_file_named_by_its_file_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, text: str
) -> None:
    """RECON_<NAME>_FILE: the file's text, without its final newline, is the value."""
    path = secret_file(tmp_path, field, text + "\n")
    monkeypatch.setenv(f"RECON_{field.upper()}_FILE", str(path))
    if field == "import_source_url":
        monkeypatch.setenv("RECON_IMPORT_SQL", "payouts.sql")  # the query it goes with
    value = getattr(load_settings(), field)
    assert (value if isinstance(value, str) else value.get_secret_value()) == text


def test_the_secret_settings_are_the_ones_tested_here() -> None:
    """A new secret setting gets a case above."""
    assert {"api_secret", "smtp_password", "receiver_path_token", "heartbeat_url",
            "database_url", "import_source_url"} == SECRET_FIELDS  # fmt: skip


def test_a_credentials_directory_supplies_secrets_named_as_their_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """systemd's LoadCredential=RECON_API_SECRET:…: $CREDENTIALS_DIRECTORY/RECON_API_SECRET."""
    secret_file(tmp_path, "RECON_API_SECRET", SECRET)
    secret_file(tmp_path, "RECON_SMTP_PASSWORD", "smtp-pw\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    settings = load_settings()
    assert settings.api_secret.get_secret_value() == SECRET
    assert settings.smtp_password is not None
    assert settings.smtp_password.get_secret_value() == "smtp-pw"
    assert settings.receiver_path_token is None  # no file: not set


def test_a_variable_set_directly_wins_over_the_credentials_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECON_API_SECRET in the environment is used; the credential is not read."""
    secret_file(tmp_path, "RECON_API_SECRET", SECRET)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    monkeypatch.setenv("RECON_API_SECRET", "from-the-environment")
    assert load_settings().api_secret.get_secret_value() == "from-the-environment"


def test_a_secret_set_both_directly_and_by_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both RECON_API_SECRET and RECON_API_SECRET_FILE: a ConfigError naming both, not a guess."""
    monkeypatch.setenv("RECON_API_SECRET", "direct")
    monkeypatch.setenv("RECON_API_SECRET_FILE", str(secret_file(tmp_path, "s", SECRET)))
    with pytest.raises(ConfigError, match="RECON_API_SECRET and RECON_API_SECRET_FILE are both"):
        load_settings()


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda tmp: tmp / "missing", "which does not exist"),
        (lambda tmp: tmp, "which is not a file"),
        (lambda tmp: secret_file(tmp, "empty", "\n"), "which is empty"),
        (lambda tmp: secret_file(tmp, "big", "x" * 70_000), "which is larger than 65536 bytes"),
    ],
)
def test_a_bad_secret_file_is_a_config_error_naming_the_variable_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: object, problem: str
) -> None:
    """Missing, a directory, empty, too large: the variable, the path and what is wrong."""
    path = make(tmp_path)  # type: ignore[operator]
    monkeypatch.setenv("RECON_SMTP_PASSWORD_FILE", str(path))
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value) == f"RECON_SMTP_PASSWORD_FILE names {path}, {problem}"


def test_an_unreadable_secret_file_is_named_without_its_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mode 000 (as another user's file): the error names the file, never what it holds."""
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = secret_file(tmp_path, "api-secret", SECRET, mode=0o000)
    monkeypatch.setenv("RECON_API_SECRET_FILE", str(path))
    with pytest.raises(ConfigError, match="may not read") as caught:
        load_settings()
    assert str(path) in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_secret_from_a_file_that_fails_validation_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A malformed database URL read from a file: the error names the variable, not the value."""
    monkeypatch.setenv("RECON_HEARTBEAT_URL_FILE", str(secret_file(tmp_path, "hb", SECRET)))
    monkeypatch.setenv("RECON_CONCURRENCY", "0")  # an unrelated error, so the message is built
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert SECRET not in str(caught.value)
