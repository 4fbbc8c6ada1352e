"""``recon config check``: the effective configuration, secrets masked, and a test of each link.

The provider accounts (:mod:`recon.accounts`) are listed by name, label, URL and public key, with
where each one's secret is read from (never the secret), and each account's keys are tested.

Each check is one small function returning a :class:`Check`; none writes anything: the database is
only read (a missing SQLite file is not created), the provider is asked for a token and nothing
else, and the SMTP server sees EHLO, STARTTLS and AUTH but never a message. Every line of output
goes through the settings' scrubber (:mod:`recon.redact`), so a secret that a server echoes back in
an error is masked too. A database URL recon cannot use is an invalid configuration (exit 2).

Warnings (:func:`configuration_warnings`) name settings that send a secret over a plain connection
off this machine: an SMTP login with ``RECON_SMTP_SECURITY=none``, an ``http://`` provider. They
never change the exit code. Loopback (``127.0.0.0/8``, ``::1``, ``localhost``) is exempt: the
traffic does not leave the machine, and the demo's sandbox is ``http://127.0.0.1``. A ``RECON_``
variable that nothing reads (a typo, or a name a newer recon dropped) fails the check
(:func:`environment_problems`): the setting its operator meant is not in effect.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import smtplib
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr

from recon.accounts import SECRET_VARIABLE, Account, secret_origin, secret_variable
from recon.constants import ExitCode
from recon.env_names import unknown_variables
from recon.errors import ConfigError, ReconError
from recon.journal_settings import account_books
from recon.reconcile.journal import Role
from recon.redact import MASK, hide_url, scrubber_for
from recon.settings import (
    SECRET_FIELDS,
    Settings,
    config_file_path,
    env_name,
    setting_origins,
)


class Status(StrEnum):
    """The result of one connection check."""

    OK = "ok"
    FAILED = "failed"
    INVALID = "invalid"  # the setting itself is wrong, not the link: exit 2
    SKIPPED = "skipped"
    WARNING = "warning"


_MARK = {
    Status.OK: "✓",
    Status.FAILED: "✗",
    Status.INVALID: "✗",
    Status.SKIPPED: "-",
    Status.WARNING: "!",
}


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One line of the effective configuration: name, value as shown (masked), origin."""

    name: str
    value: str
    origin: str


@dataclass(frozen=True, slots=True)
class Check:
    """One connection check: what was checked, how it went, and why."""

    name: str
    status: Status
    detail: str


def shown_value(settings: Settings, name: str) -> str:
    """A setting's value as text that is safe to print (secrets and passwords masked)."""
    value = getattr(settings, name)
    if settings.accounts and name in ("api_base_url", "api_public_key", "api_secret"):
        return "(not read: each account gives its own)"
    if value is None:
        return "(unset)"
    if name in ("database_url", "import_source_url"):
        return hide_url(str(value))
    if isinstance(value, SecretStr) or name in SECRET_FIELDS:
        return MASK
    if name == "fees":
        return "; ".join(entry.summary() for entry in value) if value else "(none)"
    if name == "journal":
        return str(value.summary())
    if name == "accounts":
        return ", ".join(sorted(value)) if value else "(none: RECON_API_* are the account default)"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) if value else "(empty)"
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g} s"
    if name == "report_mode":
        return f"{value:04o}"  # a file mode reads in octal, as chmod writes it: 0600, not 384
    return str(value)


def effective_settings(settings: Settings, origins: dict[str, str]) -> list[SettingRow]:
    """Every setting with its shown value and where it came from (default, env or file)."""
    return [
        SettingRow(name, shown_value(settings, name), origins.get(name, "default"))
        for name in Settings.model_fields
    ]


# --- checks -------------------------------------------------------------------------------------


