"""UTC timestamps on their way into SQLite: the same text SQLAlchemy's own DATETIME writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pandas as pd
import pytest
from sqlalchemy import DateTime, create_engine

from recon.store.types import UTCDateTime

SQLITE = create_engine("sqlite://").dialect
MOMENTS = [
    datetime(2024, 3, 31, 1, 59, 59, 999_999, tzinfo=UTC),
    datetime(2024, 3, 31, 3, 0, tzinfo=timezone(timedelta(hours=2))),  # no microseconds
    datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC),  # a year of three digits
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    pd.Timestamp("2023-11-15 01:39:05.123456789", tz="Europe/Berlin").to_pydatetime(warn=False),
    pd.Timestamp("2023-11-15 01:39:05.5", tz="UTC"),  # a pandas Timestamp itself
]


def _sqlalchemys_own(value: datetime) -> str:
    """What SQLAlchemy writes for ``value`` as naive UTC into a plain DateTime column on SQLite."""
    naive = value.astimezone(UTC).replace(tzinfo=None)
    process = DateTime().dialect_impl(SQLITE).bind_processor(SQLITE)
    assert process is not None
    text: str = process(naive)
    return text


@pytest.mark.parametrize("value", MOMENTS, ids=str)
def test_a_timestamp_is_stored_in_sqlite_as_sqlalchemys_datetime_would_store_it(
    value: datetime,
) -> None:
    """An aware timestamp is stored in SQLite as the text of its UTC time, six decimals always."""
    process = UTCDateTime().dialect_impl(SQLITE).bind_processor(SQLITE)
    assert process is not None
    assert process(value) == _sqlalchemys_own(value)
    assert process(None) is None


def test_a_naive_timestamp_is_still_refused_on_sqlite() -> None:
    """Local time cannot leak in through the SQLite bind."""
    process = UTCDateTime().dialect_impl(SQLITE).bind_processor(SQLITE)
    assert process is not None
    with pytest.raises(ValueError, match="naive datetime"):
        process(datetime(2024, 1, 1, 12, 0))  # noqa: DTZ001 - naive on purpose


def test_a_column_of_timestamps_is_stored_in_sqlite_as_the_bind_stores_each() -> None:
    """Applying a decision formats timestamp columns at once: the same text, missing as NULL."""
    from recon.store.apply import sqlite_texts

    process = UTCDateTime().dialect_impl(SQLITE).bind_processor(SQLITE)
    assert process is not None
    column = pd.Series([*MOMENTS, None], dtype="datetime64[us, UTC]")
    assert sqlite_texts(column) == [*(process(m) for m in MOMENTS), None]
    berlin = column.dt.tz_convert("Europe/Berlin")
    assert sqlite_texts(berlin) == sqlite_texts(column)


def test_a_list_of_datetimes_is_stored_in_sqlite_as_the_bind_stores_each() -> None:
    """The answers' times are formatted a column at a time: the same text, missing as NULL, a
    naive one refused as the bind refuses it."""
    from recon.store.bulk import sqlite_times

    process = UTCDateTime().dialect_impl(SQLITE).bind_processor(SQLITE)
    assert process is not None
    assert sqlite_times([*MOMENTS, None]) == [*(process(m) for m in MOMENTS), None]
    assert sqlite_times([None, None]) == [None, None]
    with pytest.raises(ValueError, match="naive datetime"):
        sqlite_times([MOMENTS[0], datetime(2024, 1, 1, 12, 0)])  # noqa: DTZ001 - naive on purpose
