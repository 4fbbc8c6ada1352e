"""Fault draws of the sandbox: reproducible shares and a token-bucket rate limit."""

from __future__ import annotations

import pytest

from recon.sandbox.config import FaultConfig
from recon.sandbox.faults import FaultInjector


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _errors(injector: FaultInjector, n: int) -> list[int | None]:
    plans = [injector.plan() for _ in range(n)]
    return [p.error.status if p.error else None for p in plans]


def test_the_same_seed_gives_the_same_faults() -> None:
    """Two injectors with one seed meet the same faults in the same order."""
    config = FaultConfig(error_rate=0.25, rate_429=0.1, seed=42)
    assert _errors(FaultInjector(config), 500) == _errors(FaultInjector(config), 500)


def test_shares_are_close_to_their_setting() -> None:
    """error_rate 0.25 makes about a quarter of the plans a 5xx."""
    drawn = _errors(FaultInjector(FaultConfig(error_rate=0.25, seed=1)), 4000)
    share = sum(1 for s in drawn if s is not None) / len(drawn)
    assert 0.22 < share < 0.28
    assert {s for s in drawn if s is not None} <= {500, 502, 503}


def test_no_faults_means_an_inactive_injector() -> None:
    """The default configuration switches every per-request fault off."""
    assert not FaultInjector(FaultConfig()).active
    assert FaultInjector(FaultConfig(latency_ms=1)).active


def test_the_rate_limit_refills_with_time() -> None:
    """At 2 rps a burst gets 2 answers, then 429 with Retry-After; half a second frees one."""
    clock = FakeMonotonic()
    injector = FaultInjector(FaultConfig(rate_limit_rps=2), monotonic=clock)
    assert _errors(injector, 3) == [None, None, 429]
    plan = injector.plan()
    assert plan.error is not None
    assert plan.error.headers == {"Retry-After": "1"}
    clock.now += 0.5
    assert _errors(injector, 2) == [None, 429]


def test_latency_with_jitter_stays_within_its_bounds() -> None:
    """latency 100 ms with 20 ms jitter delays between 80 and 120 ms."""
    injector = FaultInjector(FaultConfig(latency_ms=100, latency_jitter_ms=20))
    delays = [injector.plan().delay_seconds for _ in range(200)]
    assert all(0.08 <= d <= 0.12 for d in delays)
    assert len(set(delays)) > 1


@pytest.mark.parametrize("change", [{"error_rate": 1.5}, {"error_statuses": [404]}, {"bogus": 1}])
def test_a_wrong_fault_setting_is_refused(change: dict[str, object]) -> None:
    """Shares above 1, non-5xx statuses and unknown names are refused."""
    with pytest.raises(ValueError, match=next(iter(change))):
        FaultConfig().updated(change)
