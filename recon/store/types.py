"""Column types that behave the same on SQLite, PostgreSQL and MariaDB/MySQL.

Ids are case-sensitive (binary collation on MySQL), timestamps are UTC with microseconds everywhere,
long text is LONGTEXT on MySQL (whose TEXT stops at 64 KiB), and autoincrement keys are BIGINT
except on SQLite, where only ``INTEGER PRIMARY KEY`` autoincrements.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CHAR, BigInteger, DateTime, Dialect, Integer, String, Text, TypeDecorator
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.types import TypeEngine

_MYSQL = ("mysql", "mariadb")

# Provider and merchant ids are opaque and case-sensitive: `abc` and `ABC` are two payouts.
Id = String(255).with_variant(
    mysql.VARCHAR(255, charset="utf8mb4", collation="utf8mb4_bin"), *_MYSQL
)
# Id-like text of any length as an answer sent it (compared with our ids, so case-sensitive too).
AnswerText = Text().with_variant(mysql.TEXT(charset="utf8mb4", collation="utf8mb4_bin"), *_MYSQL)
Sha256Hex = CHAR(64).with_variant(mysql.CHAR(64, charset="ascii", collation="ascii_bin"), *_MYSQL)
LongText = Text().with_variant(mysql.LONGTEXT(charset="utf8mb4"), *_MYSQL)
SerialKey = BigInteger().with_variant(Integer(), "sqlite")


_SQLITE_TEXT = "%04d-%02d-%02d %02d:%02d:%02d.%06d"  # SQLAlchemy's SQLite DATETIME storage format


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC ``datetime`` in and out; naive values are refused, so local time cannot leak in.

    PostgreSQL stores ``timestamptz``; SQLite and MySQL store naive UTC (MySQL with microseconds).
    """

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in _MYSQL:
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.TIMESTAMP(timezone=True))
        return dialect.type_descriptor(DateTime())

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        utc = _utc(value)
        return utc if dialect.name == "postgresql" else utc.replace(tzinfo=None)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        """On SQLite, the stored text in one step: what SQLAlchemy's DATETIME writes
        (``YYYY-MM-DD HH:MM:SS.ffffff``), by one positional ``%``-format of the seven fields
        instead of its keyword one after ``process_bind_param``. A run binds ~10 timestamps per
        payout (observations, outcomes, history): 5.6-7.1 µs each with SQLAlchemy's, 3.1-3.8 with
        ``datetime.isoformat`` of a naive copy, 1.5-2.2 with this (BENCHMARKS.md, "CPU per
        payout"; tests/unit/test_store_timestamps.py compares the text with SQLAlchemy's own).
        Elsewhere SQLAlchemy's processing, unchanged.
        """
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)

        def process(value: datetime | None) -> str | None:
            if value is None:
                return None
            t = _utc(value)  # also a pandas Timestamp (its microseconds; nanoseconds dropped)
            fields = (t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond)
            return _SQLITE_TEXT % fields

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive one is refused (``datetime.now(UTC)``, the usual value, as is)."""
    if value.tzinfo is UTC:
        return value
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r}: recon stores aware UTC timestamps only")
    return value.astimezone(UTC)
