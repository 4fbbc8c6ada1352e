"""The provider accounts recon reconciles: one per brand or market, each with keys of its own.

The TOML file names them in ``[accounts.NAME]`` tables (``api_base_url``, ``public_key``,
``label``, optionally ``rate_limit``, ``concurrency``, ``mail_to``); each account's secret comes
from ``RECON_ACCOUNT_<NAME>_SECRET``, its ``_FILE`` form or the credentials directory, like every
other secret (:mod:`recon.secret_files`). Without any table, the ``RECON_API_*`` settings are the
one account :data:`DEFAULT_ACCOUNT`, so a setup from before accounts keeps working unchanged.

The rest of recon reads the accounts as :class:`Account` values, in name order, from
``Settings.provider_accounts``; a ``--account NAME`` option is checked with
:meth:`Settings.select_accounts <recon.settings.Settings.select_accounts>`; one account's client is
built from :meth:`Settings.for_account <recon.settings.Settings.for_account>`, the settings with
that account's keys, URL, rate limit and concurrency in place of ``RECON_API_*``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, field_validator

from recon.constants import DEFAULT_ACCOUNT
from recon.errors import InputError
from recon.journal_settings import AccountJournal
from recon.secret_files import CREDENTIALS_ENV, file_variable, secret_values
from recon.textsafe import one_line

__all__ = [
    "ACCOUNT_NAME",
    "DEFAULT_ACCOUNT",
    "Account",
    "AccountSetting",
    "account_secret",
    "secret_origin",
    "secret_variable",
]

# A plain identifier: it names the account in the store, the URLs, the metrics and its variable.
ACCOUNT_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
NAME_RULE = "lower-case letters, digits and _, starting with a letter, at most 32 characters"
_PREFIX = "RECON_"
# RECON_ACCOUNT_<NAME>_SECRET and its _FILE form, upper-cased as the environment is read.
SECRET_VARIABLE = re.compile(r"RECON_ACCOUNT_([A-Z][A-Z0-9_]{0,31})_SECRET(?:_FILE)?")
MAX_LABEL = 64


def secret_variable(name: str) -> str:
    """The variable of account ``name``'s secret (``brand_a``: ``RECON_ACCOUNT_BRAND_A_SECRET``)."""
    return f"{_PREFIX}ACCOUNT_{name.upper()}_SECRET"


