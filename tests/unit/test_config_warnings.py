"""`recon config check` warnings: which settings send secrets over plain connections."""

from __future__ import annotations

from typing import Any

import pytest

from recon.config_check import Status, configuration_warnings
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
