"""A run's exceptions as stored (the next run compares with them; reports show them)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Connection, select

from recon import frames as fr
from recon.store.tables import run_exceptions
from recon.store.typed_read import frame_of


def run_exceptions_frame(conn: Connection, run_id: int | None) -> pd.DataFrame:
    """Every exception run ``run_id`` recorded, with its status (empty for no run)."""
    if run_id is None:
        return fr.empty(fr.COMPARED)
    e = run_exceptions.c
    query = select(e.item_id, e.item_kind, e.flag, e.detail, e.status).where(e.run_id == run_id)
    return fr.conform(frame_of(conn, query), fr.COMPARED, name="stored exceptions")
