"""Findings stay open until a person or the facts close them.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

Before, a finding recon stopped looking at (an unconfirmed claim a run had reported once, an
unreadable notification) ended quietly: its case got an ``ended_run_id`` while still ``open``,
``acknowledged`` or ``snoozed``. Such a case is live again, so the next run lists it until a
person resolves it. Where a later case of the same finding is live already, that one carries it
and the ended one stays ended; of several ended ones, the latest comes back.

A store whose findings cannot be carried over (two live cases of one finding) is left as it was:
the migration stops before changing anything, naming the finding. Only rows change here (no
schema), so re-running it after a kill finds nothing left to do.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.errors import StoreError

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE_STATES = ("open", "acknowledged", "snoozed")


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT exception_id, item_kind, item_id, flag, state, ended_run_id, opened_run_id"
            " FROM exception_cases ORDER BY opened_run_id, exception_id"
        )
    ).all()
    live: dict[tuple[str, str, str], str] = {}
    for eid, kind, item, flag, _state, ended, _opened in rows:
        if ended is None:
            key = (str(kind), str(item), str(flag))
            if key in live:
                raise StoreError(
                    f"cannot carry the findings over: {flag} on {kind} {item} has two live cases"
                    f" ({live[key]} and {eid}); resolve one with `recon exceptions resolve` on a"
                    " copy made before this upgrade, or end one by hand, then upgrade again."
                    " Nothing was changed."
                )
            live[key] = str(eid)
    back: dict[tuple[str, str, str], str] = {}
    for eid, kind, item, flag, state, ended, _opened in rows:  # oldest first: the latest wins
        key = (str(kind), str(item), str(flag))
        if ended is not None and state in _LIVE_STATES and key not in live:
            back[key] = str(eid)
    for eid in back.values():
        bind.execute(
            sa.text("UPDATE exception_cases SET ended_run_id = NULL WHERE exception_id = :eid"),
            {"eid": eid},
        )


def downgrade() -> None:
    """Nothing to undo: the cases brought back are ordinary live cases."""
