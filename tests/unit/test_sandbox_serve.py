"""The options of ``recon sandbox serve`` turned into a sandbox configuration."""

from __future__ import annotations

import pytest

from recon.errors import ConfigError
from recon.sandbox.serve import base_url_for, build_config


def test_serve_options_become_the_configuration() -> None:
    """Every option lands in the merchant, the timings or the faults."""
    config = build_config(
        host="127.0.0.1",
        port=8800,
        latency_ms=5,
        error_rate=0.1,
        rate_429=0.2,
        rate_limit=50,
        token_lifetime=30,
        settle_after=5,
        returned_funds_url="http://127.0.0.1:8701/returns",
        callback_url="http://127.0.0.1:8701/callbacks",
        merchant_id="m1",
        public_key="pk",
        secret="sk",
        admin=False,
    )
    [merchant] = config.merchants
    assert (merchant.merchant_id, merchant.public_key) == ("m1", "pk")
    assert merchant.secret.get_secret_value() == "sk"
    assert merchant.returned_funds_url == "http://127.0.0.1:8701/returns"
    assert merchant.callback_url == "http://127.0.0.1:8701/callbacks"
    assert (config.token_lifetime_seconds, config.settle_after_seconds) == (30, 5)
    assert (config.faults.latency_ms, config.faults.error_rate) == (5, 0.1)
    assert (config.faults.rate_429, config.faults.rate_limit_rps) == (0.2, 50)
    assert config.base_url == "http://127.0.0.1:8800"
    assert not config.admin_enabled


def test_the_defaults_are_the_demo_merchant_on_loopback() -> None:
    """Without options: sandbox-merchant, 6 h tokens, settle after 60 s, admin on."""
    config = build_config(host="127.0.0.1", port=8700)
    assert config.merchants[0].merchant_id == "sandbox-merchant"
    assert (config.token_lifetime_seconds, config.settle_after_seconds) == (21600, 60)
    assert config.admin_enabled


def test_a_wrong_option_is_a_config_error_without_the_secret() -> None:
    """A share above 1 is a ConfigError naming the field and not showing the secret."""
    with pytest.raises(ConfigError, match="error_rate") as caught:
        build_config(host="127.0.0.1", port=8700, error_rate=3, secret="top-secret-value")
    assert "top-secret-value" not in str(caught.value)


def test_an_ipv6_host_is_bracketed_in_links() -> None:
    """Hosted-page links to an IPv6 address put it in brackets."""
    assert base_url_for("::1", 8700) == "http://[::1]:8700"
    assert base_url_for("localhost", 8700) == "http://localhost:8700"
