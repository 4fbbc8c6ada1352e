"""Column types that behave the same on SQLite, PostgreSQL and MariaDB/MySQL.

Ids are case-sensitive (binary collation on MySQL), timestamps are UTC with microseconds everywhere,
long text is LONGTEXT on MySQL (whose TEXT stops at 64 KiB), and autoincrement keys are BIGINT
except on SQLite, where only ``INTEGER PRIMARY KEY`` autoincrements.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CHAR, BigInteger, DateTime, Dialect, Integer, String, Text, TypeDecorator
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.types import TypeEngine

from recon.constants import MAX_ID_LENGTH

_MYSQL = ("mysql", "mariadb")

# Provider and merchant ids are opaque and case-sensitive: `abc` and `ABC` are two payouts.
Id = String(MAX_ID_LENGTH).with_variant(
    mysql.VARCHAR(MAX_ID_LENGTH, charset="utf8mb4", collation="utf8mb4_bin"), *_MYSQL
)
# Id-like text of any length as an answer sent it (compared with our ids, so case-sensitive too).
AnswerText = Text().with_variant(mysql.TEXT(charset="utf8mb4", collation="utf8mb4_bin"), *_MYSQL)
Sha256Hex = CHAR(64).with_variant(mysql.CHAR(64, charset="ascii", collation="ascii_bin"), *_MYSQL)
LongText = Text().with_variant(mysql.LONGTEXT(charset="utf8mb4"), *_MYSQL)
SerialKey = BigInteger().with_variant(Integer(), "sqlite")


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
