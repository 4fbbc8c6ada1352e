"""Serving the sandbox with uvicorn (``recon sandbox serve``)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import uvicorn
from pydantic import SecretStr, ValidationError

from recon.errors import ConfigError
from recon.sandbox.app import create_app
from recon.sandbox.config import (
    DEFAULT_MERCHANT_ID,
    DEFAULT_PUBLIC_KEY,
    DEFAULT_SECRET,
    EXPORT_CAP,
    FaultConfig,
    FeeSchedule,
    Merchant,
    SandboxConfig,
)
from recon.serving import uvicorn_config


def base_url_for(host: str, port: int) -> str:
    """The address hosted-page links use: ``http://host:port`` (IPv6 in brackets)."""
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass  # a host name
    return f"http://{host}:{port}"


def serve(config: SandboxConfig, host: str, port: int) -> None:
    """Serve the sandbox on exactly ``host``:``port`` until interrupted."""
    settings = uvicorn_config(
        create_app(config),
        host=host,
        port=port,
        log_level="info",
        lifespan="on",
        log_config=uvicorn.config.LOGGING_CONFIG,  # says where it listens
    )
    uvicorn.Server(settings).run()


def build_config(
    *,
    host: str,
    port: int,
    latency_ms: float = 0.0,
    error_rate: float = 0.0,
    rate_429: float = 0.0,
    rate_limit: float | None = None,
    token_lifetime: float | None = None,
    settle_after: float = 60.0,
    returned_funds_url: str | None = None,
    callback_url: str | None = None,
    merchant_id: str = DEFAULT_MERCHANT_ID,
    public_key: str = DEFAULT_PUBLIC_KEY,
    secret: str = DEFAULT_SECRET,
    admin: bool = True,
    seed: int = 0,
    accounts: Sequence[Merchant] = (),
    fee: FeeSchedule | None = None,
    export_cap: int | None = None,
) -> SandboxConfig:
    """The configuration ``recon sandbox serve`` options describe (``ConfigError`` if invalid).

    ``accounts`` replace the one merchant of ``merchant_id``, ``public_key`` and ``secret``. Every
    account gets the two urls, with ``{account}`` in them replaced by its name.
    """
    try:
        faults = FaultConfig(
            latency_ms=latency_ms,
            error_rate=error_rate,
            rate_429=rate_429,
            rate_limit_rps=rate_limit,
            seed=seed,
        )
        merchants = list(accounts) or [
            Merchant(merchant_id=merchant_id, public_key=public_key, secret=SecretStr(secret))
        ]
        merchants = [
            m.model_copy(
                update={
                    "returned_funds_url": _for_account(returned_funds_url, m.merchant_id),
                    "callback_url": _for_account(callback_url, m.merchant_id),
                }
            )
            for m in merchants
        ]
        extra = {} if token_lifetime is None else {"token_lifetime_seconds": token_lifetime}
        return SandboxConfig(
            merchants=merchants,
            fee=fee or FeeSchedule(),
            export_cap=EXPORT_CAP if export_cap is None else export_cap,
            settle_after_seconds=settle_after,
            base_url=base_url_for(host, port),
            faults=faults,
            admin_enabled=admin,
            **extra,
        )
    except ValidationError as exc:
        problems = [
            f"  {'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_input=False)
        ]
        raise ConfigError("invalid sandbox option:\n" + "\n".join(problems)) from None


def _for_account(url: str | None, name: str) -> str | None:
    return None if url is None else url.replace("{account}", name)
