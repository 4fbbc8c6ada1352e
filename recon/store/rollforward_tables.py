"""The roll-forward's tables, in the schema's one metadata
(:mod:`recon.store.tables` lists them with the others).

``rollforward_lines``: each finished run's lines, one row per currency, outcome and line, as the
run stored them (the next run's ``previous``). ``rollforward_runs``: per run, which run its
roll-forward started from and the last case action it counted (the next run counts the actions
after it).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, PrimaryKeyConstraint, String, Table

from recon.store.metadata import MYSQL_OPTS, metadata
from recon.store.types import SerialKey

rollforward_lines = Table(
    "rollforward_lines",
    metadata,
    Column("run_id", SerialKey, ForeignKey("runs.id"), nullable=False),
    Column("currency", String(8), nullable=False),  # "" for the findings
    Column("outcome", String(32), nullable=False),
    Column("line", String(16), nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("amount_minor", BigInteger),  # NULL for the findings (counted, not summed)
    PrimaryKeyConstraint("run_id", "currency", "outcome", "line"),
    **MYSQL_OPTS,
)

rollforward_runs = Table(
    "rollforward_runs",
    metadata,
    Column("run_id", SerialKey, ForeignKey("runs.id"), primary_key=True),
    Column("previous_run_id", SerialKey, ForeignKey("runs.id")),  # NULL: the store's first run
    Column("started", Boolean, nullable=False),  # started from a run that stored no lines
    # The case actions it counted: exception_actions.id after ``actions_after``, to ``through``.
    Column("actions_after", BigInteger, nullable=False),
    Column("actions_through", BigInteger, nullable=False),
    **MYSQL_OPTS,
)
