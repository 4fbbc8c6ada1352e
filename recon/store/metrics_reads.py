"""What the metrics file reads from the store: payouts by currency and outcome, findings that
stand by exception (how many, since when), and the last complete run."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, select

from recon.constants import DEFAULT_ACCOUNT
from recon.store.tables import exception_cases, payouts

# The outcome label of a payout imported that no run has asked about yet: not an outcome (a payout
# has one only after a run), and not "unreconciled", which reads as a mismatch found.
NOT_RECONCILED_YET = "not_reconciled_yet"


def payouts_by_currency_and_outcome(
    conn: Connection, *, account: str = DEFAULT_ACCOUNT
) -> dict[tuple[str, str], int]:
    """Payouts of ``account`` per (currency, outcome); a payout no run has seen yet is counted under
    :data:`NOT_RECONCILED_YET`."""
    p = payouts.c
    rows = conn.execute(
        select(p.currency, p.outcome, func.count())
        .where(p.provider_account == account)
        .group_by(p.currency, p.outcome)
    ).all()
    found: dict[tuple[str, str], int] = {}
    for currency, outcome, n in rows:
        key = (str(currency).strip(), str(outcome or NOT_RECONCILED_YET))
        found[key] = found.get(key, 0) + int(n)
    return found


def standing_findings(
    conn: Connection, *, account: str = DEFAULT_ACCOUNT
) -> tuple[dict[str, int], dict[str, datetime]]:
    """Findings of ``account`` that stand (not ended by a run), per exception: how many, and the
    oldest's opening."""
    c = exception_cases.c
    rows = conn.execute(
        select(c.flag, func.count(), func.min(c.opened_at))
        .where(c.provider_account == account, c.ended_run_id.is_(None))
        .group_by(c.flag)
    ).all()
    return {str(f): int(n) for f, n, _ in rows}, {str(f): when for f, _, when in rows}
