"""One typed settings object, read once at the entry point.

Sources, highest first: keyword arguments (tests), ``RECON_*`` environment variables, the TOML file
named by ``--config`` or ``RECON_CONFIG``, then the defaults here. Defaults are the embedded demo:
SQLite in the working directory and the sandbox on loopback.

Value formats in the environment: an empty variable counts as unset; lists (``RECON_MAIL_TO``,
``RECON_MAIL_CC``, ``RECON_RECEIVER_ALLOW_NETWORKS``, ``RECON_NOT_FOUND_ERROR_NAMES``) are either
comma-separated (``a@x.test,b@x.test``) or a JSON list (``["a@x.test"]``);
``RECON_DELAY_GRACE``, ``RECON_MAX_RUN_AGE`` and ``RECON_DUPLICATE_WINDOW`` are seconds
(``3600``), a number with a unit (``24h``: ``s``, ``m``, ``h`` or ``d``), ``HH:MM:SS`` or ISO 8601
(``PT1H``); ``RECON_REPORT_MODE`` is octal (``640``). In the TOML file lists are TOML arrays.
"""

from __future__ import annotations

import itertools
import json
import os
import tomllib
import unicodedata
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from recon.constants import SESSION_FOUND_ERROR_NAMES
from recon.errors import ConfigError

SANDBOX_PORT = 8700
RECEIVER_PORT = 8701
ENV_PREFIX = "RECON_"
CONFIG_ENV = "RECON_CONFIG"
# Seconds per unit of a duration written as a number and a unit (``24h``).
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Calendar days after the outcome on which watched payouts are checked (issue 24; the arithmetic is
# in docs/decisions.md, "Two watch schedules"). Failed, aborted and unknown payouts (a few percent
# of the volume) daily for a week, so a bank confirming a failure is seen the next day, then every
# 5-6 days to day 30 and every 15 after: 15 checks in 90 days. Settled payouts (most of the volume,
# most of a night's polls) every 6 days: 5 checks in their 30-day return watch, the fewest that
# keep gaps of at most 7 days. ~6.4 polls a night per new payout at steady state.
DEFAULT_WATCH_SCHEDULE: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 12, 18, 24, 30, 45, 60, 75, 90)
DEFAULT_RETURN_WATCH_SCHEDULE: tuple[int, ...] = (6, 12, 18, 24, 30)
# Each schedule and the window it serves (its fields come after the windows': validators read them).
SCHEDULE_WINDOWS: dict[str, str] = {
    "watch_schedule": "watch_days",
    "return_watch_schedule": "return_watch_days",
}

_DEFAULT_SCHEDULES: dict[str, tuple[int, ...]] = {
    "watch_schedule": DEFAULT_WATCH_SCHEDULE,
    "return_watch_schedule": DEFAULT_RETURN_WATCH_SCHEDULE,
}
# The most a file given to `recon exceptions apply` may hold, on disk and inflated (issue 27): 2.2x
# the largest workbook recon mails at the benchmark's volume (RECON_REPORT_WORKBOOK=window, 7 days
# of 20,000 payouts a night and 20,000 exceptions: 8.3 MB zipped, 114 MB inflated).
DEFAULT_APPLY_MAX_BYTES = 256 * 1024 * 1024

# A list read from the environment: comma-separated or a JSON list (see ``_split_list``).
EnvList = Annotated[list[str], NoDecode]
EnvDays = Annotated[list[int], NoDecode]


