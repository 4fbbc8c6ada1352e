"""A run's exceptions as stored (the next run compares with them; reports show them)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Connection, select

from recon import frames as fr
from recon.conform import conform
from recon.reconcile.finding import read_facts
from recon.run_frames import CaseReport
from recon.store.tables import run_exceptions
from recon.store.typed_read import frame_of


def run_exceptions_frame(conn: Connection, run_id: int | None) -> pd.DataFrame:
    """Every exception run ``run_id`` recorded, with its status and its case as the run reported
    it (:class:`recon.frames.Compared` plus :class:`~recon.run_frames.CaseReport`)."""
    e = run_exceptions.c
    columns = [*fr.Compared.names(), *CaseReport.names()]
    if run_id is None:
        frame = pd.DataFrame(columns=columns)
    else:
        frame = frame_of(conn, select(*(e[c] for c in columns)).where(e.run_id == run_id))
    return typed_exceptions(frame)


def typed_exceptions(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's exceptions (:class:`recon.frames.Compared` plus
    :class:`~recon.run_frames.CaseReport`, the facts as stored text) typed as they are read back
    from the store."""
    facts = pd.Series([read_facts(f) for f in frame["facts"]], index=frame.index, dtype=object)
    frame = frame.assign(facts=facts)
    compared = conform(frame[fr.Compared.names()], fr.Compared, name="stored exceptions")
    cases = {
        c: pd.to_datetime(frame[c], utc=True) if dtype == fr.TIME else frame[c].astype(dtype)
        for c, dtype in CaseReport.dtypes().items()
    }
    # set_axis, not to_numpy: an all-empty time column would lose its UTC zone in an ndarray.
    return compared.assign(**{c: v.set_axis(compared.index) for c, v in cases.items()})
