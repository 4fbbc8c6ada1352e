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
from collections.abc import Iterable
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from recon import export_settings, journal_settings
from recon.accounts import (
    DEFAULT_ACCOUNT,
    Account,
    AccountName,
    AccountSetting,
    accounts_of,
    client_fields,
    one_key_each,
    select,
    tables_with_secrets,
)
from recon.constants import SESSION_FOUND_ERROR_NAMES
from recon.errors import ConfigError
from recon.export_settings import ExportMapping
from recon.fee_settings import FeeSetting, no_overlap
from recon.journal_settings import JournalSetting
from recon.textsafe import control_character

SANDBOX_PORT = 8700
RECEIVER_PORT = 8701
ENV_PREFIX = "RECON_"
CONFIG_ENV = "RECON_CONFIG"
# Seconds per unit of a duration written as a number and a unit (``24h``).
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Calendar days after the outcome on which watched payouts are checked (the arithmetic: docs/
# decisions.md, "Two watch schedules"). Failed, aborted and unknown payouts daily for a week, so a
# bank confirming a failure is seen the next day, then every 5-6 days to day 30 and every 15 after;
# settled payouts every 6 days in their 30-day return watch, the fewest checks with gaps of 7 days.
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
# The most a file `recon exceptions apply` reads, on disk and inflated (sizing: settings_help.py).
DEFAULT_APPLY_MAX_BYTES = 256 * 1024 * 1024

# A list read from the environment: comma-separated or a JSON list (see ``_split_list``).
EnvList = Annotated[list[str], NoDecode]
EnvDays = Annotated[list[int], NoDecode]


# The longest span a setting may give (a window, a grace, an age): a century, far beyond any use,
# and far inside what a night's date arithmetic can hold.
MAX_DAYS = 36_500


class Settings(BaseSettings):
    """Every setting of recon; environment names are RECON_ and the field name upper-cased."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        validate_default=True,
        case_sensitive=False,
        # An env file line `RECON_SMTP_HOST=` means "not set", not "set to the empty string".
        env_ignore_empty=True,
        allow_inf_nan=False,  # no endless wait or window: every float setting is a number
    )

    # Store, and the payouts a nightly run imports into it first (a file, or a query and its source)
    database_url: str = "sqlite:///recon.db"
    import_file: Path | None = None
    import_sql: Path | None = None
    import_source_url: str | None = None

    # Provider
    api_base_url: str = f"http://127.0.0.1:{SANDBOX_PORT}"
    api_public_key: str = "sandbox-public-key"
    api_secret: SecretStr = SecretStr("sandbox-secret")
    # [accounts.NAME] tables (the TOML file only); none: RECON_API_* are the account "default"
    accounts: dict[AccountName, AccountSetting] = Field(default_factory=dict)
    concurrency: int = Field(32, ge=1, le=1024)
    rate_limit: float | None = Field(None, gt=0)
    connect_timeout: float = Field(10.0, gt=0)
    read_timeout: float = Field(65.0, gt=0)
    request_deadline: float = Field(90.0, gt=0)
    max_answer_bytes: int = Field(512 * 1024, ge=1024)
    retry_attempts: int = Field(4, ge=1, le=20)
    retry_initial_wait: float = Field(0.5, ge=0)
    retry_max_wait: float = Field(30.0, ge=0)
    token_refresh_margin: float = Field(300.0, ge=0)
    not_found_error_names: EnvList = Field(
        default_factory=lambda: ["transaction_not_found", "not_found", "unknown_transaction"]
    )
    session_found_error_names: EnvList = Field(
        default_factory=lambda: list(SESSION_FOUND_ERROR_NAMES)
    )

    # Run
    watch_days: int = Field(90, ge=0, le=MAX_DAYS)
    return_watch_days: int = Field(30, ge=0, le=MAX_DAYS)
    claim_poll_cap: int = Field(1000, ge=0)
    refused_limit: int = Field(20, ge=0)
    unrecorded_poll_cap: int = Field(1000, ge=0)
    keep_raw_days: float = Field(90.0, ge=0, le=MAX_DAYS)
    # Unset (None): the default schedule, up to the window in effect (see ``_default_days``).
    watch_schedule: EnvDays = Field(
        None,  # type: ignore[arg-type]  # _default_days replaces None: the default needs the window
    )
    return_watch_schedule: EnvDays = Field(
        None,  # type: ignore[arg-type]  # _default_days replaces None: the default needs the window
    )
    delay_grace: timedelta = timedelta(hours=1)
    stale_days: float = Field(3.0, ge=0, le=MAX_DAYS)
    duplicate_window: timedelta = timedelta(hours=24)
    # The agreed price of payouts (``[[fees]]`` in the TOML file; none: fees reported, not checked)
    fees: list[FeeSetting] = Field(default_factory=list)
    fee_tolerance: Decimal = Field(Decimal(0), ge=0)
    fee_grace: timedelta = timedelta(days=2)
    journal: JournalSetting | None = None
    journal_locked_through: date | None = None
    # The provider's transaction export: how its file is read, and whether the night pulls it
    export: ExportMapping = ExportMapping()
    provider_export: Literal["off", "api"] = "off"
    export_lookback_days: int = Field(3, ge=0, le=MAX_DAYS)
    export_row_cap: int = Field(100_000, ge=1)
    out_dir: Path = Path("out")
    timezone: str = "UTC"
    report_row_cap: int = Field(200, ge=1)
    mail_row_cap: int = Field(25, ge=1)
    report_days: float = Field(7.0, gt=0, le=MAX_DAYS)
    report_mode: int = 0o600
    report_workbook: Literal["night", "window", "off"] = "night"
    apply_max_bytes: int = Field(DEFAULT_APPLY_MAX_BYTES, ge=1024)
    csv_dialect: Literal["standard", "excel-eu"] = "standard"

    # Operations
    heartbeat_url: SecretStr | None = None
    max_run_age: timedelta = timedelta(hours=26)
    log_format: Literal["text", "json"] = "text"
    metrics_file: Path | None = None

    # Callback receiver
    receiver_max_body_bytes: int = Field(64 * 1024, ge=256)
    receiver_allow_networks: EnvList = Field(default_factory=list)
    receiver_path_token: SecretStr | None = None
    receiver_header_timeout: float = Field(10.0, gt=0)
    receiver_body_timeout: float = Field(20.0, gt=0)
    receiver_max_header_bytes: int = Field(16 * 1024, ge=1024, le=1024 * 1024)
    receiver_max_connections: int = Field(1000, ge=1)
    receiver_health_cache: float = Field(5.0, ge=0)

    # Mail
    smtp_host: str | None = None
    smtp_port: int = Field(25, ge=1, le=65535)
    smtp_security: Literal["none", "starttls", "tls"] = "none"
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_timeout: float = Field(30.0, gt=0)
    mail_from: str = "recon@localhost"
    mail_to: EnvList = Field(default_factory=list)
    mail_cc: EnvList = Field(default_factory=list)
    mail_zip_above_bytes: int = Field(2 * 1024 * 1024, ge=0)

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

    @field_validator("import_source_url")
    @classmethod
    def _one_import(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A night imports a file or a query's rows, not both; the query needs its source."""
        file, sql = info.data.get("import_file"), info.data.get("import_sql")
        if file is not None and sql is not None:
            raise ValueError("set RECON_IMPORT_FILE or RECON_IMPORT_SQL, not both")
        if "import_sql" in info.data and (value is None) != (sql is None):
            raise ValueError("RECON_IMPORT_SQL and RECON_IMPORT_SOURCE_URL go together")
        return value

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

    @field_validator("accounts", mode="before")
    @classmethod
    def _account_secrets(cls, value: Any) -> Any:
        """Plain names, and each account's secret from its variable, file or credential."""
        return tables_with_secrets(value, os.environ)

    @field_validator("accounts")
    @classmethod
    def _own_keys(cls, value: dict[str, AccountSetting]) -> dict[str, AccountSetting]:
        one_key_each(value)
        return value

    @field_validator("fees")
    @classmethod
    def _one_price_per_payout(cls, value: list[FeeSetting]) -> list[FeeSetting]:
        return no_overlap(value)

    @field_validator("fees")
    @classmethod
    def _configured_account(cls, value: list[FeeSetting], info: ValidationInfo) -> list[FeeSetting]:
        """An entry naming an account prices that account's payouts: the account must exist."""
        if "accounts" not in info.data:
            return value  # the accounts are wrong themselves, and reported
        names = sorted(info.data["accounts"]) or [DEFAULT_ACCOUNT]
        for entry in value:
            if entry.account is not None and entry.account not in names:
                raise ValueError(
                    f"fee entry {entry.entry_name()}: account {entry.account!r} is not configured "
                    f"(the accounts: {', '.join(names)})"
                )
        return value

    @model_validator(mode="after")
    def _journal_first(self) -> Settings:
        """An account's own journal codes refine ``[journal]``: alone, they would book nothing."""
        own = [name for name, table in sorted(self.accounts.items()) if table.journal is not None]
        if own and self.journal is None:
            raise ValueError(
                f"[accounts.{own[0]}.journal] needs a [journal] table: without one no entries "
                "are made"
            )
        return self

    @model_validator(mode="after")
    def _accounts_or_api(self) -> Settings:
        """With account tables, RECON_API_* are read by nothing: set, they are a mistake."""
        ignored = sorted(_API_FIELDS & self.model_fields_set) if self.accounts else []
        if ignored:
            names = ", ".join(env_name(field) for field in ignored)
            raise ValueError(
                f"{names}: not read when [accounts.NAME] tables are configured; give each "
                "account's api_base_url and public_key in its table and its secret in "
                "RECON_ACCOUNT_<NAME>_SECRET"
            )
        return self

    @field_validator("fee_tolerance", mode="before")
    @classmethod
    def _exact_tolerance(cls, value: Any) -> Any:
        """A TOML number by its shortest text (``0.01``), never through float arithmetic."""
        if isinstance(value, float):
            return str(value)
        return value

    @field_validator("delay_grace", "max_run_age", "duplicate_window", "fee_grace", mode="before")
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

    @field_validator("delay_grace", "max_run_age", "duplicate_window", "fee_grace")
    @classmethod
    def _in_range(cls, value: timedelta) -> timedelta:
        # A negative grace would find a fee missing, or a payout delayed, before it was due.
        if value < timedelta(0):
            raise ValueError("must not be negative")
        if value > timedelta(days=MAX_DAYS):
            raise ValueError(f"must be at most {MAX_DAYS:,} days")
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
    def provider_accounts(self) -> tuple[Account, ...]:
        """The provider accounts in name order (:mod:`recon.accounts`); without ``[accounts.…]``
        tables, the one account ``default`` of the ``RECON_API_*`` settings (and
        RECON_RATE_LIMIT, RECON_CONCURRENCY, RECON_MAIL_TO)."""
        default = Account(
            name=DEFAULT_ACCOUNT,
            label=DEFAULT_ACCOUNT,
            api_base_url=self.api_base_url,
            public_key=self.api_public_key,
            secret=self.api_secret,
            rate_limit=self.rate_limit,
            concurrency=self.concurrency,
            mail_to=tuple(self.mail_to),
        )
        return accounts_of(self.accounts, default, self.rate_limit, self.concurrency)

    @property
    def labels(self) -> dict[str, str]:
        """What finance calls each configured account (``[accounts.NAME] label``); none without
        ``[accounts.…]`` tables (the default account is named as it is)."""
        return {a.name: a.label for a in self.provider_accounts} if self.accounts else {}

    def select_accounts(
        self, names: Iterable[str], *, option: str = "--account"
    ) -> tuple[Account, ...]:
        """The accounts named by a repeatable ``option`` (none named: every account), in name
        order; a name not configured is ``InputError`` (exit 2) naming the option and the
        accounts there are."""
        return select(self.provider_accounts, names, option)

    def for_account(self, account: Account) -> Settings:
        """These settings with ``account``'s URL, keys, rate limit and concurrency in place of
        ``RECON_API_*``, ``RECON_RATE_LIMIT`` and ``RECON_CONCURRENCY``: what
        ``ProviderClient.from_settings`` and the night's asking read. Mail settings are
        unchanged."""
        return self.model_copy(update=client_fields(account))

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
        from recon.secret_files import SecretFilesSource

        secrets = SecretFilesSource(settings_cls, SECRET_FIELDS, ENV_PREFIX)  # *_FILE, credentials
        env = _EnvWithoutTables(settings_cls)  # the [accounts.NAME] tables: the file only
        sources: list[PydanticBaseSettingsSource] = [init_settings, env, secrets]
        if _CONFIG_FILE is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=_CONFIG_FILE))
        return tuple(sources)


