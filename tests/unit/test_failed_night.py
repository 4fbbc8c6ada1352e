"""A failed night in words: the cause of each way a run can end early, in one line, and the
night's date (pure: exceptions and times in, text out)."""

from __future__ import annotations

import signal
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from recon.errors import (
    AuthorizeFailed,
    KeysRefused,
    ProviderConnectionError,
    ProviderServerError,
    StoreError,
    TooManyRefusals,
)
from recon.reconcile.failure import abandoned_cause, cause_of, failure_line, night_of
from recon.signals import Terminated


def _authorize_refused() -> AuthorizeFailed:
    try:
        try:
            raise ProviderConnectionError("Cannot connect to 127.0.0.1:9", operation="x")
        except ProviderConnectionError as exc:
            raise AuthorizeFailed(
                f"no access token ({exc})", operation="merchant.authorize"
            ) from None
    except AuthorizeFailed as failed:
        return failed


def test_a_provider_that_refuses_connections_is_named_with_the_operation() -> None:
    """The issue's night: merchant.authorize could not connect."""
    assert cause_of(_authorize_refused()) == "cannot reach the provider (merchant.authorize)"


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (Terminated(signal.SIGTERM), "stopped by SIGTERM before it finished"),
        (KeyboardInterrupt(), "stopped by SIGINT before it finished"),
        (KeysRefused("HTTP 401: no", operation="merchant.authorize", status=401),
         "the provider refused the API keys (merchant.authorize)"),
        (TooManyRefusals("30 refused"), "the provider refused too many ids: the API key looks "
         "revoked"),
        (ProviderServerError("boom\nsecond line", operation="transaction.get", status=503),
         "the provider failed: HTTP 503: boom second line (transaction.get)"),
        (StoreError("the database sqlite:///r.db failed during the run: disk I/O error"),
         "the database sqlite:///r.db failed during the run: disk I/O error"),
        (ValueError("bad\nthing"), "unexpected error: ValueError: bad thing"),
    ],
)  # fmt: skip
def test_each_way_a_run_ends_early_has_a_one_line_cause(exc: BaseException, cause: str) -> None:
    """Signals, refused keys, the provider's errors, the database, a bug: one line each."""
    assert cause_of(exc) == cause


def test_a_long_cause_is_cut_to_one_short_line() -> None:
    """A provider's long error text does not make a mail subject of kilobytes."""
    cause = cause_of(ValueError("x" * 5000))
    assert len(cause) == 300
    assert cause.endswith("…")


@pytest.mark.parametrize(
    ("as_of", "night"),
    [
        (datetime(2026, 11, 23, 0, 30, tzinfo=UTC), date(2026, 11, 22)),  # 02:30 in Helsinki
        (datetime(2026, 11, 22, 20, 0, tzinfo=UTC), date(2026, 11, 22)),  # 22:00 in Helsinki
        (datetime(2026, 11, 23, 9, 59, tzinfo=UTC), date(2026, 11, 22)),  # 11:59 in Helsinki
    ],
)
def test_a_run_after_midnight_belongs_to_the_night_before(as_of: datetime, night: date) -> None:
    """The night of the 22nd runs at 02:30 on the 23rd, local time."""
    assert night_of(as_of, ZoneInfo("Europe/Helsinki")) == night


def test_the_failure_line_names_the_night_and_its_cause() -> None:
    """ "recon: night of 2026-11-22 failed: cannot reach the provider (merchant.authorize)"."""
    line = failure_line(date(2026, 11, 22), cause_of(_authorize_refused()))
    assert line == (
        "recon: night of 2026-11-22 failed: cannot reach the provider (merchant.authorize)"
    )


def test_an_abandoned_run_names_its_process() -> None:
    """A run killed outright is closed by the next with the pid and host it ran as."""
    assert "pid 4242 on batch-1" in abandoned_cause("batch-1", 4242)
