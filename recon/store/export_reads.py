"""The whole payout history for ``recon export payouts``, streamed a part at a time.

Each part is a typed frame of at most :data:`recon.store.typed_read.PART_ROWS` payouts, read
through a server-side cursor (``yield_per``) on PostgreSQL and MariaDB, so an export holds one
part at a time whatever the size of the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pandas as pd
from sqlalchemy import Connection, and_, case, or_, select

from recon.constants import DEFAULT_ACCOUNT
from recon.run_frames import ReportPayouts
from recon.store.runs import previous_finished_run
from recon.store.tables import outcome_history, payouts
from recon.store.typed_read import column_parts, typed_frame


def accounts_with_payouts(conn: Connection) -> list[str]:
    """The provider accounts that have payouts in the store, in name order."""
    rows = conn.execute(select(payouts.c.provider_account).distinct()).scalars()
    return sorted(str(a) for a in rows)


def payout_history_parts(
    conn: Connection, *, since: datetime, account: str = DEFAULT_ACCOUNT
) -> Iterator[pd.DataFrame]:
    """Every reconciled payout of ``account`` created at or after ``since`` (when the record has
    no ``created``: imported at or after it), as the latest run left it, by transaction id, a part
    at a time.

    ``prev_outcome`` is what the latest run changed the outcome from (the outcome itself when that
    run did not change it), as in the report's payouts.csv.
    """
    p, h = payouts.c, outcome_history.c
    latest = previous_finished_run(conn, None, include_applied=True, account=account)
    query = (
        select(
            p.transaction_id,
            p.merchant_reference,
            p.amount_minor,
            p.currency,
            p.outcome,
            p.state,
            p.error_code,
            p.returned_minor,
            p.exceptions,
            p.candidate_duplicates,
            p.created,
            p.eta,
            p.bank_account_id,
            p.customer_id,
            case((h.id.is_(None), p.outcome), else_=h.previous_outcome).label("prev_outcome"),
        )
        .join_from(
            payouts,
            outcome_history,
            # `run_id + 0` keeps the lookup on the transaction_id index: SQLite plans without
            # statistics and, offered the run_id index too, searched every row of the latest run
            # for every payout (BENCHMARKS.md: the export never finished).
            and_(
                h.provider_account == p.provider_account,
                h.transaction_id == p.transaction_id,
                (h.run_id + 0) == (latest or 0),
            ),
            isouter=True,
        )
        .where(
            p.provider_account == account,
            p.outcome.is_not(None),
            or_(p.created >= since, and_(p.created.is_(None), p.imported_at >= since)),
        )
        .order_by(p.transaction_id)
    )
    for part in column_parts(conn, query):
        yield typed_frame([part], ReportPayouts, codes=False)