def check_database(settings: Settings) -> Check:
    """Connect and compare the schema revision with the newest one this recon ships."""
    from sqlalchemy.exc import SQLAlchemyError

    from recon.store.db import make_engine, parse_url, safe_url
    from recon.store.migrate import current_revision, head_revision, is_known_revision

    name = "database"
    try:
        parsed = parse_url(settings.database_url)
    except ConfigError as exc:
        return Check(name, Status.INVALID, str(exc))
    where = safe_url(parsed)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(str(parsed.database))
        if not path.exists():
            # Connecting would create the file; a check must not leave anything behind.
            if path.resolve().parent.is_dir():
                return Check(
                    name,
                    Status.OK,
                    f"{where}: the file does not exist yet; `recon db upgrade` or the first run "
                    "creates it",
                )
            return Check(name, Status.FAILED, f"{where}: directory {path.parent} does not exist")
    try:
        engine = make_engine(settings.database_url)
    except ConfigError as exc:
        return Check(name, Status.INVALID, str(exc))
    try:
        current = current_revision(engine)
    except ReconError as exc:
        return Check(name, Status.FAILED, str(exc))
    except SQLAlchemyError as exc:
        return Check(name, Status.FAILED, f"{where}: {type(exc).__name__}: {exc}")
    finally:
        engine.dispose()
    head = head_revision()
    if current == head:
        return Check(name, Status.OK, f"{where}: connected; schema at revision {head} (current)")
    if current is None:
        return Check(
            name,
            Status.OK,
            f"{where}: connected; no schema yet: `recon db upgrade` or the first run creates it",
        )
    if not is_known_revision(current):
        return Check(
            name,
            Status.FAILED,
            f"{where}: schema at revision {current}, which this recon does not know "
            f"(newest here: {head}); was it migrated by a newer version of recon?",
        )
    return Check(
        name,
        Status.OK,
        f"{where}: connected; schema at revision {current}, behind {head}: the next run "
        "upgrades it (or `recon db upgrade`)",
    )


def check_provider(settings: Settings, account: Account | None = None) -> Check:
    """Ask the provider for a token (``merchant.authorize``) with the keys of ``account`` (none:
    the ``RECON_API_*`` settings); the check is named ``provider NAME`` for an account's table."""
    from recon.provider.client import ProviderClient

    name = "provider" if account is None or not settings.accounts else f"provider {account.name}"
    if account is not None:
        settings = settings.for_account(account)
    # One attempt: a check should answer in seconds, and a retry would not change the verdict.
    probe = settings.model_copy(update={"retry_attempts": 1})
    where = f"{settings.api_base_url} as {settings.api_public_key}"

    async def authorize() -> None:
        async with ProviderClient.from_settings(probe) as client:
            await client.authorize()

    try:
        asyncio.run(authorize())
    except ReconError as exc:
        return Check(name, Status.FAILED, f"{where}: {exc}")
    return Check(name, Status.OK, f"{where}: merchant.authorize issued a token")


def check_providers(settings: Settings) -> list[Check]:
    """:func:`check_provider` for each account, in name order."""
    return [check_provider(settings, account) for account in settings.provider_accounts]


def check_smtp(settings: Settings) -> Check:
    """Connect, EHLO, STARTTLS or TLS and log in as configured; no message is sent."""
    name = "smtp"
    host = settings.smtp_host
    if not host:
        return Check(
            name,
            Status.SKIPPED,
            f"smtp_host ({env_name('smtp_host')}) is not set: the run sends no email",
        )
    where = f"{host}:{settings.smtp_port} ({settings.smtp_security})"
    steps: list[str] = []
    context = ssl.create_default_context()
    try:
        smtp: smtplib.SMTP
        if settings.smtp_security == "tls":
            smtp = smtplib.SMTP_SSL(
                host, settings.smtp_port, timeout=settings.smtp_timeout, context=context
            )
            steps.append("connected with TLS")
        else:
            smtp = smtplib.SMTP(host, settings.smtp_port, timeout=settings.smtp_timeout)
            steps.append("connected")
        with smtp:
            smtp.ehlo()
            steps.append("EHLO")
            if settings.smtp_security == "starttls":
                smtp.starttls(context=context)
                smtp.ehlo()
                steps.append("STARTTLS")
            if settings.smtp_user:
                secret = settings.smtp_password
                smtp.login(settings.smtp_user, secret.get_secret_value() if secret else "")
                steps.append(f"logged in as {settings.smtp_user}")
    except (smtplib.SMTPException, OSError) as exc:
        done = f"{', '.join(steps)}, then" if steps else "cannot connect:"
        return Check(name, Status.FAILED, f"{where}: {done} {type(exc).__name__}: {exc}")
    detail = f"{where}: {', '.join(steps)} (no message sent)"
    if not settings.mail_to:
        detail += f"; note: mail_to ({env_name('mail_to')}) is empty, so the run sends no email"
    return Check(name, Status.OK, detail)


