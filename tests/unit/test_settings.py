"""Settings: every RECON_* variable, list formats, the TOML file, precedence, clear errors."""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from recon.errors import ConfigError, exit_code_of
from recon.export_settings import ExportMapping
from recon.fee_settings import FeeSetting
from recon.journal_settings import JournalCodes, JournalSetting
from recon.settings import FILE_ONLY_FIELDS, Settings, env_name, load_settings, setting_origins

EXPORT_SEMICOLONS = ExportMapping(delimiter=";", decimal_separator=",")
# Every setting, a value for its environment variable, and the value it must become.
ENV_CASES: dict[str, tuple[str, Any]] = {
    "database_url": (
        "postgresql://recon@db.internal/recon",
        "postgresql://recon@db.internal/recon",
    ),
    "import_file": ("/srv/shop/payouts.csv", Path("/srv/shop/payouts.csv")),
    "import_sql": ("/etc/recon/payouts.sql", Path("/etc/recon/payouts.sql")),
    "import_source_url": ("postgresql://reader@shop/shop", "postgresql://reader@shop/shop"),
    "api_base_url": ("https://api.provider.test", "https://api.provider.test"),
    "api_public_key": ("pk-live-1", "pk-live-1"),
    "api_secret": ("sk-live-9", "sk-live-9"),
    "concurrency": ("8", 8),
    "rate_limit": ("12.5", 12.5),
    "connect_timeout": ("3", 3.0),
    "read_timeout": ("20", 20.0),
    "request_deadline": ("45.5", 45.5),
    "max_answer_bytes": ("262144", 262144),
    "retry_attempts": ("6", 6),
    "retry_initial_wait": ("0.25", 0.25),
    "retry_max_wait": ("9", 9.0),
    "token_refresh_margin": ("60", 60.0),
    "not_found_error_names": ("no_such_tx, gone", ["no_such_tx", "gone"]),
    "session_found_error_names": ("session_id_given", ["session_id_given"]),
    "claim_poll_cap": ("25", 25),
    "refused_limit": ("5", 5),
    "unrecorded_poll_cap": ("30", 30),
    "keep_raw_days": ("30", 30.0),
    "watch_days": ("5", 5),
    "return_watch_days": ("7", 7),
    "watch_schedule": ("1,2,4", [1, 2, 4]),
    "return_watch_schedule": ("[3, 9, 21]", [3, 9, 21]),
    "delay_grace": ("1800", timedelta(minutes=30)),
    "stale_days": ("2.5", 2.5),
    "duplicate_window": ("12h", timedelta(hours=12)),
    "fees": (
        '[{"currency": "EUR", "valid_from": "2026-11-01", "fixed": "0.25"}]',
        [FeeSetting(currency="EUR", valid_from=date(2026, 11, 1), fixed=Decimal("0.25"))],
    ),
    "fee_tolerance": ("0.01", Decimal("0.01")),
    "fee_grace": ("3d", timedelta(days=3)),
    "journal": (
        '{"accounts": {"payouts_payable": "2890"}, "sie_series": "B"}',
        JournalSetting(accounts=JournalCodes(payouts_payable="2890"), sie_series="B"),
    ),
    "journal_locked_through": ("2026-10-31", date(2026, 10, 31)),
    "export": ('{"delimiter": ";", "decimal_separator": ","}', EXPORT_SEMICOLONS),
    "provider_export": ("api", "api"),
    "export_lookback_days": ("5", 5),
    "export_row_cap": ("1000", 1000),
    "out_dir": ("/srv/recon/out", Path("/srv/recon/out")),
    "timezone": ("Europe/Helsinki", "Europe/Helsinki"),
    "report_row_cap": ("50", 50),
    "mail_row_cap": ("10", 10),
    "report_days": ("30", 30.0),
    "report_mode": ("640", 0o640),
    "csv_dialect": ("excel-eu", "excel-eu"),
    "apply_max_bytes": ("1048576", 1048576),
    "report_workbook": ("window", "window"),
    "heartbeat_url": ("https://hc-ping.com/8e1b", "https://hc-ping.com/8e1b"),
    "max_run_age": ("PT30H", timedelta(hours=30)),
    "log_format": ("json", "json"),
    "metrics_file": (
        "/var/lib/node_exporter/recon.prom",
        Path("/var/lib/node_exporter/recon.prom"),
    ),
    "receiver_max_body_bytes": ("4096", 4096),
    "receiver_allow_networks": ("10.0.0.0/8,192.0.2.0/24", ["10.0.0.0/8", "192.0.2.0/24"]),
    "receiver_path_token": ("tok-123", "tok-123"),
    "receiver_header_timeout": ("2.5", 2.5),
    "receiver_body_timeout": ("7", 7.0),
    "receiver_max_header_bytes": ("8192", 8192),
    "receiver_max_connections": ("200", 200),
    "receiver_health_cache": ("0", 0.0),
    "smtp_host": ("mail.internal", "mail.internal"),
    "smtp_port": ("587", 587),
    "smtp_security": ("starttls", "starttls"),
    "smtp_user": ("recon", "recon"),
    "smtp_password": ("pw-456", "pw-456"),
    "smtp_timeout": ("7", 7.0),
    "mail_from": ("recon@corp.test", "recon@corp.test"),
    "mail_to": ("ops@corp.test,finance@corp.test", ["ops@corp.test", "finance@corp.test"]),
    "mail_cc": ('["lead@corp.test"]', ["lead@corp.test"]),
    "mail_zip_above_bytes": ("1000", 1000),
}
# Settings that go together: set with the case's own.
COMPANIONS: dict[str, dict[str, str]] = {
    "import_sql": {"RECON_IMPORT_SOURCE_URL": "sqlite:///shop.db"},
    "import_source_url": {"RECON_IMPORT_SQL": "/etc/recon/payouts.sql"},
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No RECON_* variable of the machine running the tests leaks into them."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("RECON_"):
            monkeypatch.delenv(name)


def plain(value: Any) -> Any:
    return value.get_secret_value() if hasattr(value, "get_secret_value") else value


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recon.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_table_covers_every_setting() -> None:
    """A new setting must get a case here (and so a documented variable); the tables only the
    file gives (``[accounts.NAME]``) have no variable."""
    assert set(ENV_CASES) == set(Settings.model_fields) - FILE_ONLY_FIELDS


@pytest.mark.parametrize(("field", "case"), ENV_CASES.items(), ids=list(ENV_CASES))
def test_every_setting_is_read_from_its_recon_variable(
    monkeypatch: pytest.MonkeyPatch, field: str, case: tuple[str, Any]
) -> None:
    """RECON_<FIELD> sets the field, converted to its type."""
    text, expected = case
    monkeypatch.setenv(env_name(field), text)
    for name, value in COMPANIONS.get(field, {}).items():
        monkeypatch.setenv(name, value)
    assert plain(getattr(load_settings(), field)) == expected
    assert setting_origins()[field] == f"env {env_name(field)}"


def test_variable_names_are_not_case_sensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    """recon_concurrency works like RECON_CONCURRENCY."""
    monkeypatch.setenv("recon_concurrency", "3")
    assert load_settings().concurrency == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a@x.test", ["a@x.test"]),
        ("a@x.test, b@x.test ,", ["a@x.test", "b@x.test"]),
        ('["a@x.test", "b,c@x.test"]', ["a@x.test", "b,c@x.test"]),
        ("[]", []),
    ],
)
def test_a_list_is_comma_separated_or_a_json_list(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: list[str]
) -> None:
    """RECON_MAIL_TO takes `a,b` or a JSON list; blanks around commas are dropped."""
    monkeypatch.setenv("RECON_MAIL_TO", text)
    assert load_settings().mail_to == expected


