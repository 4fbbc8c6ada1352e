"""Holding a frame to its declaration (:mod:`recon.frames`): strictly at the classifier's entry,
leniently for what the store reads.

:func:`conform` checks that the required columns are there and that every value casts, or raises an
:class:`~recon.errors.InputError` naming the frame and column. :func:`typed` shapes a frame to
exactly the declared columns: a column it lacks is all missing, times are read as UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from recon.errors import InputError
from recon.frames import Column


def conform(frame: pd.DataFrame, declared: Iterable[Column], *, name: str) -> pd.DataFrame:
    """The frame with the declared columns first, cast to their dtypes; extras follow.

    Raises :class:`~recon.errors.InputError` naming the frame and column when a required (not
    ``optional``) column is missing or a column cannot be cast (e.g. naive datetimes, text in an
    integer column).
    """
    schema = {str(c): c for c in declared}
    missing = [c for c, col in schema.items() if c not in frame.columns and not col.optional]
    if missing:
        raise InputError(f"the {name} frame lacks required columns: {', '.join(missing)}")
    columns: dict[str, pd.Series] = {}
    for column, col in schema.items():
        dtype = col.dtype
        if column not in frame.columns:
            columns[str(column)] = pd.Series(pd.NA, index=frame.index, dtype=dtype)
            continue
        try:
            columns[str(column)] = _cast(frame[column], dtype)
        except (TypeError, ValueError) as exc:
            raise InputError(f"the {name} frame's column '{column}' is not {dtype}: {exc}") from exc
    extras = {str(c): frame[c] for c in frame.columns if c not in schema}
    return pd.DataFrame({**columns, **extras}, index=frame.index)


def _cast(series: pd.Series, dtype: Any) -> pd.Series:
    if series.dtype == dtype:
        return series
    if isinstance(dtype, pd.CategoricalDtype):
        # astype would silently turn a value outside the categories into <NA>.
        unexpected = set(map(str, series.dropna().unique())) - set(dtype.categories)
        if unexpected:
            raise ValueError(f"unexpected values {sorted(unexpected)[:5]}")
    if series.isna().all():
        # An all-missing column has no meaningful dtype of its own (often naive NaT or float NaN).
        return (
            pd.Series(pd.NA, index=series.index, dtype=dtype) if dtype != "bool" else series.notna()
        )
    if dtype == "bool":
        # astype(bool) would turn NaN into True; missing means "no".
        return series.astype("boolean").fillna(False).astype(bool)
    return series.astype(dtype)


def typed(frame: pd.DataFrame, declared: Iterable[Column]) -> pd.DataFrame:
    """``frame`` with exactly the declared columns (missing ones all ``<NA>``), cast to their
    dtypes; times are read as UTC, and the index is a fresh one."""
    out: dict[str, pd.Series] = {}
    names: list[str] = []
    for column in declared:
        name, dtype = str(column), column.dtype
        names.append(name)
        values = frame[name] if name in frame.columns else pd.Series([pd.NA] * len(frame))
        values = values.reset_index(drop=True)
        if isinstance(dtype, pd.DatetimeTZDtype):
            out[name] = pd.to_datetime(values, utc=True).astype(dtype)
        else:
            out[name] = values.astype(dtype)
    return pd.DataFrame(out, columns=names)