class _EnvWithoutTables(EnvSettingsSource):
    """The ``RECON_*`` variables, except for the settings only the TOML file gives."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        if field_name in FILE_ONLY_FIELDS:
            return None, field_name, False
        return super().get_field_value(field, field_name)

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:  # not JSON: validation then names the variable and what it takes
            return value


_CONFIG_FILE: Path | None = None

# Tables whose problems are named by their dotted key (``export.columns.amount``).
_TABLES = {"journal": journal_settings.table_problem, "export": export_settings.table_problem}
# Settings only the TOML file gives (tables of their own), never an environment variable.
FILE_ONLY_FIELDS: frozenset[str] = frozenset({"accounts"})
# The settings of the one account that RECON_API_* describe when there are no account tables.
_API_FIELDS: frozenset[str] = frozenset({"api_base_url", "api_public_key", "api_secret"})

# Settings whose value must never be shown; the database URLs (a password in them) shown masked.
SECRET_FIELDS: frozenset[str] = frozenset(
    {"api_secret", "smtp_password", "receiver_path_token", "heartbeat_url"}
    | {"database_url", "import_source_url"}
)


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
        elif field in SECRET_FIELDS and env.get(env_name(field) + "_FILE"):
            origins[field] = f"env {env_name(field)}_FILE"
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
        # A missing or malformed file is named before any value is read.
        _no_secret_in_file(read_config_file(path), path)
    _CONFIG_FILE = path
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        origins = setting_origins(path, overrides)
        lines = [_problem(err, origins, path) for err in exc.errors()]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from None
    finally:
        _CONFIG_FILE = None


def _no_secret_in_file(table: dict[str, Any], path: Path) -> None:
    """An account's secret is read from the environment, a file or a credential, never from the
    configuration file, which is shared more widely than a secret may be."""
    accounts = table.get("accounts")
    if not isinstance(accounts, dict):
        return
    for name, account in accounts.items():
        if isinstance(account, dict) and "secret" in account:
            from recon.accounts import secret_variable

            variable = secret_variable(str(name))
            raise ConfigError(
                "invalid configuration:\n"
                f"  accounts.{name}.secret (config file {path}): an account's secret does not go "
                f"in the configuration file: set {variable} or {variable}_FILE"
            )


def _problem(err: Any, origins: dict[str, str], path: Path | None) -> str:
    """One line for one validation error: the setting, where its value came from, what is wrong."""
    loc = [str(part) for part in err["loc"]]
    message = str(err["msg"]).removeprefix("Value error, ")
    if not loc:  # a rule between settings: its message names them
        return f"  {message}"
    field = loc[0]
    if field in FILE_ONLY_FIELDS:
        return _table_problem(err, loc, message, path)
    where = origins.get(field, "default")
    if where.startswith("env "):
        where = f"environment variable {where[4:]}"
    elif where.startswith("file "):
        where = f"config file {where[5:]}, key {field}"
    if field in _TABLES and len(loc) > 1:  # a key inside [journal] or [export]: its dotted key
        key, text = _TABLES[field](field, loc[1:], err["type"], message, err.get("input"))
        return f"  {key} ({where.split(', key ')[0]}): {text}"
    if err["type"] == "extra_forbidden":
        source = f"config file {path}" if path is not None else "argument"
        return f"  {field} ({source}): unknown setting (see docs/configuration.md for the names)"
    item = f" item {loc[1]}" if len(loc) > 1 else ""
    got = repr(err.get("input"))
    shown = "" if field in SECRET_FIELDS or got in message else f" (got {got})"
    return f"  {field}{item} ({where}): {message}{shown}"


def _table_problem(err: Any, loc: list[str], message: str, path: Path | None) -> str:
    """One line for a problem in a table of the file (``[accounts.NAME]``): its dotted key
    (``accounts.brand_a.rate_limit``), the file, what is wrong, and the value unless a secret."""
    if loc[-1] == "[key]":  # the table's name itself
        loc = loc[:-1]
    key = ".".join(loc)
    where = f"config file {path}" if path is not None else "argument"
    if len(loc) > 3 and loc[2] == "journal":  # [accounts.NAME.journal]
        table = ".".join(loc[:3])
        key, text = _TABLES["journal"](table, loc[3:], err["type"], message, err.get("input"))
        return f"  {key} ({where}): {text}"
    if err["type"] == "extra_forbidden":
        from recon.accounts import AccountSetting

        allowed = ", ".join(name for name in AccountSetting.model_fields if name != "secret")
        return f"  {key} ({where}): unknown key in an account table (the keys: {allowed})"
    value = err.get("input")
    got = repr(value)
    # A key's own value only: the whole table (a missing key's input) holds the secret.
    quiet = len(loc) != 3 or loc[2] == "secret" or isinstance(value, dict) or got in message
    shown = "" if quiet else f" (got {got})"
    return f"  {key} ({where}): {message}{shown}"
