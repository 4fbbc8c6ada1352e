"""Reading a query's rows into a typed frame a part at a time, with categoricals for short text.

A report over 1,000,000 payouts held every row as Python objects at once (1.3 GB peak); read in
parts, each converted to its final dtypes before the next is fetched, it stays well under 1 GB
(BENCHMARKS.md, "Scale").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import Connection

from recon.frames import BOOL, TEXT, TIME, Column

# Rows per part. Parts of 100,000 peaked ~50 MB higher at 1,000,000 payouts and were no faster.
PART_ROWS = 25_000
# A part's column: its values as a driver gives them, or a Series of them already typed.
Values = Sequence[Any] | pd.Series


def column_parts(
    conn: Connection, query: Any, params: Mapping[str, Any] | None = None
) -> Iterator[dict[str, Sequence[Any]]]:
    """The query's rows (given ``params``, the values of its parameters), a part at a time, as
    one list of values per column.

    ``yield_per`` streams: PostgreSQL and MariaDB send the rows as they are read (a server-side
    cursor) instead of all at once; SQLite's cursor reads as it goes anyway.
    """
    return reads_parts(conn, [(query, params)])


def reads_parts(
    conn: Connection, reads: Iterable[tuple[Any, Mapping[str, Any] | None]]
) -> Iterator[dict[str, Sequence[Any]]]:
    """The rows of several queries of the same columns (each with its parameters), run in turn,
    a part at a time, as :func:`column_parts` gives one query's."""
    # Options given to the call, not the statement: a statement run again keeps its cache key.
    results = (
        conn.execute(query, params, execution_options={"yield_per": PART_ROWS})
        for query, params in reads
    )
    first = next(results, None)
    if first is None:
        return
    keys = list(first.keys())
    # The next query runs once the one before it is read to its end (its cursor closed).
    rows = chain(first, chain.from_iterable(results))
    # Each Row becomes a plain tuple at once: a part held as Row objects (result.partitions())
    # cost ~20% more CPU, the cyclic GC walking every one of them.
    while part := [tuple(row) for row in islice(rows, PART_ROWS)]:
        yield {key: [row[i] for row in part] for i, key in enumerate(keys)}


class _Categories:
    """A categorical column built a part at a time: each part's codes, remapped at the end."""

    def __init__(self) -> None:
        self._parts: list[tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[Any]]] = []

    def add(self, values: Values) -> None:
        codes, uniques = pd.factorize(np.asarray(values, dtype=object))
        self._parts.append((codes, uniques))

    def result(self) -> pd.Categorical:
        """One categorical; categories sorted, so they do not depend on where the parts split."""
        categories = pd.Index(
            sorted({value for _, uniques in self._parts for value in uniques}), dtype=object
        )
        codes = [
            # The appended -1 is where a missing value's code (-1) lands: still missing.
            np.append(categories.get_indexer(uniques), -1)[part_codes]
            for part_codes, uniques in self._parts
        ]
        whole = np.concatenate(codes) if codes else np.array([], dtype=np.intp)
        return pd.Categorical.from_codes(whole, dtype=pd.CategoricalDtype(categories))


_CODES = "category"


def _read_dtype(column: Column, codes: bool) -> Any:
    """The dtype a column is read as: categoricals as codes of the categories found (a declared
    set of categories is held by :func:`recon.conform.conform`), flags as nullable (a driver may
    give ``None``; conform says what missing means)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _CODES if codes else TEXT
    return "boolean" if dtype == BOOL else dtype


def _typed(values: Values, dtype: Any) -> pd.Series:
    """Values as a Series of ``dtype`` (times: aware datetimes as UTC timestamps)."""
    if isinstance(values, pd.Series) and values.dtype == dtype:
        return values  # typed so already: times are not parsed again from objects
    if isinstance(dtype, pd.DatetimeTZDtype):
        # Microseconds, as the drivers' datetimes hold: every part gets the same unit.
        stamps = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        return stamps.astype(TIME)
    series: pd.Series = pd.Series(values, dtype=dtype)
    return series


def typed_frame(
    parts: Iterable[Mapping[str, Values]], declared: Iterable[Column], *, codes: bool = True
) -> pd.DataFrame:
    """A frame of the declared columns built part by part; ``codes=False`` reads categoricals as
    text (a part that stands alone gains nothing from codes)."""
    dtypes = {str(c): _read_dtype(c, codes) for c in declared}
    categories = {c: _Categories() for c, d in dtypes.items() if d == _CODES}
    others: dict[str, list[pd.Series]] = {c: [] for c, d in dtypes.items() if d != _CODES}
    for part in parts:
        for column, built in categories.items():
            built.add(part[column])
        for column, pieces in others.items():
            pieces.append(_typed(part[column], dtypes[column]))
    columns: dict[str, Any] = {}
    for column, dtype in dtypes.items():
        if column in categories:
            columns[column] = categories.pop(column).result()
        else:
            # Popped, so each column's parts are freed once it is whole, not at the end.
            pieces = others.pop(column)
            columns[column] = pd.concat(pieces, ignore_index=True) if pieces else _typed([], dtype)
    # copy=False: the columns are new already; a copy was another ~60 MB at 1,000,000 payouts.
    return pd.DataFrame(columns, copy=False)


def frame_of(conn: Connection, query: Any) -> pd.DataFrame:
    """A small query's rows as a frame (object columns; the caller types what it needs)."""
    result = conn.execute(query)
    # Plain tuples: pandas probing SQLAlchemy's Row objects costs ~30% more (BENCHMARKS.md).
    return pd.DataFrame([tuple(row) for row in result], columns=list(result.keys()))