def _present(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment as the settings read it: names upper-cased, empty values unset."""
    return {key.upper(): value for key, value in environ.items() if value}


def account_secret(name: str, environ: Mapping[str, str]) -> str | None:
    """Account ``name``'s secret from ``RECON_ACCOUNT_<NAME>_SECRET_FILE``, the credentials
    directory or ``RECON_ACCOUNT_<NAME>_SECRET``; ``None`` when none holds it. A value given both
    directly and by ``_FILE``, or a file that cannot be read, raises ``ConfigError``."""
    field = secret_variable(name).removeprefix(_PREFIX).lower()
    from_file = secret_values([field], _PREFIX, environ)
    if field in from_file:
        return from_file[field]
    return _present(environ).get(secret_variable(name))


def secret_origin(name: str, environ: Mapping[str, str]) -> str:
    """Where account ``name``'s secret is read from, as ``config check`` shows it."""
    variable = secret_variable(name)
    env = _present(environ)
    if file_variable(variable) in env:
        return f"env {file_variable(variable)}"
    if variable in env:
        return f"env {variable}"
    if CREDENTIALS_ENV in env:
        return f"credential {variable}"
    return "argument"


def _plain_name(name: str) -> str:
    if not ACCOUNT_NAME.fullmatch(name):
        raise ValueError(f"account name {name[:40]!r} is not a plain identifier ({NAME_RULE})")
    return name


# An account's name, checked where the table is read (the key of ``[accounts.NAME]``).
AccountName = Annotated[str, AfterValidator(_plain_name)]


@dataclass(frozen=True, slots=True)
class _SecretProblem:
    """In place of a secret that was not found or could not be read: refused with ``message``."""

    message: str


class AccountSetting(BaseModel):
    """One ``[accounts.NAME]`` table as written (its secret added from the environment)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, max_length=MAX_LABEL)
    api_base_url: str
    public_key: str = Field(min_length=1)
    secret: SecretStr
    rate_limit: float | None = Field(None, gt=0)
    concurrency: int | None = Field(None, ge=1, le=1024)
    mail_to: list[str] = Field(default_factory=list)
    journal: AccountJournal | None = None

    @field_validator("secret", mode="before")
    @classmethod
    def _found(cls, value: Any) -> Any:
        if isinstance(value, _SecretProblem):
            raise ValueError(value.message)
        return value

    @field_validator("mail_to", mode="before")
    @classmethod
    def _addresses(cls, value: Any) -> Any:
        """A TOML array, or one string of comma-separated addresses."""
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("label", "public_key", "mail_to")
    @classmethod
    def _no_control_character(cls, value: str | list[str]) -> str | list[str]:
        """A label, key or address is one line: CR or LF would start another header or row."""
        for item in [value] if isinstance(value, str) else value:
            one_line(item)
        return value

    @field_validator("public_key")
    @classmethod
    def _no_space(cls, value: str) -> str:
        if value != value.strip() or any(c.isspace() for c in value):
            raise ValueError("a public key holds no space")
        return value

    @field_validator("api_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = urlsplit(value.strip())
        if url.scheme.lower() not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http:// or https:// URL: {value!r}")
        return value.strip()


def tables_with_secrets(value: Any, environ: Mapping[str, str]) -> Any:
    """The ``accounts`` tables as given, each without a ``secret`` given its secret from
    ``environ``; one found nowhere, or whose file cannot be read, is refused when the table is
    read, with every other problem of the tables."""
    if not isinstance(value, Mapping):
        return value  # not a table: pydantic names the type expected
    tables: dict[Any, Any] = {}
    for name, table in value.items():
        if isinstance(table, Mapping) and table.get("secret") is None:
            table = {**table, "secret": _found_secret(name, environ)}
        tables[name] = table
    return tables


def _found_secret(name: Any, environ: Mapping[str, str]) -> str | _SecretProblem:
    from recon.errors import ConfigError

    if not isinstance(name, str) or not ACCOUNT_NAME.fullmatch(name):
        return "-"  # the name is refused: no variable to look in, and "no secret" adds nothing
    variable = secret_variable(name)
    try:
        secret = account_secret(name, environ)
    except ConfigError as exc:
        return _SecretProblem(str(exc))
    if secret is None:
        return _SecretProblem(
            f"no secret found: set {variable}, or {file_variable(variable)} naming its file, "
            f"or give the credential {variable}"
        )
    return secret


def one_key_each(accounts: Mapping[str, AccountSetting]) -> None:
    """``ValueError`` when two accounts share a public key: the provider would answer both the
    same, and each brand's payouts would be asked for under the other's name."""
    owners: dict[str, list[str]] = {}
    for name, account in accounts.items():
        owners.setdefault(account.public_key, []).append(name)
    shared = [sorted(names) for names in owners.values() if len(names) > 1]
    if shared:
        pairs = "; ".join(" and ".join(names) for names in sorted(shared))
        raise ValueError(f"two accounts have one public key ({pairs}): each account has its own")


@dataclass(frozen=True, slots=True)
class Account:
    """One provider account: its name (in the store, the URLs and the metrics), the label finance
    reads, where and with which keys it is asked, and its own limits and recipients."""

    name: str
    label: str
    api_base_url: str
    public_key: str
    secret: SecretStr
    rate_limit: float | None  # requests per second; None: unlimited
    concurrency: int
    # The account's own recipients of its own pack; empty: none. For the default account built
    # from RECON_API_* this is RECON_MAIL_TO, the one pack of a one-account setup.
    mail_to: tuple[str, ...]
    journal: AccountJournal | None = None  # its own [accounts.NAME.journal] table

    def __repr__(self) -> str:
        return f"Account(name={self.name!r}, label={self.label!r}, public_key={self.public_key!r})"


def accounts_of(
    tables: Mapping[str, AccountSetting],
    default: Account,
    rate_limit: float | None,
    concurrency: int,
) -> tuple[Account, ...]:
    """The accounts of ``[accounts.NAME]`` tables in name order, each limit it leaves unset the
    settings' own; without any table, the one account ``default`` (of ``RECON_API_*``)."""
    if not tables:
        return (default,)
    return tuple(
        Account(
            name=name,
            label=table.label,
            api_base_url=table.api_base_url,
            public_key=table.public_key,
            secret=table.secret,
            rate_limit=table.rate_limit if table.rate_limit is not None else rate_limit,
            concurrency=table.concurrency if table.concurrency is not None else concurrency,
            mail_to=tuple(table.mail_to),
            journal=table.journal,
        )
        for name, table in sorted(tables.items())
    )


def select(accounts: tuple[Account, ...], names: Iterable[str], option: str) -> tuple[Account, ...]:
    """The ``accounts`` named by a repeatable ``option`` (none named: all), in their order; a name
    not among them is ``InputError`` (exit 2) naming the option and the accounts there are."""
    by_name = {account.name: account for account in accounts}
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return accounts
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        listed = ", ".join(repr(name[:40]) for name in unknown)
        verb = "is not a configured account" if len(unknown) == 1 else "are not configured accounts"
        raise InputError(f"{option}: {listed} {verb} (the accounts: {', '.join(by_name)})")
    return tuple(account for account in accounts if account.name in wanted)


def client_fields(account: Account) -> dict[str, Any]:
    """The settings ``account`` puts in place of ``RECON_API_*``, ``RECON_RATE_LIMIT`` and
    ``RECON_CONCURRENCY`` (``Settings.for_account``)."""
    return {
        "api_base_url": account.api_base_url,
        "api_public_key": account.public_key,
        "api_secret": account.secret,
        "rate_limit": account.rate_limit,
        "concurrency": account.concurrency,
    }