def test_a_broken_json_list_is_an_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A value starting with [ must be a valid JSON list."""
    monkeypatch.setenv("RECON_MAIL_TO", '["a@x.test"')
    with pytest.raises(ConfigError, match=r"mail_to \(environment variable RECON_MAIL_TO\)"):
        load_settings()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("2.5", 2.5), ("01:30:00", 5400), ("PT2H", 7200), ("24h", 86400), ("30m", 1800)],
)
def test_delay_grace_takes_seconds_clock_time_or_iso_8601(
    monkeypatch: pytest.MonkeyPatch, text: str, seconds: float
) -> None:
    """RECON_DELAY_GRACE=90, 01:30:00, PT2H and 24h are all durations."""
    monkeypatch.setenv("RECON_DELAY_GRACE", text)
    assert load_settings().delay_grace == timedelta(seconds=seconds)


_DURATIONS = ("DELAY_GRACE", "DUPLICATE_WINDOW", "FEE_GRACE", "MAX_RUN_AGE")


@pytest.mark.parametrize(
    ("variable", "text"),
    [
        *((v, t) for v in _DURATIONS for t in ("-2d", "-1", "-PT2H", "nan", "inf")),
        ("KEEP_RAW_DAYS", "1000000"),
        ("REPORT_DAYS", "1e9"),
        ("WATCH_DAYS", "999999999"),
        ("RETURN_WATCH_DAYS", "999999999"),
        ("EXPORT_LOOKBACK_DAYS", "999999999"),
        ("STALE_DAYS", "inf"),
        ("REPORT_DAYS", "nan"),
        ("RETRY_MAX_WAIT", "inf"),
        ("READ_TIMEOUT", "inf"),
        ("FEE_GRACE", "1e12"),
        ("MAX_RUN_AGE", "400000d"),
        ("FEES", "notjson"),
        ("EXPORT", "{bad"),
    ],
)
def test_a_value_no_night_can_use_is_refused_at_start_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str
) -> None:
    """Negative, endless or a thousand years, or a table that is not JSON: exit 2 naming the
    variable before a night, not an OverflowError in each night or a settings library's
    traceback (a negative grace would find a fee missing before the payout settled)."""
    monkeypatch.setenv(f"RECON_{variable}", text)
    with pytest.raises(ConfigError, match=f"environment variable RECON_{variable}") as caught:
        load_settings()
    assert exit_code_of(caught.value) == 2


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """`RECON_RATE_LIMIT=` in an env file leaves the default instead of failing to parse."""
    monkeypatch.setenv("RECON_RATE_LIMIT", "")
    monkeypatch.setenv("RECON_SMTP_PASSWORD", "")
    settings = load_settings()
    assert settings.rate_limit is None
    assert settings.smtp_password is None
    assert setting_origins()["rate_limit"] == "default"


def test_the_toml_file_sets_values(tmp_path: Path) -> None:
    """Values from --config, with TOML types (arrays for lists)."""
    path = write(tmp_path, 'concurrency = 5\nmail_to = ["ops@x.test"]\ndelay_grace = "PT5M"\n')
    settings = load_settings(path)
    assert settings.concurrency == 5
    assert settings.mail_to == ["ops@x.test"]
    assert settings.delay_grace == timedelta(minutes=5)
    assert setting_origins(path)["concurrency"] == f"file {path}"
    assert setting_origins(path)["timezone"] == "default"


def test_recon_config_names_the_file_when_no_option_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """RECON_CONFIG works like --config."""
    monkeypatch.setenv("RECON_CONFIG", str(write(tmp_path, 'timezone = "Europe/Oslo"\n')))
    assert load_settings().timezone == "Europe/Oslo"


def test_the_environment_wins_over_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """RECON_CONCURRENCY overrides concurrency in the file; other file values stay."""
    path = write(tmp_path, "concurrency = 5\nstale_days = 9\n")
    monkeypatch.setenv("RECON_CONCURRENCY", "7")
    settings = load_settings(path)
    assert (settings.concurrency, settings.stale_days) == (7, 9.0)
    assert setting_origins(path)["concurrency"] == "env RECON_CONCURRENCY"


def test_a_wrong_value_names_the_variable_and_what_it_got(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The message names RECON_CONCURRENCY and shows the value that could not be read."""
    monkeypatch.setenv("RECON_CONCURRENCY", "lots")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "concurrency (environment variable RECON_CONCURRENCY)" in str(caught.value)
    assert "'lots'" in str(caught.value)


def test_every_wrong_value_gets_its_own_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three wrong values: three lines, each naming its variable."""
    monkeypatch.setenv("RECON_CONCURRENCY", "0")
    monkeypatch.setenv("RECON_TIMEZONE", "Mars/Olympus")
    monkeypatch.setenv("RECON_SMTP_SECURITY", "ssl")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    lines = str(caught.value).splitlines()[1:]
    assert len(lines) == 3
    for name in ("RECON_CONCURRENCY", "RECON_TIMEZONE", "RECON_SMTP_SECURITY"):
        assert sum(name in line for line in lines) == 1
    assert "unknown time zone 'Mars/Olympus'" in str(caught.value)


@pytest.mark.parametrize(
    ("variable", "text", "problem"),
    [
        ("RECON_WATCH_SCHEDULE", "1,3,2", "days must be above zero and increasing"),
        ("RECON_WATCH_SCHEDULE", "0,7", "days must be above zero and increasing"),
        ("RECON_RETURN_WATCH_SCHEDULE", "6,12,45", "day 45 is beyond RECON_RETURN_WATCH_DAYS (30)"),
        ("RECON_WATCH_SCHEDULE", "1,2,91", "day 91 is beyond RECON_WATCH_DAYS (90)"),
        ("RECON_RETURN_WATCH_SCHEDULE", "1,2.5", "valid integer"),
    ],
)
def test_a_schedule_out_of_order_or_beyond_its_window_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str, problem: str
) -> None:
    """Schedules are whole calendar days, increasing, above zero and inside their window."""
    monkeypatch.setenv(variable, text)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    (line,) = str(caught.value).splitlines()[1:]
    assert f"(environment variable {variable})" in line
    assert problem in line


def test_an_unset_schedule_is_the_default_thinned_to_its_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RECON_WATCH_DAYS=20 alone keeps the default's days up to 20; a set schedule is kept."""
    monkeypatch.setenv("RECON_WATCH_DAYS", "20")
    monkeypatch.setenv("RECON_RETURN_WATCH_DAYS", "0")
    settings = load_settings()
    assert settings.watch_schedule == [1, 2, 3, 4, 5, 6, 7, 12, 18]
    assert settings.return_watch_schedule == []
    assert load_settings(watch_schedule="2,20").watch_schedule == [2, 20]


def test_a_wrong_type_in_the_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    """concurrency = "many" in the TOML file: the message names the file and the key."""
    path = write(tmp_path, 'concurrency = "many"\n')
    with pytest.raises(ConfigError, match=re.escape(f"config file {path}, key concurrency")):
        load_settings(path)


def test_an_unknown_key_in_the_file_is_rejected(tmp_path: Path) -> None:
    """A misspelt setting in the file is an error, not silently ignored."""
    path = write(tmp_path, "concurency = 5\n")
    with pytest.raises(ConfigError, match=r"concurency \(config file .*\): unknown setting"):
        load_settings(path)


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    """A broken file is reported with its path and the line of the problem."""
    path = write(tmp_path, "timezone = 'UTC'\nconcurrency = \n")
    with pytest.raises(ConfigError, match=r"invalid configuration file .*line 2"):
        load_settings(path)


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    """--config pointing nowhere says which file is missing."""
    with pytest.raises(ConfigError, match=r"config file not found: .*nowhere\.toml"):
        load_settings(tmp_path / "nowhere.toml")


def test_a_wrong_secret_value_is_never_shown_in_the_error(tmp_path: Path) -> None:
    """Errors about secret settings name the setting but never echo the value."""
    path = write(tmp_path, "smtp_password = 123456789\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert "smtp_password" in str(caught.value)
    assert "123456789" not in str(caught.value)


@pytest.mark.parametrize(("text", "mode"), [("600", 0o600), ("0640", 0o640), ("0o644", 0o644)])
def test_the_report_mode_is_read_as_octal(
    monkeypatch: pytest.MonkeyPatch, text: str, mode: int
) -> None:
    """RECON_REPORT_MODE=640 means rw-r----- as chmod reads it, not decimal 640."""
    monkeypatch.setenv("RECON_REPORT_MODE", text)
    assert load_settings().report_mode == mode


@pytest.mark.parametrize(
    ("text", "problem"),
    [("rw-r-----", "not an octal file mode"), ("1640", "not a file mode"), ("440", "owner")],
)
def test_a_report_mode_that_is_not_a_usable_file_mode_is_refused(
    monkeypatch: pytest.MonkeyPatch, text: str, problem: str
) -> None:
    """Text that is not octal, bits beyond rwx, or a mode the owner cannot rewrite: one line."""
    monkeypatch.setenv("RECON_REPORT_MODE", text)
    with pytest.raises(ConfigError, match=problem) as caught:
        load_settings()
    assert "RECON_REPORT_MODE" in str(caught.value)


def test_a_decimal_toml_report_mode_is_refused_with_the_octal_spelling(tmp_path: Path) -> None:
    """report_mode = 640 in TOML is the decimal number 640: refused, suggesting '640'."""
    with pytest.raises(ConfigError, match="write it as '640'"):
        load_settings(write(tmp_path, "report_mode = 640\n"))
    assert load_settings(write(tmp_path, "report_mode = 0o640\n")).report_mode == 0o640


def test_the_heartbeat_url_is_masked_like_a_secret() -> None:
    """The ping URL holds the check's id: anyone who has it can ping the check."""
    from recon.settings import SECRET_FIELDS

    assert "heartbeat_url" in SECRET_FIELDS
    assert "8e1b" not in repr(Settings(heartbeat_url="https://hc-ping.com/8e1b"))


@pytest.mark.parametrize(
    ("variables", "says"),
    [
        ({"RECON_IMPORT_SQL": "q.sql"}, "RECON_IMPORT_SQL and RECON_IMPORT_SOURCE_URL go together"),
        ({"RECON_IMPORT_SOURCE_URL": "sqlite:///s.db"}, "go together"),
        (
            {"RECON_IMPORT_FILE": "p.csv", "RECON_IMPORT_SQL": "q.sql"},
            "set RECON_IMPORT_FILE or RECON_IMPORT_SQL, not both",
        ),
    ],
)
def test_a_night_imports_a_file_or_a_query_with_its_source(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], says: str
) -> None:
    """Import settings that cannot work are refused at start, naming the variables."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=says):
        load_settings()
