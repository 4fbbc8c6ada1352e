"""A sandbox served over real HTTP on loopback, for tests: recon's pytest plugin's
``payout_sandbox`` (:mod:`recon.pytest_plugin`), in a merchant's tests or recon's own.

It is the way recon's tests serve the sandbox (:func:`recon.serving.serve_in_thread`: uvicorn in a
daemon thread on a free port of ``127.0.0.1``) with the demo merchant's public key and a fresh
secret, so a test that passes the keys it is given is known to pass them. ``add_account(name)``
makes another merchant with keys of its own, whose token reads only its own transactions.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
from pydantic import SecretStr

from recon.sandbox.app import create_app
from recon.sandbox.config import (
    DEFAULT_MERCHANT_ID,
    DEFAULT_PUBLIC_KEY,
    EXPORT_CAP,
    Merchant,
    SandboxConfig,
)
from recon.serving import serve_in_thread


@dataclass(frozen=True)
class SandboxAccount:
    """One more account of a running sandbox: where it answers and its own keys."""

    url: str  # the sandbox's, as LoopbackSandbox.url
    name: str
    public_key: str
    secret: str

    @property
    def merchant_id(self) -> str:
        """The account's merchant_id in callbacks and notifications: its name."""
        return self.name


@dataclass(frozen=True)
class LoopbackSandbox:
    """A running sandbox: where it answers and the merchant's keys (docs/sandbox.md)."""

    url: str  # ``http://127.0.0.1:<port>``; operations at ``{url}/api/<op>``
    public_key: str
    secret: str
    merchant_id: str

    def advance(self, seconds: float) -> float:
        """Move the sandbox clock ``seconds`` forward and process everything that became due
        (settlements, returns, callbacks) before returning; the sandbox's new time (epoch s)."""
        answer = httpx.post(
            f"{self.url}/sandbox/clock/advance", json={"seconds": seconds}, timeout=30
        )
        if answer.status_code != 200:
            raise ValueError(f"the sandbox refused to advance its clock: {answer.text}")
        return float(answer.json()["now"])

    def add_account(
        self,
        name: str,
        *,
        public_key: str | None = None,
        returned_funds_url: str | None = None,
        callback_url: str | None = None,
        default_currency: str = "EUR",
    ) -> SandboxAccount:
        """Serve another merchant from now on (``POST /sandbox/accounts``): ``name`` is its
        merchant_id, its public key ``<name>-public-key`` unless given, its secret new."""
        body = {
            "name": name,
            "public_key": public_key,
            "secret": secrets.token_urlsafe(24),
            "returned_funds_url": returned_funds_url,
            "callback_url": callback_url,
            "default_currency": default_currency,
        }
        given = {k: v for k, v in body.items() if v is not None}
        answer = httpx.post(f"{self.url}/sandbox/accounts", json=given, timeout=30)
        if answer.status_code != 201:
            raise ValueError(f"the sandbox refused the account {name!r}: {answer.text}")
        made = answer.json()
        return SandboxAccount(
            url=self.url, name=name, public_key=made["public_key"], secret=given["secret"]
        )


@contextmanager
def loopback_sandbox(
    *, settle_after: float = 60.0, export_cap: int = EXPORT_CAP
) -> Iterator[LoopbackSandbox]:
    """A fresh sandbox (its own clock and records) on loopback until the block ends."""
    secret = secrets.token_urlsafe(24)
    merchant = Merchant(
        merchant_id=DEFAULT_MERCHANT_ID, public_key=DEFAULT_PUBLIC_KEY, secret=SecretStr(secret)
    )
    config = SandboxConfig(
        merchants=[merchant], settle_after_seconds=settle_after, export_cap=export_cap
    )
    app = create_app(config)
    with serve_in_thread(app) as url:
        # The hosted page's links name the port, known only once the socket is bound.
        app.state.sandbox.config.base_url = url
        yield LoopbackSandbox(
            url=url, public_key=DEFAULT_PUBLIC_KEY, secret=secret, merchant_id=DEFAULT_MERCHANT_ID
        )
