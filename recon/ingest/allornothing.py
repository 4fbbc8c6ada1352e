"""All or nothing: the one strategy of every import (payout CSV, payout query, notification file).

An importer validates its input batch by batch inside ONE write transaction and reports each bad
line or row to :class:`Problems` instead of raising. It writes only while no problem has been found;
when the input ends, any problem raises :class:`~recon.errors.InputError`, which rolls the
transaction back, so a bad input, a database error or a killed process leaves the store exactly as
it was. Every problem is counted and the first :data:`MAX_PROBLEMS_SHOWN` are listed.

Every entry point has one shape: ``import_x(engine, input, *, options) -> result``, with recon's
own :class:`~sqlalchemy.Engine` first (the caller builds and disposes of it); each brings the schema
up to date before it reads its input.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.errors import InputError, StoreError
from recon.store.db import describe_db_error, write_transaction
from recon.words import counted

MAX_PROBLEMS_SHOWN = 50


class Problems:
    """The problems of one input: every one counted, the first ``MAX_PROBLEMS_SHOWN`` kept."""

    def __init__(self, source: str, *, outcome: str = "nothing was imported") -> None:
        self.source = source
        self.outcome = outcome  # the refusal's words: what was done, e.g. ``nothing was created``
        self.shown: list[str] = []
        self.count = 0

    def add(self, where: str, messages: Iterable[str]) -> None:
        """Record ``messages`` about one place (``line 3``, ``row 7``)."""
        for message in messages:
            self.count += 1
            if len(self.shown) < MAX_PROBLEMS_SHOWN:
                self.shown.append(f"{where}: {message}")

    def __bool__(self) -> bool:
        return self.count > 0

    def error(self) -> InputError:
        """The refusal: how many problems, then the listed ones and how many were left out."""
        hidden = self.count - len(self.shown)
        more = [f"... and {counted(hidden, 'more problem')}"] if hidden else []
        return InputError(
            f"{self.source}: {self.outcome}, {counted(self.count, 'problem')}:",
            self.shown + more,
        )


@contextmanager
def all_or_nothing(engine: Engine, source: str) -> Iterator[tuple[Connection, Problems]]:
    """One write transaction for a whole input, and the collector of its problems.

    Leaving the block with a problem recorded raises the refusal and rolls everything back; a
    database error becomes :class:`~recon.errors.StoreError` (also rolled back).
    """
    problems = Problems(source)
    try:
        with write_transaction(engine) as conn:
            yield conn, problems
            if problems:
                raise problems.error()
    except SQLAlchemyError as exc:
        raise StoreError(
            f"{source}: nothing was imported, the database failed: {describe_db_error(exc)}"
        ) from None
