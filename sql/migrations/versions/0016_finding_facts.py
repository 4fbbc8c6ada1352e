"""Findings' facts as values: cases and each run's findings keep facts, not sentences.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27

- ``run_exceptions.facts``: each finding's facts as a run reported them (JSON); its words are
  rendered from them. A row written before keeps its ``detail``, shown as it was.
- ``exception_cases.last_facts``: the facts a case was last shown with (JSON).
- ``exception_cases.facts``, what a case is compared by, was text made of the detail: it becomes
  the values it recorded (JSON): a payout's state and returned amount (the ``|state=…|returned=…``
  tail), a group of payouts' members. The rest of the old text was words, compared by nothing now,
  so no case reopens on the upgrade; the words stay in ``detail`` until the case is seen again.

Re-runnable: columns are added when missing, and facts already in JSON are left as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.migrate_steps import add_column_if_missing, drop_column_if_present

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TAIL = re.compile(r"\|state=(?P<state>-?\d*)\|returned=(?P<returned>-?\d*)$")
_MEMBERS = "also settled or in flight: "


def values_of(flag: str, text: str) -> dict[str, object]:
    """The values an old facts text recorded (see the module docstring)."""
    if text.startswith(_MEMBERS):
        listed = text[len(_MEMBERS) :].split(" (", 1)[0]
        return {"members": sorted(m for m in listed.split(";") if m)}
    tail = _TAIL.search(text)
    if tail is None:
        return {}
    state, returned = tail["state"], tail["returned"]
    return {
        "state": int(state) if state else None,
        "returned_minor": int(returned) if returned else None,
    }


def upgrade() -> None:
    add_column_if_missing("run_exceptions", sa.Column("facts", sa.Text))
    add_column_if_missing("exception_cases", sa.Column("last_facts", sa.Text))
    bind = op.get_bind()
    rows = bind.execute(
        sa.text("SELECT exception_id, flag, facts FROM exception_cases WHERE facts IS NOT NULL")
    ).all()
    update = sa.text("UPDATE exception_cases SET facts = :facts WHERE exception_id = :id")
    for exception_id, flag, text in rows:
        if str(text).startswith("{"):
            continue  # values already
        values = json.dumps(values_of(str(flag), str(text)), sort_keys=True)
        bind.execute(update, {"facts": values, "id": exception_id})


def downgrade() -> None:
    drop_column_if_present("exception_cases", "last_facts")
    drop_column_if_present("run_exceptions", "facts")
