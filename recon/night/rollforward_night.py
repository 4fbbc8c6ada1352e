"""The night's roll-forward (issue 26): measure every line, check it, store it, open its breaks.

Runs inside the run's apply transaction, once the decision is written: each line is measured from
the rows (:mod:`recon.store.rollforward_reads`), the identities are the core's
(:mod:`recon.reconcile.rollforward`). The previous run's own movement lines are measured again
too, so a row of that run edited or removed since shows. A line that does not close is the
finding ``rollforward_break``, a case like any other: it stays until a person resolves it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import pandas as pd
from sqlalchemy import Connection

from recon.counts import RunCounts
from recon.reconcile import rollforward as rf
from recon.reconcile.finding import facts_text
from recon.rollforward_lines import FINDINGS, Line, frame
from recon.store.rollforward_cases import live_break_ids, open_break_cases
from recon.store.rollforward_reads import (
    Mark,
    confirmed_returns,
    finding_movements,
    findings_now,
    last_action,
    payout_pairs,
    payouts_now,
    returns_now,
    stored_lines,
    stored_mark,
    write_lines,
)
from recon.store.runs import previous_finished_run


@dataclass(frozen=True)
class Rolled:
    """The night's lines (as stored), the breaks found, and how many of them opened a case."""

    lines: pd.DataFrame
    breaks: list[rf.Break]
    opened: int


def movements(conn: Connection, after_run: int | None, run_id: int, mark: Mark) -> pd.DataFrame:
    """Every line but ``previous`` and ``now`` of run ``run_id``, from its rows."""
    return pd.concat(
        [
            rf.payout_movements(payout_pairs(conn, after_run or 0, run_id)),
            rf.return_movements(
                confirmed_returns(conn, after_run), confirmed_returns(conn, run_id)
            ),
            finding_movements(conn, after_run or 0, run_id, mark),
        ],
        ignore_index=True,
    )


def measure(conn: Connection, run_id: int, mark: Mark) -> pd.DataFrame:
    """Run ``run_id``'s lines, each measured on its own; ``previous`` is the previous run's stored
    ``now`` (or, for a store whose latest finished run stored none, :func:`rf.opening`)."""
    moved = movements(conn, mark.previous_run_id, run_id, mark)
    now = pd.concat(
        [payouts_now(conn), returns_now(conn, run_id), findings_now(conn)], ignore_index=True
    )
    if mark.previous_run_id is None:
        previous = frame([])
    elif mark.started:
        previous = rf.opening(pd.concat([moved, now], ignore_index=True))
    else:
        was = stored_lines(conn, mark.previous_run_id)
        previous = was[was["line"] == Line.NOW.value].assign(line=Line.PREVIOUS.value)
    return rf.complete(pd.concat([previous, moved, now], ignore_index=True))


def roll_forward(conn: Connection, *, run_id: int, as_of: datetime) -> Rolled:
    """Measure, check and store run ``run_id``'s roll-forward; open a case per new break."""
    previous = previous_finished_run(conn, run_id)
    was = stored_mark(conn, previous) if previous is not None else None
    through = last_action(conn)
    started = previous is not None and was is None
    after = was.actions_through if was is not None else through if started else 0
    mark = Mark(previous, started, after, through)
    lines = measure(conn, run_id, mark)
    found = rf.breaks(lines)
    if previous is not None and was is not None:
        again = movements(conn, was.previous_run_id, previous, was)
        found += rf.remeasured(stored_lines(conn, previous), again, run_id=previous)
    fresh = rf.to_open(found, live_break_ids(conn, rf.ROLLFORWARD_BREAK.name))
    if fresh:
        items = [(b.item_id, facts_text(b.facts())) for b in fresh]
        open_break_cases(
            conn, run_id=run_id, as_of=as_of, flag=rf.ROLLFORWARD_BREAK.name, items=items
        )
        # The findings are measured again: tonight's breaks are findings opened tonight.
        again = measure(conn, run_id, mark)
        lines = pd.concat(
            [lines[lines["outcome"] != FINDINGS], again[again["outcome"] == FINDINGS]],
            ignore_index=True,
        )
    write_lines(conn, run_id, lines, mark)
    return Rolled(lines=lines, breaks=found, opened=len(fresh))


def with_breaks(counts: RunCounts, rolled: Rolled) -> RunCounts:
    """``counts`` with tonight's breaks among the flags (the run then exits 3) and the cases they
    opened among the exceptions."""
    if not rolled.breaks:
        return counts
    flags = {**counts.flags, rf.ROLLFORWARD_BREAK.name: len(rolled.breaks)}
    return replace(counts, flags=flags, exceptions=counts.exceptions + rolled.opened)
