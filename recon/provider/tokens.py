"""The run's one access token: issued once however many calls start together, renewed near expiry.

A :class:`Tokens` keeps the token the provider issued (``merchant.authorize``). It asks for one on
first use (once, however many requests start together: the others wait on the lock), again when
the token is within ``refresh_margin`` seconds of expiry, and again when a call was answered 401
with it (unless another caller already replaced it). Every token issued is added to the
:class:`~recon.redact.Scrubber`, so it never appears in a message or the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import SecretStr

from recon.provider.models import AuthorizeResponse
from recon.redact import Scrubber

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Token:
    """An access token and when to renew it."""

    value: SecretStr
    refresh_at: float | None  # epoch seconds; None when the provider gave no expiry


class Tokens:
    """The current access token, renewed through ``issue`` (a call of ``merchant.authorize``)."""

    def __init__(
        self,
        issue: Callable[[], Awaitable[AuthorizeResponse]],
        *,
        refresh_margin: float,
        clock: Callable[[], float],
        redact: Scrubber,
    ) -> None:
        self._issue = issue
        self._refresh_margin = refresh_margin
        self._clock = clock
        self._redact = redact
        self._token: Token | None = None
        self._lock = asyncio.Lock()

    async def renew(self) -> Token:
        """A new token now, whatever the current one's age."""
        async with self._lock:
            return await self._authorize()

    async def current(self) -> Token:
        """The token to send: the current one while fresh, else a new one."""
        token = self._token
        if token is not None and self._fresh(token):
            return token
        async with self._lock:
            if self._token is not None and self._fresh(self._token):
                return self._token  # another caller renewed it while this one waited
            return await self._authorize()

    async def replace_rejected(self, rejected: Token) -> Token:
        """A call was answered 401 with ``rejected``: authorize again unless another caller did."""
        async with self._lock:
            if self._token is not None and self._token is not rejected:
                return self._token
            log.info("the provider rejected the access token; authorizing again")
            return await self._authorize()

    def _fresh(self, token: Token) -> bool:
        return token.refresh_at is None or self._clock() < token.refresh_at

    async def _authorize(self) -> Token:
        """Ask for a token; the caller holds the lock."""
        answer = await self._issue()
        self._redact.add(answer.access_token.get_secret_value())
        if answer.refresh_token is not None:
            self._redact.add(answer.refresh_token.get_secret_value())
        refresh_at = None
        if answer.expires is not None:
            expires = answer.expires.timestamp()
            # A token shorter-lived than the margin would be renewed on every call: halve instead.
            margin = min(self._refresh_margin, max(0.0, expires - self._clock()) / 2)
            refresh_at = expires - margin
        self._token = Token(answer.access_token, refresh_at)
        return self._token
