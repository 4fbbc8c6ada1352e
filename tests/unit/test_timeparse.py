"""Reading a point in time from text: ISO 8601 or epoch seconds, naive times in RECON_TIMEZONE."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from recon.timeparse import parse_timestamp

HELSINKI = ZoneInfo("Europe/Helsinki")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-03-01T13:00:00+01:00", datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),
        ("2025-03-01T12:00:00Z", datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),
        ("2025-03-01 12:00:00", datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),  # naive, zone UTC
        ("2025-03-01T12:00:00.250", datetime(2025, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)),
        ("1740830400", datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),
        ("1740830400.5", datetime(2025, 3, 1, 12, 0, 0, 500000, tzinfo=UTC)),
        ("1740830400.0000004", datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),
    ],
)
def test_timestamps_are_iso_8601_or_epoch_seconds(text: str, expected: datetime) -> None:
    """ISO 8601 with or without offset, or epoch seconds with a fraction; the result is UTC."""
    parsed = parse_timestamp(text, UTC)
    assert parsed == expected
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-03-01T12:00:00", datetime(2025, 3, 1, 10, 0, tzinfo=UTC)),  # winter: +02:00
        ("2025-07-01 12:00", datetime(2025, 7, 1, 9, 0, tzinfo=UTC)),  # summer: +03:00
        ("2025-03-01", datetime(2025, 2, 28, 22, 0, tzinfo=UTC)),  # local midnight
        ("2025-10-26T03:30:00", datetime(2025, 10, 26, 0, 30, tzinfo=UTC)),  # twice: the first
    ],
)
def test_a_naive_time_is_read_in_the_given_zone(text: str, expected: datetime) -> None:
    """A time without an offset is a wall-clock time in the zone, with its daylight saving."""
    assert parse_timestamp(text, HELSINKI) == expected


def test_an_offset_or_epoch_seconds_ignore_the_zone() -> None:
    """An explicit offset, `Z` or epoch seconds already name the instant."""
    assert parse_timestamp("2025-03-01T12:00:00Z", HELSINKI) == datetime(2025, 3, 1, 12, tzinfo=UTC)
    assert parse_timestamp("1740830400", HELSINKI) == datetime(2025, 3, 1, 12, tzinfo=UTC)


def test_a_wall_clock_time_that_never_happened_is_refused() -> None:
    """03:30 on the spring-forward night did not exist in Helsinki: refused, not guessed."""
    with pytest.raises(ValueError, match="does not exist in Europe/Helsinki"):
        parse_timestamp("2025-03-30T03:30:00", HELSINKI)


@pytest.mark.parametrize(
    "text", ["yesterday", "2025-13-01", "1e5", "", "99999999999999999999", "9" * 40, "1" * 5000]
)
def test_anything_else_is_refused_with_examples(text: str) -> None:
    """Unreadable text raises ValueError showing the accepted forms."""
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_timestamp(text, UTC)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("9999-12-31T23:59:59-12:00", UTC),  # past the calendar's end once in UTC
        ("0001-01-01T00:00:00+14:00", UTC),  # before its start
        ("9999-12-31T23:59:59", ZoneInfo("America/New_York")),  # the zone pushes it past
    ],
)
def test_a_time_past_the_calendars_ends_is_refused_not_a_crash(text: str, zone: ZoneInfo) -> None:
    """A ValueError naming the text (the importers' line, the options' usage error)."""
    with pytest.raises(ValueError, match="out of range for a time"):
        parse_timestamp(text, zone)
