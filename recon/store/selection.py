"""Which payouts a run asks the provider about (no pandas: this runs before the first request)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, or_, select

from recon.constants import FINAL_OUTCOMES, RECHECK_OUTCOMES
from recon.store.tables import payouts

_FINAL = sorted(o.value for o in FINAL_OUTCOMES)
_RECHECK = sorted(o.value for o in RECHECK_OUTCOMES)


def select_poll_ids(conn: Connection, *, as_of: datetime, recheck_days: float) -> list[str]:
    """Payouts a run must ask about: not final, and failed/aborted/unknown only inside the window.

    The window counts from ``outcome_since``: when a run first saw the payout so.
    """
    cutoff = as_of - timedelta(days=recheck_days)
    o = payouts.c
    query = select(o.transaction_id).where(
        or_(
            o.outcome.is_(None),
            and_(
                o.outcome.not_in(_FINAL),
                or_(o.outcome.not_in(_RECHECK), o.outcome_since >= cutoff),
            ),
        )
    )
    return list(conn.scalars(query))