# --- warnings -----------------------------------------------------------------------------------


def configuration_warnings(settings: Settings) -> list[Check]:
    """Settings that send a secret in clear over the network; empty when there are none."""
    warnings: list[Check] = []
    host = settings.smtp_host
    if host and settings.smtp_user and settings.smtp_security == "none" and not _loopback(host):
        warnings.append(
            Check(
                "smtp",
                Status.WARNING,
                f"{env_name('smtp_security')}=none with {env_name('smtp_user')} "
                f"set: the SMTP password goes to {host}:{settings.smtp_port} over plain TCP; "
                "use starttls or tls",
            )
        )
    for account in settings.provider_accounts:
        url = urlsplit(account.api_base_url)
        if url.scheme.lower() != "http" or _loopback(url.hostname or ""):
            continue
        what = (
            f"accounts.{account.name}.api_base_url"
            if settings.accounts
            else env_name("api_base_url")
        )
        warnings.append(
            Check(
                "provider",
                Status.WARNING,
                f"{what} is http://: the API secret, the access "
                "tokens and the payouts cross the network unencrypted; use https://",
            )
        )
    return warnings


def environment_problems(
    environ: Mapping[str, str], settings: Settings | None = None
) -> list[Check]:
    """``RECON_`` variables in ``environ`` that nothing reads (:mod:`recon.env_names`), each with
    its replacement or the name it misspells; with ``settings``, also each account secret's
    variable (``RECON_ACCOUNT_<NAME>_SECRET``) of an account that is not configured."""
    problems = [
        Check("env", Status.FAILED, unknown.message()) for unknown in unknown_variables(environ)
    ]
    if settings is None:
        return problems
    read = {secret_variable(name) for name in settings.accounts}
    for variable in sorted({key.upper() for key, value in environ.items() if value}):
        found = SECRET_VARIABLE.fullmatch(variable)
        if found is None or variable.removesuffix("_FILE") in read:
            continue
        account = found[1].lower()
        reason = (
            "there are no [accounts.NAME] tables: RECON_API_SECRET is the secret"
            if not settings.accounts
            else f"no account {account} is configured (the accounts: "
            f"{', '.join(sorted(settings.accounts))})"
        )
        problems.append(Check("env", Status.FAILED, f"{variable}: {reason}; it does nothing"))
    return problems


def _loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# --- the command --------------------------------------------------------------------------------


def render_settings(rows: list[SettingRow]) -> str:
    """The effective configuration as an aligned table."""
    width = max(len(row.name) for row in rows)
    value_width = min(48, max(len(row.value) for row in rows))
    lines = [f"  {'setting':<{width}}  {'value':<{value_width}}  source"]
    lines += [f"  {row.name:<{width}}  {row.value:<{value_width}}  {row.origin}" for row in rows]
    return "\n".join(lines)


def render_check(check: Check) -> str:
    """One line: mark, what, why (a multi-line driver message is folded onto the line)."""
    detail = " ".join(check.detail.split())
    return f"  {_MARK[check.status]} {check.name:<8}  {detail}"


