"""Exceptions people can work: cases with a stable id, their states and an append-only audit.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

``exception_cases`` holds one row per finding from the run that first saw it; ``exception_actions``
every action on it. ``run_exceptions`` keeps, per run, the case as that run reported it. recon's
own clearing was stored as status ``resolved``; it is ``cleared`` now (``resolved`` is a person's).
The open exceptions of the latest finished run become open cases, so ids start from there.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from recon.store.migrate_steps import (
    add_column_if_missing,
    create_index_if_missing,
    create_table_if_missing,
    drop_column_if_present,
    drop_table_if_present,
)
from recon.store.types import Id, SerialKey, UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}


def upgrade() -> None:
    create_table_if_missing(
        "exception_cases",
        sa.Column("exception_id", sa.String(32), nullable=False),
        sa.Column("item_kind", sa.String(16), nullable=False),
        sa.Column("item_id", Id, nullable=False),
        sa.Column("flag", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("facts", sa.Text),
        sa.Column("detail", sa.Text),
        sa.Column("opened_run_id", SerialKey, nullable=False),
        sa.Column("opened_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_run_id", SerialKey, nullable=False),
        sa.Column("ended_run_id", SerialKey),
        sa.Column("owner", sa.String(255)),
        sa.Column("note", sa.Text),
        sa.Column("until", UTCDateTime),
        sa.Column("state_at", UTCDateTime),
        sa.Column("reported_run_id", SerialKey),
        sa.Column("previous_resolution", sa.Text),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
        sa.PrimaryKeyConstraint("exception_id", name="pk_exception_cases"),
        sa.ForeignKeyConstraint(
            ["opened_run_id"], ["runs.id"], name="fk_exception_cases_opened_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["last_seen_run_id"], ["runs.id"], name="fk_exception_cases_last_seen_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["ended_run_id"], ["runs.id"], name="fk_exception_cases_ended_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["reported_run_id"], ["runs.id"], name="fk_exception_cases_reported_run_id_runs"
        ),
        **_MYSQL,
    )
    create_index_if_missing(
        "ix_exception_cases_item_kind_item_id_flag",
        "exception_cases",
        ["item_kind", "item_id", "flag"],
    )
    create_index_if_missing("ix_exception_cases_ended_run_id", "exception_cases", ["ended_run_id"])
    create_table_if_missing(
        "exception_actions",
        sa.Column("id", SerialKey, autoincrement=True, nullable=False),
        sa.Column("exception_id", sa.String(32), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("by", sa.String(255), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("previous_state", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("until", UTCDateTime),
        sa.Column("source", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_exception_actions"),
        sa.ForeignKeyConstraint(
            ["exception_id"],
            ["exception_cases.exception_id"],
            name="fk_exception_actions_exception_id_exception_cases",
        ),
        **_MYSQL,
    )
    create_index_if_missing("ix_exception_actions_exception_id", "exception_actions", ["exception_id"])
    for column in (
        sa.Column("exception_id", sa.String(32)),
        sa.Column("owner", sa.String(255)),
        sa.Column("note", sa.Text),
        sa.Column("until", UTCDateTime),
        sa.Column("opened_at", UTCDateTime),
        sa.Column("previous_resolution", sa.Text),
    ):
        add_column_if_missing("run_exceptions", column)
    op.execute("UPDATE run_exceptions SET status = 'cleared' WHERE status = 'resolved'")
    _open_cases_of_the_latest_run()


def _open_cases_of_the_latest_run() -> None:
    """The latest finished run's open exceptions become open cases ``E<run>-<n>``.

    Run again (after an upgrade killed part-way), it inserts only the cases not there yet and
    sets the same values again: the numbering is the same, as nothing this step changes decides
    it.
    """
    bind = op.get_bind()
    run = bind.execute(
        sa.text(
            "SELECT id FROM runs WHERE status IN ('complete', 'incomplete')"
            " ORDER BY id DESC LIMIT 1"
        )
    ).first()
    if run is None:
        return
    run_id = int(run[0])
    rows = bind.execute(
        sa.text(
            "SELECT item_kind, item_id, flag, detail FROM run_exceptions"
            " WHERE run_id = :run AND status IN ('new', 'persisting')"
            " ORDER BY item_kind, item_id, flag"
        ),
        {"run": run_id},
    ).all()
    made = set(
        bind.execute(
            sa.text("SELECT exception_id FROM exception_cases WHERE opened_run_id = :run"),
            {"run": run_id},
        ).scalars()
    )
    for n, (kind, item, flag, detail) in enumerate(rows, start=1):
        values = {"eid": f"E{run_id}-{n}", "run": run_id, "kind": kind, "item": item,
                  "flag": flag, "detail": detail}  # fmt: skip
        if values["eid"] not in made:
            bind.execute(
                sa.text(
                    "INSERT INTO exception_cases (exception_id, item_kind, item_id, flag, state,"
                    " detail, opened_run_id, opened_at, last_seen_run_id, version)"
                    " SELECT :eid, :kind, :item, :flag, 'open', :detail, id, as_of, id, 1"
                    " FROM runs WHERE id = :run"
                ),
                values,
            )
        bind.execute(  # sets the same values when run again
            sa.text(
                "UPDATE run_exceptions SET exception_id = :eid,"
                " opened_at = (SELECT as_of FROM runs WHERE id = :run)"
                " WHERE run_id = :run AND item_kind = :kind AND item_id = :item AND flag = :flag"
            ),
            values,
        )


def downgrade() -> None:
    op.execute("UPDATE run_exceptions SET status = 'resolved' WHERE status = 'cleared'")
    for column in ("previous_resolution", "opened_at", "until", "note", "owner", "exception_id"):
        drop_column_if_present("run_exceptions", column)
    drop_table_if_present("exception_actions")  # its indexes go with it
    drop_table_if_present("exception_cases")
