"""The options of ``recon sandbox serve`` turned into a sandbox configuration."""

from __future__ import annotations

from decimal import Decimal

import pytest
from click.testing import CliRunner, Result

from recon.cli import main
from recon.errors import ConfigError
from recon.sandbox.config import parse_account, parse_fee
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


def test_accounts_replace_the_one_merchant_and_each_gets_its_urls() -> None:
    """--account twice: two merchants with their keys (no demo merchant); {account} in the urls
    becomes each one's name."""
    config = build_config(
        host="127.0.0.1",
        port=8700,
        accounts=[parse_account("brand-a:ka:sa"), parse_account("brand-b:kb:s:with:colons")],
        returned_funds_url="http://127.0.0.1:8701/callbacks/{account}",
    )
    assert [(m.merchant_id, m.public_key) for m in config.merchants] == [
        ("brand-a", "ka"),
        ("brand-b", "kb"),
    ]
    assert config.merchants[1].secret.get_secret_value() == "s:with:colons"
    assert [m.returned_funds_url for m in config.merchants] == [
        "http://127.0.0.1:8701/callbacks/brand-a",
        "http://127.0.0.1:8701/callbacks/brand-b",
    ]


def test_the_fee_and_the_export_cap_have_their_documented_defaults() -> None:
    """No --fee: 0.25 fixed + 0.50 %; no --export-cap: the provider's 100,000 rows."""
    config = build_config(host="127.0.0.1", port=8700)
    assert (config.fee.fixed, config.fee.percent) == (Decimal("0.25"), Decimal("0.50"))
    assert config.export_cap == 100_000
    chosen = build_config(host="127.0.0.1", port=8700, fee=parse_fee("1,2.5"), export_cap=7)
    assert (chosen.fee.fixed, chosen.fee.percent, chosen.export_cap) == (1, Decimal("2.5"), 7)


def serve(*args: str) -> Result:
    """``recon sandbox serve`` with these options; every case here is refused before serving."""
    return CliRunner().invoke(main, ["sandbox", "serve", *args])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--account", "brand-a"], "expected NAME:PUBLIC_KEY:SECRET"),
        (["--account", "brand-a:key"], "expected NAME:PUBLIC_KEY:SECRET"),
        (["--account", "brand-a::secret"], "expected NAME:PUBLIC_KEY:SECRET"),
        (["--account", "brand a:key:secret"], "'brand a'"),
        (["--account", "a:k1:s1", "--account", "a:k2:s2"], "two accounts have the name 'a'"),
        (
            ["--account", "a:k:s1", "--account", "b:k:s2"],
            "two accounts ('a' and 'b') have one public key",
        ),
        (["--account", "a:k:s", "--public-key", "p"], "cannot be combined with --public-key"),
        (["--fee", "0.25"], "expected FIXED,PERCENT"),
        (["--fee", "0.25,abc"], "not a decimal number"),
        (["--fee", "-1,0.5"], "0 or more"),
        (["--fee", "0,101"], "between 0 and 100"),
        (["--fee", "1,2,3"], "expected FIXED,PERCENT"),
        (["--export-cap", "0"], "0"),
        (["--export-cap", "many"], "many"),
    ],
)
def test_a_bad_option_value_is_refused_with_exit_2_naming_the_option(
    args: list[str], says: str
) -> None:
    """Each malformed --account, --fee or --export-cap: exit 2, the option named, the reason
    given, and no secret of the command line repeated."""
    result = serve(*args)
    option = next(a for a in args if a.startswith("--") and a != "--public-key")
    assert result.exit_code == 2, result.output
    assert f"'{option}'" in result.output
    assert says in result.output
    for secret in ("secret", "s1", "s2"):
        assert f":{secret}" not in result.output