def render_accounts(settings: Settings, environ: Mapping[str, str], origins: dict[str, str]) -> str:
    """The provider accounts as an aligned table: name, label, URL, public key, and where the
    secret is read from (never the secret; ``origins``: the settings', for the default account)."""
    rows = [("name", "label", "api_base_url", "public key", "secret from")]
    for account in settings.provider_accounts:
        origin = (
            secret_origin(account.name, environ)
            if settings.accounts
            else _api_secret_origin(origins.get("api_secret", "default"))
        )
        rows.append((account.name, account.label, account.api_base_url, account.public_key, origin))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  "
        + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    )


def render_journal(settings: Settings) -> str:
    """Each provider account's ledger codes per role, its SIE series and where its codes are
    configured; without ``[journal]``, that no entries are made. Codes are no secret."""
    if settings.journal is None:
        return "  none: [journal] is not configured, so no entries are made"
    roles = [role.value for role in Role]
    rows = [("account", *roles, "sie series", "codes from")]
    for account in settings.provider_accounts:
        books = account_books(settings.journal, account.name, account.journal)
        if books is None:  # not so: [journal] is configured
            continue
        codes = [books.codes.get(Role(role), "(unset)") for role in roles]
        rows.append((account.name, *codes, books.sie_series, books.setting))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  "
        + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    ]
    closed = settings.journal_locked_through
    if closed is not None:
        lines.append(
            f"  closed through {closed.isoformat()}: an entry dated on or before it posts on "
            "the first open day, marked late"
        )
    if any("(unset)" in row for row in rows[1:]):
        lines.append("  (unset): a night that books to it is refused (exit 2)")
    return "\n".join(lines)


def _api_secret_origin(origin: str) -> str:
    """Where the default account's secret comes from, saying which setting it is."""
    if origin.startswith("env "):
        return origin
    return f"{origin}, key api_secret" if origin.startswith("file ") else f"{origin} (api_secret)"


def _one(check: Callable[[Settings], Check]) -> Callable[[Settings], list[Check]]:
    return lambda settings: [check(settings)]


# Each link's checks, in the order they are shown: the provider's once per account.
CHECKS: tuple[Callable[[Settings], list[Check]], ...] = (
    _one(check_database),
    check_providers,
    _one(check_smtp),
)


def check_configuration(
    settings: Settings, config_file: Path | None, echo: Callable[[str], None]
) -> ExitCode:
    """Print the configuration, each check as it completes, and the ``RECON_`` variables nothing
    reads.

    OK when every check passed or was skipped and every variable is read; USAGE when a setting is
    unusable; else FAILURE.
    """
    scrub = scrubber_for(settings)
    origins = setting_origins(config_file)
    path = config_file_path(config_file)
    header = "Configuration" + (f" (file {path})" if path is not None else " (no config file)")
    echo(scrub(f"{header}:\n{render_settings(effective_settings(settings, origins))}"))
    echo(scrub(f"Accounts:\n{render_accounts(settings, os.environ, origins)}"))
    if settings.journal is not None:  # without it, the settings' table says journal (unset)
        echo(scrub(f"Journal:\n{render_journal(settings)}"))
    echo("Connections:")
    seen: set[Status] = set()
    for run_checks in CHECKS:
        for check in run_checks(settings):
            seen.add(check.status)
            echo(scrub(render_check(check)))
    unknown = environment_problems(os.environ, settings)
    if unknown:
        echo("Environment:")
        for problem in unknown:
            seen.add(problem.status)
            echo(scrub(render_check(problem)))
    warnings = configuration_warnings(settings)
    if warnings:
        echo("Warnings:")
        for warning in warnings:
            echo(scrub(render_check(warning)))
    if Status.INVALID in seen:
        return ExitCode.USAGE
    return ExitCode.FAILURE if Status.FAILED in seen else ExitCode.OK
