"""`recon config check` warnings: which settings send secrets over plain connections."""

from __future__ import annotations

from typing import Any

import pytest

from recon.config_check import Status, configuration_warnings, environment_problems
from recon.settings import Settings


def topics(**values: Any) -> list[str]:
    warnings = configuration_warnings(Settings(**values))
    assert all(w.status is Status.WARNING for w in warnings)
    return [w.name for w in warnings]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"smtp_host": "mail.example.com", "smtp_user": "recon"}, ["smtp"]),
        ({"smtp_host": "mail.example.com", "smtp_user": "recon", "smtp_security": "starttls"}, []),
        ({"smtp_host": "mail.example.com", "smtp_user": "recon", "smtp_security": "tls"}, []),
        ({"smtp_host": "mail.example.com"}, []),
        ({"smtp_host": "127.0.0.1", "smtp_user": "recon"}, []),
        ({"smtp_host": "localhost", "smtp_user": "recon"}, []),
        ({"smtp_host": "::1", "smtp_user": "recon"}, []),
        ({"smtp_user": "recon"}, []),
    ],
)
def test_an_smtp_login_over_plain_tcp_off_this_machine_is_warned(
    values: dict[str, Any], expected: list[str]
) -> None:
    """A user with security none to a host other than loopback: the password travels in clear."""
    assert topics(**values) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://payouts.example.com", ["provider"]),
        ("HTTP://10.0.0.5:8700/api", ["provider"]),
        ("https://payouts.example.com", []),
        ("http://127.0.0.1:8700", []),
        ("http://127.8.0.1:8700", []),
        ("http://localhost:8700", []),
        ("http://[::1]:8700", []),
    ],
)
def test_an_http_provider_off_this_machine_is_warned(url: str, expected: list[str]) -> None:
    """http:// sends the API secret and tokens in clear, unless it stays on loopback."""
    assert topics(api_base_url=url) == expected


def test_each_accounts_plain_http_url_off_this_machine_is_warned_naming_its_table() -> None:
    """The warning names the account's key, not RECON_API_BASE_URL (which is not read)."""
    table = {"label": "B", "public_key": "pk-b", "secret": "sk-b"}
    accounts = {
        "brand_a": {**table, "api_base_url": "https://api.provider.test", "public_key": "pk-a"},
        "brand_b": {**table, "api_base_url": "http://api.provider.test"},
        "brand_c": {**table, "api_base_url": "http://127.0.0.1:8700", "public_key": "pk-c"},
    }
    (warning,) = configuration_warnings(Settings(accounts=accounts))
    assert warning.detail.startswith("accounts.brand_b.api_base_url is http://")


def test_an_accounts_secret_variable_nothing_reads_is_named() -> None:
    """Without tables RECON_API_SECRET is the secret: RECON_ACCOUNT_<NAME>_SECRET does nothing."""
    environ = {"RECON_ACCOUNT_BRAND_A_SECRET_FILE": "/run/secrets/a", "RECON_ACCOUNT_X": "1"}
    problems = environment_problems(environ, Settings())
    assert [p.detail for p in problems] == [
        "RECON_ACCOUNT_X: unknown setting (a typo?); it does nothing",
        "RECON_ACCOUNT_BRAND_A_SECRET_FILE: there are no [accounts.NAME] tables: "
        "RECON_API_SECRET is the secret; it does nothing",
    ]
