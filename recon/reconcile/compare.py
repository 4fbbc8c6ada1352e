"""This run's exceptions against the previous run's: new, persisting or cleared (issue 4, item 4).

Pure: two ``exceptions`` frames in (columns item_id, item_kind, flag, detail; see
:data:`recon.frames.EXCEPTIONS`), one frame out with the same columns plus ``status``
(:data:`recon.frames.COMPARED`). An exception is identified by (item_kind, item_id, flag):

- ``new``: present now, absent from the previous run (detail: this run's);
- ``persisting``: present in both (detail: this run's);
- ``cleared``: present in the previous run only (detail: the previous run's).

Rows are sorted by item_kind, item_id and flag. Repeated rows in either input count once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import FlagStatus
from recon.frames import ExceptionCol

_KEY = [ExceptionCol.ITEM_KIND, ExceptionCol.ITEM_ID, ExceptionCol.FLAG]


def compare_exceptions(current: pd.DataFrame, previous: pd.DataFrame) -> pd.DataFrame:
    """Each exception of either run with its status: new, persisting or cleared."""
    now = _unique(fr.conform(current, fr.EXCEPTIONS, name="current exceptions"))
    before = _unique(fr.conform(previous, fr.EXCEPTIONS, name="previous exceptions"))
    both = now.merge(before, how="outer", on=_KEY, suffixes=("", "_prev"), indicator=True)
    side = both["_merge"].astype(str).to_numpy()
    status = np.select(
        [side == "left_only", side == "both"],
        [FlagStatus.NEW.value, FlagStatus.PERSISTING.value],
        default=FlagStatus.CLEARED.value,
    )
    detail_prev = f"{ExceptionCol.DETAIL}_prev"
    out = both.assign(
        **fr.columns(
            {
                ExceptionCol.DETAIL: both[ExceptionCol.DETAIL].where(
                    side != "right_only", both[detail_prev]
                ),
                ExceptionCol.STATUS: status,
            }
        )
    )
    return (
        out[list(map(str, fr.COMPARED))]
        .astype(dict(fr.COMPARED))
        .sort_values(_KEY)
        .reset_index(drop=True)
    )


def _unique(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(map(str, fr.EXCEPTIONS))].drop_duplicates(_KEY)
