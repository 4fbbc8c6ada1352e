"""Fault injection for the ``/api`` operations: latency, 5xx, 429, a rate limit, broken answers,
export tasks that fail.

Draws come from one ``random.Random(seed)``, re-seeded whenever the faults are set, so the same
requests in the same order meet the same faults. The rate limit is a token bucket on real
(monotonic) time: it models the provider's capacity, which the sandbox clock does not change.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from recon.sandbox.config import FaultConfig
from recon.sandbox.errors import SandboxError


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do to one request: wait, then answer normally or break the answer."""

    delay_seconds: float = 0.0
    error: SandboxError | None = None  # answered (after the delay) instead of the operation
    malformed: bool = False
    missing_state: bool = False


NO_FAULT = Plan()


class FaultInjector:
    """Decides, per request, which configured fault (if any) it meets."""

    def __init__(
        self, config: FaultConfig, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._monotonic = monotonic
        self.configure(config)

    def configure(self, config: FaultConfig) -> None:
        """Replace the faults, re-seed the random draws and refill the rate-limit bucket."""
        self.config = config
        self.active = config.active
        self._random = random.Random(config.seed)
        self._capacity = max(1.0, config.rate_limit_rps or 1.0)
        self._tokens = self._capacity
        self._refilled = self._monotonic()

    def _chance(self, share: float) -> bool:
        return share > 0 and self._random.random() < share

    def _take_token(self, rps: float) -> SandboxError | None:
        now = self._monotonic()
        self._tokens = min(self._capacity, self._tokens + (now - self._refilled) * rps)
        self._refilled = now
        if self._tokens >= 1:
            self._tokens -= 1
            return None
        wait = math.ceil((1 - self._tokens) / rps)
        return SandboxError(
            429,
            "rate_limited",
            f"more than {rps:g} requests per second",
            {"Retry-After": str(max(wait, 1))},
        )

    def export_fails(self) -> bool:
        """Whether an export task requested now fails instead of finishing (a draw only when
        ``export_failure_rate`` is set, so other faults meet the same draws as before)."""
        return self._chance(self.config.export_failure_rate)

    def plan(self) -> Plan:
        """How to answer this request: after what delay, and with which error or broken body."""
        cfg = self.config
        error = self._take_token(cfg.rate_limit_rps) if cfg.rate_limit_rps else None
        if error is None and self._chance(cfg.rate_429):
            error = SandboxError(
                429,
                "rate_limited",
                "too many requests (injected)",
                {"Retry-After": str(cfg.retry_after_seconds)},
            )
        if error is None and self._chance(cfg.error_rate):
            status = self._random.choice(cfg.error_statuses)
            error = SandboxError(status, "internal_error", "internal error (injected)")
        delay = cfg.latency_ms / 1000.0
        if cfg.latency_jitter_ms:
            delay += self._random.uniform(-cfg.latency_jitter_ms, cfg.latency_jitter_ms) / 1000.0
        if self._chance(cfg.slow_rate):
            delay += cfg.slow_seconds
        return Plan(
            delay_seconds=max(delay, 0.0),
            error=error,
            malformed=self._chance(cfg.malformed_rate),
            missing_state=self._chance(cfg.missing_state_rate),
        )
