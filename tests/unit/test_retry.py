"""The one retry helper shared by the provider client and the mailer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from recon import retry


class Flaky:
    """Fails with the queued errors, in order, then answers ``"done"``; counts its calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"

    async def coro(self) -> str:
        return self()


class Later(Exception):
    """A failure worth another attempt, optionally with a wait the other side asked for."""

    def __init__(self, asked: float | None = None) -> None:
        super().__init__("later")
        self.asked = asked


def transient(exc: Exception) -> bool:
    return isinstance(exc, Later)


def asked(exc: Exception) -> float | None:
    return exc.asked if isinstance(exc, Later) else None


@pytest.fixture(autouse=True)
def waits_off() -> Iterator[None]:
    """The hour-long waits below take no time: the testing mode, not a patched sleep."""
    before = retry.is_testing()
    retry.set_testing(True)
    yield
    retry.set_testing(before)


HOURLY = retry.Backoff(attempts=3, initial=3600.0, maximum=3600.0)


def test_a_transient_failure_is_retried_until_it_succeeds() -> None:
    """Two failures then success: three calls, two retries reported with their attempt numbers."""
    flaky = Flaky(Later(), Later())
    seen: list[int] = []
    attempts = retry.Attempts(HOURLY, transient, on_retry=lambda exc, n, s: seen.append(n))
    result = retry.call(flaky, attempts)
    assert (result, flaky.calls, seen, attempts.number) == ("done", 3, [1, 2], 3)


def test_the_last_failure_is_raised_when_the_attempts_run_out() -> None:
    """Three attempts in all, then the error of the third."""
    last = Later()
    flaky = Flaky(Later(), Later(), last, Later())
    attempts = retry.Attempts(HOURLY, transient)
    with pytest.raises(Later) as caught:
        retry.call(flaky, attempts)
    assert caught.value is last
    assert flaky.calls == attempts.number == 3


def test_a_failure_not_worth_retrying_is_raised_at_once() -> None:
    """A permanent error is not tried again."""
    flaky = Flaky(ValueError("permanent"))
    attempts = retry.Attempts(HOURLY, transient)
    with pytest.raises(ValueError, match="permanent"):
        retry.call(flaky, attempts)
    assert flaky.calls == attempts.number == 1


def test_a_wait_asked_for_is_a_floor_and_one_longer_than_the_maximum_ends_the_retries() -> None:
    """Asked to wait 5 s: the retry waits at least 5 s; asked for more than the maximum: give up."""
    short = retry.Backoff(attempts=3, initial=0.1, maximum=10.0)
    waits: list[float] = []
    flaky = Flaky(Later(asked=5.0))
    record = retry.Attempts(
        short, transient, retry_after=asked, on_retry=lambda exc, n, seconds: waits.append(seconds)
    )
    retry.call(flaky, record)
    assert waits == [5.0]
    too_long = Flaky(Later(asked=11.0))
    with pytest.raises(Later):
        retry.call(too_long, retry.Attempts(short, transient, retry_after=asked))
    assert too_long.calls == 1


@pytest.mark.anyio
async def test_the_async_form_retries_the_same_way() -> None:
    """``acall`` follows the same rules as ``call``: retried, then raised after the attempts."""
    flaky = Flaky(Later(), Later())
    assert await retry.acall(flaky.coro, retry.Attempts(HOURLY, transient)) == "done"
    exhausted = Flaky(Later(), Later(), Later())
    with pytest.raises(Later):
        await retry.acall(exhausted.coro, retry.Attempts(HOURLY, transient))
    assert (flaky.calls, exhausted.calls) == (3, 3)