class Settings(BaseSettings):
    """Every setting of recon; environment names are RECON_ and the field name upper-cased."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        validate_default=True,
        case_sensitive=False,
        # An env file line `RECON_SMTP_HOST=` means "not set", not "set to the empty string".
        env_ignore_empty=True,
    )

    # Store
    database_url: str = Field(
        "sqlite:///recon.db",
        description=(
            "recon's database: SQLite, `postgresql://…` (psycopg 3) or `mysql://…`/`mariadb://…` "
            "(PyMySQL)"
        ),
    )

    # Provider
    api_base_url: str = Field(
        f"http://127.0.0.1:{SANDBOX_PORT}", description="The provider (default: the local sandbox)"
    )
    api_public_key: str = Field("sandbox-public-key", description="`merchant.authorize` public key")
    api_secret: SecretStr = Field(
        SecretStr("sandbox-secret"), description="`merchant.authorize` secret"
    )
    concurrency: int = Field(
        32, ge=1, le=1024, description="Requests in flight at once (also the connection pool size)"
    )
    rate_limit: float | None = Field(
        None, gt=0, description="Requests per second cap, shared by all workers (unset: no cap)"
    )
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to connect to the provider")
    read_timeout: float = Field(
        65.0,
        gt=0,
        description="Seconds to wait for the provider's answer; the provider gives up after 60 s",
    )
    request_deadline: float = Field(
        90.0,
        gt=0,
        description=(
            "Seconds for the whole exchange (connect to last byte) of one attempt, however slowly "
            "the bytes come; past it the attempt is a timeout (retried like one). Keep it above "
            "`RECON_READ_TIMEOUT`"
        ),
    )
    max_answer_bytes: int = Field(
        512 * 1024,
        ge=1024,
        description=(
            "Longest answer body read (512 KiB; answers are about 1 KB). A longer one, or one "
            "announcing more, is cut off while reading and is a malformed answer (`fetch_failed`)"
        ),
    )
    retry_attempts: int = Field(
        4,
        ge=1,
        le=20,
        description="Attempts for reads and authorize (connect errors, timeouts, 429, 5xx)",
    )
    retry_initial_wait: float = Field(
        0.5,
        ge=0,
        description=(
            "Seconds before the first retry: exponential backoff with full jitter; `Retry-After` "
            "is honoured and shared"
        ),
    )
    retry_max_wait: float = Field(
        30.0, ge=0, description="The longest wait between retries, in seconds"
    )
    token_refresh_margin: float = Field(
        300.0,
        ge=0,
        description="Re-authorize this many seconds before the token expires (also on a 401)",
    )
    not_found_error_names: EnvList = Field(
        default_factory=lambda: ["transaction_not_found", "not_found", "unknown_transaction"],
        description='4xx error names that mean "unknown transaction" (besides 404)',
    )
    session_found_error_names: EnvList = Field(
        default_factory=lambda: list(SESSION_FOUND_ERROR_NAMES),
        description=(
            '4xx error names that mean "this id is a session\'s" (so is a message saying a session '
            "was found)"
        ),
    )

    # Run
    watch_days: int = Field(
        90,
        ge=0,
        description="How long failed, aborted and unknown payouts stay watched, in calendar days",
    )
    return_watch_days: int = Field(
        30,
        ge=0,
        description="How long settled payouts are re-checked for returns, in calendar days",
    )
    claim_poll_cap: int = Field(
        1000,
        ge=0,
        description=(
            "Returned-funds claims (announced, not confirmed) asked about per run at most; the "
            "rest wait for the next run"
        ),
    )
    refused_limit: int = Field(
        20,
        ge=0,
        description=(
            "An id the provider refuses to this merchant account (401 or 403 with a working token)"
            " is that payout's `fetch_failed`; the run stops (exit 1) only when the refusals pass "
            "this many **and** more than half the ids asked so far, which is what a revoked key "
            "looks like"
        ),
    )
    unrecorded_poll_cap: int = Field(
        1000,
        ge=0,
        description=(
            "Ids the provider named that the record lacks asked about per run at most; the rest "
            "wait for the next run (counted in the report's footer)"
        ),
    )
    keep_raw_days: float = Field(
        90.0,
        ge=0,
        description=(
            "Days raw provider answers and raw notification bodies are kept; each run drops older "
            "ones (the parsed fields stay), except evidence of a finding still open or of a "
            "return. `recon db prune --dry-run` says what would go"
        ),
    )
    # Unset (None): the default schedule, up to the window in effect (see ``_default_days``).
    watch_schedule: EnvDays = Field(
        None,  # type: ignore[arg-type]  # _default_days replaces None: the default needs the window
        description=(
            "Calendar days (in `RECON_TIMEZONE`) after the outcome on which failed, aborted and "
            "unknown payouts are checked; whole days, increasing, none beyond `RECON_WATCH_DAYS` "
            "(unset: the default's days up to it). The window ends with a check on its last day"
        ),
    )
    return_watch_schedule: EnvDays = Field(
        None,  # type: ignore[arg-type]  # _default_days replaces None: the default needs the window
        description=(
            "The same for settled payouts and returned-funds claims, up to "
            "`RECON_RETURN_WATCH_DAYS`"
        ),
    )
    delay_grace: timedelta = Field(
        timedelta(hours=1),
        description=(
            "Completed payouts past `eta` + this are `delayed` (seconds, `1h`, `HH:MM:SS` or "
            "`PT1H`)"
        ),
    )
    stale_days: float = Field(
        3.0, ge=0, description="Pending or delayed longer than this is flagged `stale`"
    )
    duplicate_window: timedelta = Field(
        timedelta(hours=24),
        description=(
            "Payouts to the same bank account or customer with the same amount, created this close"
            " together, are `possible_duplicate` when more than one is settled or in flight "
            "(seconds, `24h`, `30m`, `2d`, `HH:MM:SS` or `PT24H`)"
        ),
    )
    out_dir: Path = Field(
        Path("out"), description="Where `recon run`/`recon report` write without `--out`"
    )
    timezone: str = Field(
        "UTC",
        description=(
            "Dates in reports, and the zone of times given without an offset (import columns "
            "`created`/`eta`, `--as-of`) (IANA name)"
        ),
    )
    report_row_cap: int = Field(
        200, ge=1, description="Rows per table in report.html (the CSVs have all)"
    )
    mail_row_cap: int = Field(
        25,
        ge=1,
        description=(
            "Rows per table in the email's body (each cut table says how many more rows the "
            "attached files hold): the inlined styles make every row heavy, and Gmail cuts a "
            "message body past ~102 KB"
        ),
    )
    report_days: float = Field(
        7.0,
        gt=0,
        description=(
            "Days of runs the reports cover: payouts changed in them (beside open and flagged "
            "ones), and the window of report.html's totals (with month to date)"
        ),
    )
    report_mode: int = Field(
        0o600,
        description=(
            "Permission bits of every report file, octal (`640` lets the group read them), "
            "whatever the umask; the owner must keep read and write. The directory's own mode is "
            "the operator's"
        ),
    )
    report_workbook: Literal["night", "window", "off"] = Field(
        "night",
        description=(
            "report.xlsx's `Payouts` sheet: `night` holds the payouts the night needs read "
            "(changed other than routinely, open or flagged), `window` every row of payouts.csv; "
            "`off` writes and mails no workbook, the CSVs only (and removes an earlier run's "
            "`report.xlsx` from the directory). Cells are the pack's dearest part: ~15 µs each, 20"
            ' CPU s for a 7-day window of 140,000 payouts (bench/findings.md, "Fifth round")'
        ),
    )
    apply_max_bytes: int = Field(
        DEFAULT_APPLY_MAX_BYTES,
        ge=1024,
        description=(
            "The largest file `recon exceptions apply` reads, on disk and, for a workbook, "
            "inflated (256 MiB). Sized at 2.2x the largest workbook recon mails at the benchmark's"
            " volume: `RECON_REPORT_WORKBOOK=window` over 7 days of 20,000 payouts a night, with "
            "20,000 exceptions, is 8.3 MB zipped and 114 MB inflated, and `apply` reads it in 7 s "
            "at a peak of 125 MB (the bound's check is 0.9 s of that). Raise it with the volume"
        ),
    )
    csv_dialect: Literal["standard", "excel-eu"] = Field(
        "standard",
        description=(
            "The CSVs' dialect: `standard` (`,` between cells, `.` in amounts, UTF-8 without BOM, "
            "LF) or `excel-eu` (`;`, `,` as decimal mark in amounts, UTF-8 with BOM, CRLF); see "
            "[finance.md](finance.md#csv-dialects)"
        ),
    )

    # Operations
    heartbeat_url: SecretStr | None = Field(
        None,
        description=(
            "A dead man's switch (healthchecks.io convention): `recon run` pings `URL/start` when "
            "it starts, `URL` when it exits 0, `URL/fail` on any other exit; a dry run pings "
            "nothing. A secret: masked everywhere"
        ),
    )
    max_run_age: timedelta = Field(
        timedelta(hours=26),
        description=(
            "`recon status` is CRITICAL when the last complete run finished longer ago; a report "
            'whose previous run is older than this before it says "A run is missing" at the top '
            "(seconds, `HH:MM:SS` or `PT26H`)"
        ),
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description=(
            "`json`: every log line on standard error, and every result or error line of the "
            "commands, is one JSON object (`time`, `level`, `logger`, `message`, `exception`) for "
            "log shippers"
        ),
    )

    # Callback receiver
    receiver_max_body_bytes: int = Field(
        64 * 1024, ge=256, description="Larger callback bodies get 413"
    )
    receiver_allow_networks: EnvList = Field(
        default_factory=list, description="CIDRs allowed to post callbacks (others get 403)"
    )
    receiver_path_token: SecretStr | None = Field(
        None, description="Secret path segment: callbacks go to `/callbacks/<token>`"
    )
    receiver_header_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds from a connection's start (or its previous answer) to the end of a request's "
            "headers; then 408 and the connection is closed"
        ),
    )
    receiver_body_timeout: float = Field(
        20.0,
        gt=0,
        description=(
            "Seconds from the end of the headers to the end of the body; then 408, closed, nothing"
            " stored"
        ),
    )
    receiver_max_header_bytes: int = Field(
        16 * 1024,
        ge=1024,
        le=1024 * 1024,
        description=(
            "Request line and headers together; larger gets 400 and is closed while it is read"
        ),
    )
    receiver_max_connections: int = Field(
        1000,
        ge=1,
        description=(
            "Past it the connection waiting longest for its request is closed (408); if none is "
            "idle, the new request gets 503"
        ),
    )
    receiver_health_cache: float = Field(
        5.0, ge=0, description="Seconds `GET /health` reuses its last write probe"
    )

    # Mail
    smtp_host: str | None = Field(
        None, description="Mail server; required to send (no host: no email)"
    )
    smtp_port: int = Field(
        25, ge=1, le=65535, description="Mail server port (usually 587 for STARTTLS, 465 for TLS)"
    )
    smtp_security: Literal["none", "starttls", "tls"] = Field(
        "none", description="`none`, `starttls` or `tls` (implicit TLS); certificates are verified"
    )
    smtp_user: str | None = Field(None, description="SMTP login; recon logs in when a user is set")
    smtp_password: SecretStr | None = Field(None, description="SMTP password")
    smtp_timeout: float = Field(30.0, gt=0, description="Seconds per connection attempt")
    mail_from: str = Field("recon@localhost", description="Sender")
    mail_to: EnvList = Field(
        default_factory=list,
        description=(
            'Recipients. Lists: comma-separated (`a@x.com,b@x.com`) or JSON (`["a@x.com"]`), as '
            "for every list setting"
        ),
    )
    mail_cc: EnvList = Field(
        default_factory=list, description="Copy recipients (a list, as `RECON_MAIL_TO`)"
    )
    mail_zip_above_bytes: int = Field(
        2 * 1024 * 1024, ge=0, description="Zip the CSVs into one attachment above this total"
    )

    @field_validator(
        "not_found_error_names",
        "session_found_error_names",
        "receiver_allow_networks",
        "mail_to",
        "mail_cc",
        "watch_schedule",
        "return_watch_schedule",
        mode="before",
    )
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        """A list from text: a JSON list when it starts with ``[``, else comma-separated."""
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("["):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not a JSON list ({exc.msg} at character {exc.pos})") from None
        return [item.strip() for item in value.split(",") if item.strip()]

    @field_validator("watch_schedule", "return_watch_schedule", mode="before")
    @classmethod
    def _default_days(cls, value: Any, info: ValidationInfo) -> Any:
        """Unset: the default schedule, thinned to its window (``RECON_WATCH_DAYS=30`` keeps the
        default's days up to 30)."""
        if value is not None:
            return value
        default = _DEFAULT_SCHEDULES[str(info.field_name)]
        window = info.data.get(SCHEDULE_WINDOWS[str(info.field_name)])
        return [d for d in default if window is None or d <= window]

    @field_validator("watch_schedule", "return_watch_schedule")
    @classmethod
    def _increasing_days(cls, value: list[int], info: ValidationInfo) -> list[int]:
        """Calendar days after the outcome, each later than the one before, all above zero, none
        beyond the schedule's window (it would never be checked on)."""
        if value and (value[0] <= 0 or any(b <= a for a, b in itertools.pairwise(value))):
            raise ValueError(f"days must be above zero and increasing, not {value}")
        window_field = SCHEDULE_WINDOWS[str(info.field_name)]
        window = info.data.get(window_field)  # absent: the window itself is wrong, reported
        if window is not None and value and value[-1] > window:
            beyond = next(d for d in value if d > window)
            raise ValueError(
                f"day {beyond} is beyond {env_name(window_field)} ({window}): give days up to "
                f"{window}, or a longer {env_name(window_field)}"
            )
        return value

    @field_validator("mail_from", "mail_to", "mail_cc")
    @classmethod
    def _one_line(cls, value: str | list[str]) -> str | list[str]:
        """No control character: CR or LF in an address would start another mail header."""
        for item in [value] if isinstance(value, str) else value:
            bad = control_character(item)
            if bad is not None:
                raise ValueError(f"an address holds a control character ({bad!r})")
        return value

    @field_validator("report_mode", mode="before")
    @classmethod
    def _octal(cls, value: Any) -> Any:
        """Text is octal, as chmod reads it (``640``, ``0640``, ``0o640``)."""
        if isinstance(value, str):
            digits = value.strip().lower().removeprefix("0o")
            if not digits or any(c not in "01234567" for c in digits):
                raise ValueError(f"not an octal file mode like 600 or 640: {value!r}")
            return int(digits, 8)
        return value

    @field_validator("report_mode")
    @classmethod
    def _file_mode(cls, value: int) -> int:
        """Permission bits only, and the owner can read and write (recon replaces the files)."""
        if not 0 <= value <= 0o777:
            raise ValueError(f"not a file mode ({value} is {value:o} in octal; write it as '640')")
        if value & 0o600 != 0o600:
            raise ValueError(f"the owner must keep read and write ({value:o} lacks them)")
        return value

    @field_validator("delay_grace", "max_run_age", "duplicate_window", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        """A plain number is seconds (pydantic alone reads ``"3600"`` as a malformed duration);
        a number with a unit (``90s``, ``30m``, ``24h``, ``2d``) is that many of it."""
        if isinstance(value, str):
            unit = _UNITS.get(value.strip()[-1:].lower())
            try:
                return float(value.strip()[:-1]) * unit if unit else float(value)
            except ValueError:
                return value  # HH:MM:SS or ISO 8601, parsed by pydantic
        return value

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @property
    def zone(self) -> ZoneInfo:
        """``timezone`` as a zone: where reports show times, and where a time given without an
        offset (import columns ``created``/``eta``, ``--as-of``) is read."""
        return ZoneInfo(self.timezone)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if _CONFIG_FILE is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=_CONFIG_FILE))
        return tuple(sources)


_CONFIG_FILE: Path | None = None

# Settings whose value must never be shown; database_url may carry a password and is shown masked.
SECRET_FIELDS: frozenset[str] = frozenset(
    {"api_secret", "smtp_password", "receiver_path_token", "database_url", "heartbeat_url"}
)


def control_character(text: str) -> str | None:
    """The first control character in ``text`` (CR, LF, NUL, tab, DEL...), or ``None``."""
    return next((c for c in text if unicodedata.category(c) == "Cc"), None)


def env_name(field: str) -> str:
    """The environment variable of a setting: ``mail_to`` -> ``RECON_MAIL_TO``."""
    return ENV_PREFIX + field.upper()


def config_file_path(config_file: Path | None = None) -> Path | None:
    """The TOML file in effect: ``config_file`` (``--config``), else ``$RECON_CONFIG``, or none."""
    if config_file is not None:
        return config_file
    named = os.environ.get(CONFIG_ENV)
    return Path(named) if named else None


def read_config_file(path: Path) -> dict[str, Any]:
    """The TOML file's table, or ``ConfigError`` naming the file and what is wrong with it."""
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid configuration file {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc}") from None


def setting_origins(
    config_file: Path | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, str]:
    """Where each setting's value comes from: ``argument``, ``env RECON_X``, the file, or default.

    Mirrors the precedence of ``Settings``: arguments, then the environment (names compared without
    case, empty values ignored), then the TOML file.
    """
    path = config_file_path(config_file)
    in_file = {key.lower() for key in read_config_file(path)} if path is not None else set()
    env = {key.upper(): value for key, value in os.environ.items()}
    origins: dict[str, str] = {}
    for field in Settings.model_fields:
        if overrides and field in overrides:
            origins[field] = "argument"
        elif env.get(env_name(field)):
            origins[field] = f"env {env_name(field)}"
        elif field in in_file:
            origins[field] = f"file {path}"
        else:
            origins[field] = "default"
    return origins


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the settings, or raise ``ConfigError`` with one line per wrong or missing value."""
    global _CONFIG_FILE  # pydantic-settings reads its sources from a classmethod
    path = config_file_path(config_file)
    if path is not None:
        read_config_file(path)  # a missing or malformed file is named before any value is read
    _CONFIG_FILE = path
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        origins = setting_origins(path, overrides)
        lines = [_problem(err, origins, path) for err in exc.errors()]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from None
    finally:
        _CONFIG_FILE = None


def _problem(err: Any, origins: dict[str, str], path: Path | None) -> str:
    """One line for one validation error: the setting, where its value came from, what is wrong."""
    loc = [str(part) for part in err["loc"]]
    field = loc[0] if loc else "settings"
    if err["type"] == "extra_forbidden":
        source = f"config file {path}" if path is not None else "argument"
        return f"  {field} ({source}): unknown setting (see docs/configuration.md for the names)"
    where = origins.get(field, "default")
    if where.startswith("env "):
        where = f"environment variable {where[4:]}"
    elif where.startswith("file "):
        where = f"config file {where[5:]}, key {field}"
    item = f" item {loc[1]}" if len(loc) > 1 else ""
    message = str(err["msg"]).removeprefix("Value error, ")
    got = repr(err.get("input"))
    shown = "" if field in SECRET_FIELDS or got in message else f" (got {got})"
    return f"  {field}{item} ({where}): {message}{shown}"
