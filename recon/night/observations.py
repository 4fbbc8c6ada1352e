"""Where a run keeps the provider's answers: the ``Observations`` port and its two adapters.

Polling hands every batch of answers to :meth:`Observations.add`; the run reads them back from the
same object, once, without asking the database (:meth:`Observations.answers`). A nightly run stores
each batch as it arrives (:class:`StoredObservations`, so a run killed half-way keeps them and its
resumption starts from them); a dry run keeps them in memory only (:class:`MemoryObservations`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pandas as pd
from sqlalchemy import Engine

from recon.constants import ANSWERED
from recon.decision import answers_frame
from recon.night.lifecycle import Run
from recon.night.observe import observation_row
from recon.night.poll import Fetched
from recon.run_frames import Answers
from recon.store.observations import insert_observations, run_answers


class Observations(Protocol):
    """The run's answers: added in batches while polling, read once after."""

    def add(self, batch: Sequence[Fetched]) -> None:
        """Keep a batch of answers (called from the poller's writer thread, one at a time)."""
        ...

    def answered(self) -> set[str]:
        """Ids this run already has an answer about (ok or not found): not asked again."""
        ...

    def answers(self) -> pd.DataFrame:
        """Every answer kept, oldest first (:class:`recon.run_frames.Answers`)."""
        ...


class MemoryObservations:
    """Answers kept in memory only: a dry run's, which stores nothing."""

    def __init__(self, run_id: int | None = None, kept: Sequence[tuple[Any, ...]] = ()) -> None:
        self.run_id = run_id
        self._rows: list[tuple[Any, ...]] = list(kept)
        self._frame: tuple[int, pd.DataFrame] | None = None  # the answers of the first n rows

    def add(self, batch: Sequence[Fetched]) -> None:
        self.keep([observation_row(f, self.run_id) for f in batch])

    def keep(self, rows: Sequence[dict[str, Any]]) -> None:
        """Keep observation rows (the columns :func:`answers` returns; ``raw`` is not kept)."""
        self._rows.extend(tuple(row.get(c) for c in Answers) for row in rows)

    def answered(self) -> set[str]:
        status, tid = (
            Answers.names().index(Answers.STATUS),
            Answers.names().index(Answers.TRANSACTION_ID),
        )
        return {row[tid] for row in self._rows if row[status] in ANSWERED}

    def answers(self) -> pd.DataFrame:
        # The night reads them up to three times, mostly with no answer added between: built
        # again only when one was. A shallow copy each time (copy-on-write): a caller's change
        # stays its own.
        if self._frame is None or self._frame[0] != len(self._rows):
            self._frame = (len(self._rows), answers_frame(self._rows))
        return self._frame[1].copy(deep=False)


class StoredObservations(MemoryObservations):
    """Answers stored in the ``observations`` table as they arrive, and kept for the decision.

    Opened for a resumed run, it starts with the answers the run stored before it stopped. Each
    batch is written in the run's fenced transaction: a run that lost its lock stores no more.
    """

    def __init__(self, engine: Engine, run: Run) -> None:
        with engine.connect() as conn:
            kept = run_answers(conn, run.stored_id, tuple(Answers.names()))
        super().__init__(run.stored_id, kept)
        self.run = run

    def add(self, batch: Sequence[Fetched]) -> None:
        rows = [observation_row(f, self.run_id) for f in batch]
        with self.run.transaction() as conn:
            insert_observations(conn, rows, account=self.run.account)
        self.keep(rows)
