"""A point in time from text, as the merchant's files and the command line write it.

ISO 8601 with an offset (or ``Z``), ISO 8601 without one, or Unix epoch seconds with an optional
fraction. A time without an offset is a wall-clock time in the zone the caller names (recon passes
``RECON_TIMEZONE``), with that zone's daylight saving: ``2025-03-01T12:00:00`` in Europe/Helsinki is
10:00 UTC. A wall-clock time the zone skipped (the spring-forward hour) is refused; one it had twice
(the autumn hour) is the first of the two, as Python's ``fold=0`` has it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import ROUND_HALF_EVEN, Decimal

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = Decimal("0.000001")
_EPOCH_SECONDS = re.compile(r"[+-]?([0-9]+)(\.[0-9]*)?")
_MAX_EPOCH_DIGITS = 12  # datetime ends with the year 9999, 253402300800 seconds after 1970


def parse_timestamp(text: str, zone: tzinfo) -> datetime:
    """The instant ``text`` names, in UTC; ``ValueError`` showing the accepted forms otherwise."""
    stripped = text.strip()
    try:
        if epoch := _EPOCH_SECONDS.fullmatch(stripped):
            if len(epoch.group(1).lstrip("0")) > _MAX_EPOCH_DIGITS:
                raise OverflowError(stripped)
            seconds = Decimal(stripped).quantize(_MICROSECOND, rounding=ROUND_HALF_EVEN)
            whole = int(seconds)
            micros = int((seconds - whole) * 1_000_000)
            return _EPOCH + timedelta(seconds=whole, microseconds=micros)
        parsed = datetime.fromisoformat(stripped)
    except (ValueError, OverflowError):
        raise ValueError(
            f"not an ISO 8601 time or epoch seconds: {text[:60]!r} "
            "(e.g. 2025-03-01T12:00:00+01:00, 2025-03-01T12:00:00 in RECON_TIMEZONE, or 1740826800)"
        ) from None
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC)
    local = parsed.replace(tzinfo=zone)
    instant = local.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != parsed:
        raise ValueError(
            f"{stripped} does not exist in {zone} (the clocks skipped it): give an offset"
        )
    return instant
