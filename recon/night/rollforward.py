"""The roll-forward's reads of a night, before its decision: each line measured from the rows.

Where tonight's roll-forward starts is the core's (:func:`recon.reconcile.rollforward.mark_of`);
the store reads the previous run's lines and its window again, tonight's window and position as
they stand before the decision, and the records the payouts' latest history rows kept where they
differ from the payouts'. The core adds the rows the decision writes
(:func:`recon.reconcile.rollforward.measure`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection

from recon.constants import DEFAULT_ACCOUNT
from recon.decision import RollForwardInputs
from recon.reconcile.night_lines import mark_of
from recon.rollforward_lines import frame
from recon.store.rollforward_reads import (
    last_action,
    latest_records,
    payouts_now,
    stored_lines,
    stored_mark,
    window,
)


def read_rollforward(
    conn: Connection,
    *,
    run_id: int | None,
    previous: int | None,
    known: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
) -> RollForwardInputs:
    """What run ``run_id``'s roll-forward measures (``previous``: the previous finished run;
    ``known``: the payouts read for the decision that a run reconciled before)."""
    was = stored_mark(conn, previous) if previous is not None else None
    mark = mark_of(previous, was, last_action(conn))
    return RollForwardInputs(
        mark=mark,
        previous=stored_lines(conn, previous) if previous is not None else frame([]),
        tonight=window(conn, previous, run_id, mark, account=account),
        again=(
            window(conn, was.previous_run_id, previous, was, account=account)
            if was is not None
            else None
        ),
        payouts_now=payouts_now(conn, account=account),
        records=latest_records(conn, known, account=account),
    )
