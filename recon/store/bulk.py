"""Many rows through one statement: compiled once, each column converted once, the driver's
executemany.

SQLAlchemy's own executemany builds a parameter dict for every row and runs every value's bind
processor row by row. Kept because it pays on SQLite (nothing on PostgreSQL; docs/decisions.md,
"A run's bulk writes"). Here the
statement is compiled once for the connection's dialect, each column's values go through the
very bind processor SQLAlchemy would have used for that column (so every database stores what it
stored before: tests/integration/test_store_bulk.py compares the two paths), and the rows reach
the driver as tuples (or dicts, for psycopg's named parameters) through ``exec_driver_sql``, which
keeps SQLAlchemy's error translation and connection events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NAT = np.iinfo(np.int64).min  # numpy's NaT as int64


class DriverValues(list[Any]):
    """A column's values already as the driver takes them: no bind processor runs over them."""


def sqlite_texts(column: pd.Series) -> DriverValues:
    """Aware timestamps as the text ``UTCDateTime`` binds on SQLite (``YYYY-MM-DD
    HH:MM:SS.ffffff`` in UTC; tests/unit/test_store_timestamps.py compares the two), formatted by
    numpy for the whole column (docs/decisions.md, "A run's bulk writes")."""
    return _texts(column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy("datetime64[us]"))


def _texts(moments: np.ndarray) -> DriverValues:
    texts = np.datetime_as_string(moments, unit="us")
    known = ~np.isnat(moments)
    # ISO's "T" (the 11th character) becomes SQLite's space in every text at once.
    texts.view(np.uint32).reshape(len(texts), texts.itemsize // 4)[known, 10] = ord(" ")
    values = texts.astype(object)
    values[~known] = None
    return DriverValues(values.tolist())


def sqlite_times(values: Sequence[datetime | None]) -> DriverValues:
    """Aware datetimes (or None) as :func:`sqlite_texts` gives them, a column at a time (the
    bind's processing, a value at a time, was most of storing a night's answers). A naive one is
    refused, as the bind refuses it."""
    try:
        # Microseconds since the epoch by datetime arithmetic: pandas' parsing of a list of
        # datetimes cost more than the formatting itself.
        micros = [_NAT if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
    except TypeError:  # an aware datetime minus a naive one
        raise ValueError("naive datetime: recon stores aware UTC timestamps only") from None
    return _texts(np.array(micros, dtype=np.int64).view("datetime64[us]"))


def execute_columns(
    conn: Connection, statement: ClauseElement, columns: Mapping[str, Sequence[Any]]
) -> int:
    """Execute ``statement`` once per row of ``columns``; returns the number of rows.

    ``columns`` maps each bind parameter's name (an INSERT's column names, or the names of an
    UPDATE's ``bindparam``s) to its values, all of one length; parameters the statement binds to
    a value of its own (``.values(last_run_id=7)``) keep that value on every row. Values given as
    :class:`DriverValues` are passed as they are.
    """
    count = len(next(iter(columns.values()), ()))
    if count == 0:
        return 0
    dialect = conn.dialect
    compiled = statement.compile(dialect=dialect, column_keys=list(columns))
    assert isinstance(compiled, SQLCompiler)  # a DML statement's, for every dialect recon uses
    if compiled.insert_prefetch or compiled.update_prefetch:  # defaults SQLAlchemy computes per row
        raise ValueError("execute_columns needs a value for every column with a Python default")
    names = list(dict.fromkeys(compiled.positiontup or compiled.bind_names.values()))
    converted: list[Sequence[Any]] = []
    for name in names:
        bind = compiled.binds[name]
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if name not in columns:  # the statement's own value: converted once, the same in every row
            value = bind.effective_value
            converted.append([value if process is None else process(value)] * count)
            continue
        values = columns[name]
        if len(values) != count:
            raise ValueError(f"column {name!r} has {len(values)} values, not {count}")
        if process is None or isinstance(values, DriverValues):
            converted.append(values)
        else:
            converted.append(list(map(process, values)))
    rows: list[Any] = list(zip(*converted, strict=True))
    if not compiled.positional:
        if compiled.escaped_bind_names:  # names that need quoting: none of recon's
            raise ValueError(f"cannot bind {sorted(compiled.escaped_bind_names)} by name")
        rows = [dict(zip(names, row, strict=True)) for row in rows]
    elif compiled.positiontup != names:  # a parameter bound twice: give it in every position
        at = {name: i for i, name in enumerate(names)}
        order = [at[name] for name in compiled.positiontup or ()]
        rows = [tuple(row[i] for i in order) for row in rows]
    conn.exec_driver_sql(compiled.string, rows)
    return count
