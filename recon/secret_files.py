"""Secret settings read from files: ``RECON_API_SECRET_FILE=/run/secrets/api-secret`` (the
convention of container secrets), or a credentials directory such as systemd's
``$CREDENTIALS_DIRECTORY`` (``LoadCredential=RECON_API_SECRET:/etc/recon/api-secret``), where the
file is named as the variable.

Only the secret settings (:data:`recon.settings.SECRET_FIELDS`) are read this way. The value is the
file's text without surrounding whitespace (an editor's final newline). A variable set both ways
(``RECON_API_SECRET`` and ``RECON_API_SECRET_FILE``) is refused rather than one silently winning.
Errors name the variable and the file, never what it holds.

pydantic-settings' ``secrets_dir`` was the first candidate; it reads every setting (not only the
secrets) from the directory, matches names without regard to case, and reports a missing file or
directory in its own words, so this small source is used instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from recon.errors import ConfigError

CREDENTIALS_ENV = "CREDENTIALS_DIRECTORY"
FILE_SUFFIX = "_FILE"
MAX_SECRET_BYTES = 64 * 1024  # a key, a password or a URL; a larger file is the wrong file


def file_variable(env: str) -> str:
    """The variable naming the file of ``env`` (``RECON_API_SECRET`` -> ``..._FILE``)."""
    return env + FILE_SUFFIX


def read_secret_file(path: Path, variable: str) -> str:
    """The secret in ``path`` (named by ``variable``), or ``ConfigError`` naming both."""
    where = f"{variable} names {path}"
    try:
        if not path.is_file():
            raise ConfigError(
                f"{where}, which is not a file"
                if path.exists()
                else f"{where}, which does not exist"
            )
        if path.stat().st_size > MAX_SECRET_BYTES:
            raise ConfigError(f"{where}, which is larger than {MAX_SECRET_BYTES} bytes")
        text = path.read_bytes().decode("utf-8").strip()
    except PermissionError:
        raise ConfigError(f"{where}, which this user ({_user()}) may not read") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}, which is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{where}, which cannot be read: {exc.strerror}") from None
    if not text:
        raise ConfigError(f"{where}, which is empty")
    return text


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # pragma: no cover - not a POSIX system
        return "the current user"


def secret_values(fields: Iterable[str], prefix: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Each secret field whose value comes from a file: ``PREFIX_NAME_FILE``, else the credentials
    directory's file ``PREFIX_NAME``. A field also set directly is refused when named by a
    ``_FILE`` variable; a credential is only used when the variable itself is unset."""
    env = {key.upper(): value for key, value in environ.items() if value}
    credentials = env.get(CREDENTIALS_ENV)
    found: dict[str, str] = {}
    for field in sorted(fields):
        name = prefix + field.upper()
        named = env.get(file_variable(name))
        if named is not None:
            if name in env:
                raise ConfigError(
                    f"{name} and {file_variable(name)} are both set: keep one of them"
                )
            found[field] = read_secret_file(Path(named), file_variable(name))
        elif credentials and name not in env:
            path = Path(credentials) / name
            if path.exists():
                found[field] = read_secret_file(path, f"{CREDENTIALS_ENV} ({credentials})")
    return found


class SecretFilesSource(PydanticBaseSettingsSource):
    """The settings source of :func:`secret_values`, read from the process environment."""

    def __init__(self, settings_cls: type[BaseSettings], fields: Iterable[str], prefix: str):
        super().__init__(settings_cls)
        self.values = secret_values(fields, prefix, os.environ)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)
