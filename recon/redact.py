"""Hiding secrets in text: the one rule behind every message, log line and setting recon shows.

Whatever recon prints, logs or stores as an error passes through a :class:`Scrubber`, which
applies three rules, in this order:

1. **Known secrets, anywhere.** Every secret it was given (the API secret, each access and refresh
   token, the SMTP password, the receiver's path token, a database password) is replaced by
   :data:`MASK` wherever it appears, and so are its percent-encoded forms. A secret shorter than
   :data:`MIN_SECRET_CHARS` is left to rules 2 and 3: blanking every ``p`` out of a message would
   wreck it without hiding anything.
2. **The password of a URL, by position.** In anything shaped like ``scheme:[//]user:PASSWORD@host``
   (``postgresql:/u:pw@h``, ``u:pw@h`` and every other malformed variant included), everything
   between the user's ``:`` and the *last* ``@`` of the URL is the password, so ``u:p@ss@host``
   hides ``p@ss`` whole. Nothing is parsed: a URL too broken to parse is hidden all the same.
3. **Secret-looking parameters.** The value of any ``key=value`` whose key names a password,
   secret, token or API key (``?password=``, ``&sslpassword=``, ``token=``) is masked.

``hide_url`` applies rules 2 and 3 to one URL; :func:`scrubber_for` builds the scrubber that knows
every secret of the settings; :class:`ScrubLogs` applies a scrubber to every log record a handler
writes (the CLI puts one on the root logger's handlers).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus, unquote

from pydantic import SecretStr

from recon.textsafe import terminal_lines

if TYPE_CHECKING:
    from recon.settings import Settings

MASK = "***"
MIN_SECRET_CHARS = 4

# Every pattern below is linear in its input (bounded or anchored, no nested repetition): the
# scrubber also reads what a hostile provider sends.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,31}:/{0,2}")
_PARAM = re.compile(r"""(?<![\w.\-])(?P<key>[\w.\-]{1,64})=(?P<value>[^&;\s#'"]*)""")
_SECRET_KEY = re.compile(r"pass|pwd|secret|token|api_?key", re.IGNORECASE)
_BLANKS = re.compile(r"(\s+)")
_OPENERS = "'\"(<[{"


def _password_span(token: str) -> tuple[int, int] | None:
    """Where the password of the URL in ``token`` (no blanks) is: between the user's ``:`` and the
    last ``@``; ``None`` when the token holds no ``user:password@``."""
    at = token.rfind("@")
    if at <= 0:
        return None
    before = token[:at]
    slashes = before.find("://")
    if slashes >= 0:
        start = slashes + 3  # scheme://user:password
    else:
        lead = len(before) - len(before.lstrip(_OPENERS))
        scheme = _SCHEME.match(before, lead)
        # scheme:/user:password or scheme:user:password; else user:password without a scheme
        start = scheme.end() if scheme and ":" in before[scheme.end() :] else lead
    colon = before.find(":", start)
    return (colon + 1, at) if colon >= 0 and colon + 1 < at else None


def _hide_userinfo(token: str) -> str:
    span = _password_span(token)
    return token if span is None else token[: span[0]] + MASK + token[span[1] :]


def _hide_param(match: re.Match[str]) -> str:
    value = match.group("value")
    if value and not value.startswith(MASK) and _SECRET_KEY.search(match.group("key")):
        return match.group("key") + "=" + MASK
    return match.group(0)


def hide_url(url: str) -> str:
    """``url`` with its password (however malformed the URL) and secret parameters masked."""
    if "@" in url:
        url = _hide_userinfo(url)
    return _PARAM.sub(_hide_param, url) if "=" in url else url


def _hide_urls_in(text: str) -> str:
    if "@" in text:
        parts = _BLANKS.split(text)
        text = "".join(_hide_userinfo(p) if "@" in p else p for p in parts)
    return _PARAM.sub(_hide_param, text) if "=" in text else text


def url_secrets(url: str) -> list[str]:
    """The password of ``url`` and its secret parameters, as written and decoded; parses nothing."""
    span = _password_span(url) if "@" in url else None
    found = [url[span[0] : span[1]]] if span else []
    found += [
        m.group("value")
        for m in _PARAM.finditer(url)
        if m.group("value") and _SECRET_KEY.search(m.group("key"))
    ]
    return [form for value in found for form in (value, unquote(value))]


class Scrubber:
    """Masks known secrets and every URL's credentials in text (the module's three rules)."""

    def __init__(self, secrets: Iterable[str | SecretStr | None] = ()) -> None:
        self._secrets: set[str] = set()
        self._ordered: list[str] = []
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | SecretStr | None) -> None:
        """Remember another secret (every token the client is given, a password)."""
        value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
        if not value or len(value) < MIN_SECRET_CHARS:
            return
        new = {value, quote(value, safe=""), quote_plus(value, safe="")} - self._secrets
        if new:
            self._secrets |= new
            # Longest first, so a secret containing another is masked whole.
            self._ordered = sorted(self._secrets, key=len, reverse=True)

    def add_url(self, url: str | None) -> None:
        """Remember the password and secret parameters of ``url`` (however malformed)."""
        for value in url_secrets(url or ""):
            self.add(value)

    def __call__(self, text: str) -> str:
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, MASK)
        return _hide_urls_in(text)


def scrubber_for(settings: Settings, scrub: Scrubber | None = None) -> Scrubber:
    """``scrub`` (or a new scrubber) taught every secret of ``settings``, the passwords of the
    database and of the import's source included."""
    scrub = scrub if scrub is not None else Scrubber()
    for secret in (settings.api_secret, settings.smtp_password, settings.receiver_path_token):
        scrub.add(secret)
    for account in settings.accounts.values():
        scrub.add(account.secret)
    scrub.add_url(settings.database_url)
    scrub.add_url(settings.import_source_url)
    return scrub


class ScrubLogs(logging.Filter):
    """A handler filter: each record's message and traceback text pass through ``scrub``, and
    control characters in the message are shown as escapes (:func:`recon.textsafe.terminal_lines`):
    a log line may quote a provider's answer or an id from a forged callback."""

    def __init__(self, scrub: Scrubber) -> None:
        super().__init__()
        self.scrub = scrub

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = terminal_lines(self.scrub(message))
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
        return True
