"""One typed settings object, read once at the entry point.

Sources, highest first: keyword arguments (tests), ``RECON_*`` environment variables, the TOML file
named by ``--config`` or ``RECON_CONFIG``, then the defaults here. Defaults are the embedded demo:
SQLite in the working directory and the sandbox on loopback.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from recon.errors import ConfigError

SANDBOX_PORT = 8700
RECEIVER_PORT = 8701


class Settings(BaseSettings):
    """Every setting of recon; environment names are RECON_ and the field name upper-cased."""

    model_config = SettingsConfigDict(
        env_prefix="RECON_", extra="forbid", validate_default=True, case_sensitive=False
    )

    # Store
    database_url: str = "sqlite:///recon.db"

    # Provider
    api_base_url: str = f"http://127.0.0.1:{SANDBOX_PORT}"
    api_public_key: str = "sandbox-public-key"
    api_secret: SecretStr = SecretStr("sandbox-secret")
    concurrency: int = Field(32, ge=1, le=1024)
    rate_limit: float | None = Field(None, gt=0, description="requests per second; unset: no cap")
    connect_timeout: float = Field(10.0, gt=0)
    read_timeout: float = Field(65.0, gt=0)
    retry_attempts: int = Field(4, ge=1, le=20)
    retry_initial_wait: float = Field(0.5, ge=0)
    retry_max_wait: float = Field(30.0, ge=0)
    token_refresh_margin: float = Field(
        300.0, ge=0, description="re-authorize this long before expiry"
    )
    not_found_error_names: list[str] = Field(
        default_factory=lambda: ["transaction_not_found", "not_found", "unknown_transaction"]
    )

    # Run
    recheck_days: float = Field(3.0, ge=0)
    delay_grace: timedelta = timedelta(hours=1)
    stale_days: float = Field(3.0, ge=0)
    out_dir: Path = Path("out")
    timezone: str = "UTC"
    report_row_cap: int = Field(200, ge=1)

    # Callback receiver
    receiver_max_body_bytes: int = Field(64 * 1024, ge=256)
    receiver_allow_networks: list[str] = Field(default_factory=list)
    receiver_path_token: SecretStr | None = None

    # Mail
    smtp_host: str | None = None
    smtp_port: int = Field(25, ge=1, le=65535)
    smtp_security: Literal["none", "starttls", "tls"] = "none"
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_timeout: float = Field(30.0, gt=0)
    mail_from: str = "recon@localhost"
    mail_to: list[str] = Field(default_factory=list)
    mail_cc: list[str] = Field(default_factory=list)
    mail_zip_above_bytes: int = Field(2 * 1024 * 1024, ge=0)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

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


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the settings, or raise ``ConfigError`` with one line per wrong or missing value."""
    global _CONFIG_FILE  # pydantic-settings reads its sources from a classmethod
    path = config_file or (
        Path(os.environ["RECON_CONFIG"]) if os.environ.get("RECON_CONFIG") else None
    )
    if path is not None and not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    _CONFIG_FILE = path
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]) or "settings"
            where = f"RECON_{name.upper()}" + (f" / {path}" if path else "")
            lines.append(f"  {name} ({where}): {err['msg']}")
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from None
    except ValueError as exc:  # TOML syntax errors
        raise ConfigError(f"invalid configuration file {path}: {exc}") from None
    finally:
        _CONFIG_FILE = None
