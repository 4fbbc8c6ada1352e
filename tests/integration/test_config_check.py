"""`recon config check` against a real SQLite file, the sandbox over loopback and an SMTP server."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from click.testing import CliRunner, Result
from pydantic import SecretStr
from sqlalchemy import text

from recon.cli import main
from recon.config_check import Status, check_database, shown_value
from recon.redact import MASK, scrubber_for
from recon.sandbox.app import create_app
from recon.sandbox.config import Merchant, SandboxConfig
from recon.serving import serve_in_thread
from recon.settings import Settings
from recon.store.db import make_engine, upgrade
from recon.store.migrate import head_revision
from recon.store.tables import VERSION_TABLE

PUBLIC_KEY = "cfg-check-public"
API_SECRET = "cfg-check-api-secret-5e1d"
SMTP_PASSWORD = "cfg-check-smtp-pw-77aa"
PATH_TOKEN = "cfg-check-path-token-c0ffee"
SECRETS = (API_SECRET, SMTP_PASSWORD, PATH_TOKEN)


def _authenticator(
    server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok, handled=False)


class NoMail:
    """An SMTP handler that fails the test if a message ever arrives."""

    received = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        NoMail.received += 1
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def provider_url() -> Iterator[str]:
    """The sandbox, with a merchant of our own keys, served over loopback."""
    merchant = Merchant(
        merchant_id="cfg-check", public_key=PUBLIC_KEY, secret=SecretStr(API_SECRET)
    )
    with serve_in_thread(create_app(SandboxConfig(merchants=[merchant]))) as url:
        yield url


@pytest.fixture
def smtp_port() -> Iterator[int]:
    """An SMTP server on loopback that wants AUTH LOGIN (plain text is fine on loopback)."""
    port = free_port()
    controller = Controller(
        NoMail(),
        hostname="127.0.0.1",
        port=port,
        authenticator=_authenticator,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """A SQLite file at the newest schema revision."""
    url = f"sqlite:///{tmp_path / 'recon.db'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


@pytest.fixture
def env(
    monkeypatch: pytest.MonkeyPatch, provider_url: str, database_url: str, smtp_port: int
) -> dict[str, str]:
    """A working configuration in RECON_* variables (and nothing from the machine's own)."""
    for name in list(os.environ):
        if name.upper().startswith("RECON_"):
            monkeypatch.delenv(name)
    values = {
        "RECON_DATABASE_URL": database_url,
        "RECON_API_BASE_URL": provider_url,
        "RECON_API_PUBLIC_KEY": PUBLIC_KEY,
        "RECON_API_SECRET": API_SECRET,
        "RECON_RECEIVER_PATH_TOKEN": PATH_TOKEN,
        "RECON_SMTP_HOST": "127.0.0.1",
        "RECON_SMTP_PORT": str(smtp_port),
        "RECON_SMTP_USER": "recon",
        "RECON_SMTP_PASSWORD": SMTP_PASSWORD,
        "RECON_SMTP_TIMEOUT": "5",
        "RECON_MAIL_TO": "ops@x.test,finance@x.test",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def config_check(*args: str) -> Result:
    return CliRunner().invoke(main, [*args, "config", "check"], catch_exceptions=False)


def line_of(result: Result, check: str) -> str:
    """The output line of one connection check (not a warning, marked "!")."""
    (line,) = [
        ln
        for ln in result.output.splitlines()
        if ln.strip()[2:].startswith(check) and not ln.strip().startswith("!")
    ]
    return line


def assert_no_secret(result: Result) -> None:
    for secret in SECRETS:
        assert secret not in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_working_setup_passes_every_check_and_exits_0(env: dict[str, str]) -> None:
    """Database at head, provider token, SMTP login: three ✓ lines, exit 0, no secret shown."""
    result = config_check()
    assert result.exit_code == 0, result.output
    assert line_of(result, "database").lstrip().startswith("✓")
    assert f"schema at revision {head_revision()} (current)" in line_of(result, "database")
    assert line_of(result, "provider").lstrip().startswith("✓")
    assert "merchant.authorize issued a token" in line_of(result, "provider")
    assert line_of(result, "smtp").lstrip().startswith("✓")
    assert "logged in as recon (no message sent)" in line_of(result, "smtp")
    assert NoMail.received == 0
    assert_no_secret(result)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_every_setting_is_listed_with_its_source_and_secrets_masked(
    env: dict[str, str],
) -> None:
    """Each setting appears once, with env/default as its source; secret values read as the mask."""
    result = config_check()
    rows = {ln.split()[0]: ln for ln in result.output.splitlines() if ln.startswith("  ")}
    for field in Settings.model_fields:
        assert field in rows
    assert rows["api_secret"].split()[1] == MASK
    assert rows["smtp_password"].split()[1] == MASK
    assert rows["receiver_path_token"].split()[1] == MASK
    assert rows["api_secret"].endswith("env RECON_API_SECRET")
    assert rows["mail_to"].split("  ")[-1].strip() == "env RECON_MAIL_TO"
    assert rows["timezone"].endswith("default")
    assert "ops@x.test, finance@x.test" in rows["mail_to"]
    assert_no_secret(result)


def _refused(
    monkeypatch: pytest.MonkeyPatch, variable: str, secret: str, check: str
) -> tuple[Result, str]:
    """`config check` with ``variable`` set to a wrong ``secret``: exit 1, ✗ on the ``check`` line,
    neither the wrong value nor any secret shown. The result and that line."""
    wrong = secret + "-wrong"
    monkeypatch.setenv(variable, wrong)
    result = config_check()
    assert result.exit_code == 1
    line = line_of(result, check)
    assert line.lstrip().startswith("✗")
    assert wrong not in result.output
    assert_no_secret(result)
    return result, line


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_wrong_secret_fails_the_provider_check_and_exits_1(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider refuses the keys: ✗ provider with its reason, exit 1, neither secret shown."""
    result, provider = _refused(monkeypatch, "RECON_API_SECRET", API_SECRET, "provider")
    assert "merchant.authorize" in provider
    assert "401" in provider or "403" in provider
    assert line_of(result, "database").lstrip().startswith("✓")


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_wrong_smtp_password_fails_the_smtp_check_without_showing_it(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SMTP server refuses the login: ✗ smtp after EHLO, exit 1, the password not shown."""
    _, smtp = _refused(monkeypatch, "RECON_SMTP_PASSWORD", SMTP_PASSWORD, "smtp")
    assert "EHLO, then SMTPAuthenticationError" in smtp


def test_smtp_is_skipped_when_no_host_is_set(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without smtp_host the SMTP check is skipped and does not fail the command."""
    monkeypatch.delenv("RECON_SMTP_HOST")
    result = config_check()
    assert result.exit_code == 0, result.output
    assert line_of(result, "smtp").lstrip().startswith("- smtp")
    assert "RECON_SMTP_HOST" in line_of(result, "smtp")


def test_an_unreachable_smtp_server_fails_the_check(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listening on the SMTP port: ✗ smtp, cannot connect, exit 1."""
    monkeypatch.setenv("RECON_SMTP_PORT", str(free_port()))
    result = config_check()
    assert result.exit_code == 1
    assert "cannot connect: ConnectionRefusedError" in line_of(result, "smtp")


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_wrong_type_in_the_config_file_exits_2_naming_the_field_and_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    """concurrency = "lots" in --config: exit 2 and a message naming both; no check runs."""
    path = tmp_path / "recon.toml"
    path.write_text('concurrency = "lots"\n', encoding="utf-8")
    result = config_check("--config", str(path))
    assert result.exit_code == 2
    assert f"concurrency (config file {path}, key concurrency)" in result.output
    assert "Connections:" not in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_environment_variables_override_the_config_file(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A value in both: the environment's is shown and used; a file-only value names the file."""
    path = tmp_path / "recon.toml"
    path.write_text("concurrency = 5\nstale_days = 9\n", encoding="utf-8")
    monkeypatch.setenv("RECON_CONCURRENCY", "11")
    result = config_check("--config", str(path))
    assert result.exit_code == 0, result.output
    rows = {ln.split()[0]: ln.split() for ln in result.output.splitlines() if ln.startswith("  ")}
    assert rows["concurrency"][1:] == ["11", "env", "RECON_CONCURRENCY"]
    assert rows["stale_days"][1:] == ["9.0", "file", str(path)]
    assert f"Configuration (file {path})" in result.output


def test_a_missing_sqlite_file_is_not_created_by_the_check(tmp_path: Path) -> None:
    """The check reports that the file will be created, and does not create it."""
    path = tmp_path / "later.db"
    check = check_database(Settings(database_url=f"sqlite:///{path}"))
    assert check.status is Status.OK
    assert "does not exist yet" in check.detail
    assert not path.exists()


def test_a_database_at_an_unknown_revision_fails(database_url: str) -> None:
    """A schema migrated by a newer recon is a ✗: this version cannot use it."""
    engine = make_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = 'ffff9999'"))
    engine.dispose()
    check = check_database(Settings(database_url=database_url))
    assert check.status is Status.FAILED
    assert "ffff9999, which this recon does not know" in check.detail


def test_an_empty_database_passes_with_a_note(tmp_path: Path) -> None:
    """An existing file without tables: connected, and the first run will create the schema."""
    path = tmp_path / "empty.db"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
    engine.dispose()
    check = check_database(Settings(database_url=url))
    assert check.status is Status.OK
    assert "no schema yet" in check.detail


def test_an_unreachable_database_fails_without_its_password() -> None:
    """PostgreSQL refusing connections: ✗ with the reason; the URL's password masked."""
    url = f"postgresql://recon:db-pw-31337@127.0.0.1:{free_port()}/recon"
    settings = Settings(database_url=url)
    check = check_database(settings)
    assert check.status is Status.FAILED
    assert "cannot connect to database" in check.detail
    assert "db-pw-31337" not in check.detail
    assert shown_value(settings, "database_url") == (
        f"postgresql://recon:{MASK}@127.0.0.1:{url.rsplit(':', 1)[1]}"
    )
    assert scrubber_for(settings)(f"oops {url}") == f"oops {url.replace('db-pw-31337', MASK)}"


# --- warnings: secrets over plain connections --------------------------------------------------


def own_address() -> str:
    """This machine's address on its network (not loopback), or skip: nothing is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # a UDP "connect" only picks the route
        except OSError:
            pytest.skip("this machine has no network address besides loopback")
        address: str = sock.getsockname()[0]
    if address.startswith("127.") or address == "0.0.0.0":  # noqa: S104 (compared, not bound)
        pytest.skip("this machine has no network address besides loopback")
    return address


def line_of_warning(result: Result, topic: str) -> str:
    """The one warning line about ``topic``."""
    (line,) = [ln for ln in result.output.splitlines() if ln.strip().startswith(f"! {topic}")]
    return line


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_an_smtp_password_over_plain_tcp_is_a_warning_not_a_failure(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """security none, a user, a server off this machine: a warning line; the checks pass, exit 0."""
    address = own_address()
    controller = Controller(
        NoMail(),
        hostname=address,
        port=free_port(),
        authenticator=_authenticator,
        auth_require_tls=False,
    )
    controller.start()
    try:
        monkeypatch.setenv("RECON_SMTP_HOST", address)
        monkeypatch.setenv("RECON_SMTP_PORT", str(controller.port))
        result = config_check()
    finally:
        controller.stop()
    assert result.exit_code == 0, result.output
    assert line_of(result, "smtp").lstrip().startswith("✓")
    warning = line_of_warning(result, "smtp")
    assert "RECON_SMTP_SECURITY=none" in warning
    assert "plain TCP" in warning
    assert_no_secret(result)


def test_an_http_provider_off_this_machine_is_a_warning_not_a_failure(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider at http://<network address>: the check passes, a warning says https, exit 0."""
    address = own_address()
    merchant = Merchant(
        merchant_id="cfg-check", public_key=PUBLIC_KEY, secret=SecretStr(API_SECRET)
    )
    monkeypatch.delenv("RECON_SMTP_HOST")
    with serve_in_thread(create_app(SandboxConfig(merchants=[merchant])), host=address) as url:
        monkeypatch.setenv("RECON_API_BASE_URL", url)
        result = config_check()
    assert result.exit_code == 0, result.output
    assert line_of(result, "provider").lstrip().startswith("✓")
    warning = line_of_warning(result, "provider")
    assert "http://" in warning
    assert "https://" in warning
    assert_no_secret(result)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_loopback_connections_give_no_warning(env: dict[str, str]) -> None:
    """The sandbox and SMTP on 127.0.0.1 (the demo setup): plain, but never off the machine."""
    result = config_check()
    assert result.exit_code == 0, result.output
    assert "Warnings:" not in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RECON_MAIL_TO", "ops@x.test\r\nBcc: thief@evil.test"),
        ("RECON_MAIL_CC", "finance@x.test\nBcc: thief@evil.test"),
        ("RECON_MAIL_FROM", "recon@x.test\rX-Injected: yes"),
        ("RECON_MAIL_TO", "ops@x.test\tx"),
    ],
)
def test_a_control_character_in_a_mail_address_exits_2_naming_the_setting(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """CR, LF or any control character in an address: exit 2, the setting named, no traceback."""
    monkeypatch.setenv(variable, value)
    result = config_check()
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (problem,) = [ln for ln in result.output.splitlines() if ln.startswith("  ")]
    assert f"environment variable {variable}" in problem
    assert "control character" in problem
    assert "Connections:" not in result.output
    assert NoMail.received == 0


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_recon_variable_nothing_reads_fails_the_check_with_the_closest_name(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stale RECON_RECHECK_DAYS names its replacement, a typo the name it misspells; the
    connections all work, yet the check exits 1: a setting the operator meant does nothing."""
    monkeypatch.setenv("RECON_RECHECK_DAYS", "30")
    monkeypatch.setenv("RECON_MAIL_TOO", "x@x.test")
    result = config_check()
    assert result.exit_code == 1, result.output
    problems = [ln for ln in result.output.splitlines() if ln.strip().startswith("✗ env")]
    assert len(problems) == 2, result.output
    assert "RECON_MAIL_TOO: unknown setting; did you mean RECON_MAIL_TO?" in problems[0]
    assert "RECON_RECHECK_DAYS" in problems[1]
    assert "replaced by RECON_WATCH_DAYS" in problems[1]


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_the_report_mode_is_shown_in_octal(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """report_mode reads as chmod writes it: 0640, never the decimal 416."""
    monkeypatch.setenv("RECON_REPORT_MODE", "640")
    result = config_check()
    (line,) = [ln for ln in result.output.splitlines() if ln.strip().startswith("report_mode ")]
    assert line.split()[1] == "0640", line
    assert "416" not in line


FEE = '[[fees]]\ncurrency = "EUR"\nvalid_from = 2026-11-01\nfixed = "0.25"\npercent = "0.50"\n'


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_fee_entries_in_the_config_file_are_read_and_shown(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Two entries, the price changing mid-month: exit 0 and both listed."""
    path = tmp_path / "recon.toml"
    path.write_text(FEE + "valid_to = 2026-11-15\n\n" + FEE.replace("11-01", "11-16"), "utf-8")
    result = config_check("--config", str(path))
    assert result.exit_code == 0, result.output
    assert "fees" in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ('percent = "150"\n', "percent 150 is not between 0 and 100"),
        ('min = "2.00"\nmax = "1.00"\n', "min 2.00 is above max 1.00"),
        ('rounding = "bankers"\n', "unknown rounding 'bankers'"),
        ('fixed = "0.255"\n', "fixed: 0.255 has more than 2 decimals for EUR"),
    ],
)
def test_a_wrong_fee_entry_exits_2_naming_it(
    env: dict[str, str], tmp_path: Path, extra: str, says: str
) -> None:
    """Each wrong value refuses the configuration and names the entry; no check runs."""
    path = tmp_path / "recon.toml"
    entry = "\n".join(ln for ln in FEE.splitlines() if ln.split(" ")[0] not in extra) + "\n"
    path.write_text(entry + extra, encoding="utf-8")
    result = config_check("--config", str(path))
    assert result.exit_code == 2, result.output
    assert "fee entry (valid_from 2026-11-01, EUR, all accounts)" in result.output
    assert says in result.output
    assert "Connections:" not in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_an_unknown_currency_in_a_fee_entry_exits_2_naming_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    """EUX is no ISO 4217 currency."""
    path = tmp_path / "recon.toml"
    path.write_text(FEE.replace('"EUR"', '"EUX"'), encoding="utf-8")
    result = config_check("--config", str(path))
    assert result.exit_code == 2, result.output
    assert "fee entry (valid_from 2026-11-01, EUX, all accounts)" in result.output
    assert "unknown currency code 'EUX'" in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_overlapping_fee_entries_exit_2_naming_both(env: dict[str, str], tmp_path: Path) -> None:
    """Every account's entry to the 15th and the default account's from the 10th meet."""
    path = tmp_path / "recon.toml"
    second = FEE.replace("11-01", "11-10").replace('"0.25"', '"0.30"')
    path.write_text(FEE + "valid_to = 2026-11-15\n\n" + second + 'account = "default"\n', "utf-8")
    result = config_check("--config", str(path))
    assert result.exit_code == 2, result.output
    assert (
        "fee entries (valid_from 2026-11-01, EUR, all accounts) and"
        " (valid_from 2026-11-10, EUR, default) overlap"
    ) in result.output
