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
_SHOWN = 40  # characters of the text a reason quotes at most


def parse_timestamp(text: str, zone: tzinfo) -> datetime:
    """The instant ``text`` names, in UTC; ``ValueError`` showing the accepted forms otherwise."""
    stripped = text.strip()
    try:
        if _EPOCH_SECONDS.fullmatch(stripped):
            return epoch_seconds(stripped)
        parsed = datetime.fromisoformat(stripped)
    except (ValueError, OverflowError):
        raise ValueError(
            f"not an ISO 8601 time or epoch seconds: {text[:60]!r} "
            "(e.g. 2025-03-01T12:00:00+01:00, 2025-03-01T12:00:00 in RECON_TIMEZONE, or 1740826800)"
        ) from None
    try:
        return in_zone(parsed, zone, stripped)
    except OverflowError:  # 9999-12-31T23:59:59-12:00: no such instant in UTC
        raise ValueError(f"out of range for a time: {_shown(stripped)}") from None
    except ValueError as exc:
        raise ValueError(f"{exc}: give an offset") from None


def epoch_seconds(text: str) -> datetime:
    """Epoch seconds (``text``, stripped), with or without a fraction, exactly to the microsecond
    (half even), in UTC. ``ValueError`` when ``text`` is not epoch seconds or more digits than a
    time has; ``OverflowError`` past the year 9999."""
    epoch = _EPOCH_SECONDS.fullmatch(text)
    if epoch is None:
        raise ValueError(f"not epoch seconds: {_shown(text)}")
    if len(epoch.group(1).lstrip("0")) > _MAX_EPOCH_DIGITS:
        raise ValueError(f"out of range for a time: {_shown(text)}")
    whole, _, fraction = text.partition(".")
    if len(fraction) <= 6:  # the usual text, in integers: the same instant as the Decimal below
        seconds, micros = int(whole), int(fraction.ljust(6, "0") or 0)
        if whole.startswith("-"):
            micros = -micros
        return _EPOCH + timedelta(seconds=seconds, microseconds=micros)
    exact = Decimal(text).quantize(_MICROSECOND, rounding=ROUND_HALF_EVEN)
    return _EPOCH + timedelta(microseconds=int(exact * 1_000_000))


def in_zone(parsed: datetime, zone: tzinfo, text: str) -> datetime:
    """``parsed`` in UTC: with an offset as it says, without one as a wall-clock time in ``zone``;
    ``ValueError`` (quoting ``text``) when the zone skipped that wall-clock time, ``OverflowError``
    when the instant is past either end of the calendar in UTC."""
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC)
    instant = parsed.replace(tzinfo=zone).astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != parsed:
        raise ValueError(f"{text} does not exist in {zone} (the clocks skipped it)")
    return instant


def _shown(text: str) -> str:
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "…"
