"""A night reads the payouts it decides, by index, not the history.

On SQLite, PostgreSQL and MariaDB: which stored payouts :func:`load_payouts` reads for a scope, and
which answers about returns :func:`recon.store.return_reads.load_return_reads` reads.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
from sqlalchemy import Engine, insert

from recon.decision import KnownReturns
from recon.frames import empty
from recon.reconcile.scope import payout_scope, related_reads
from recon.reconcile.watch import WatchParams
from recon.run_frames import Cases
from recon.store.db import write_transaction
from recon.store.run_inputs import load_payouts, load_related
from recon.store.tables import payouts

NO_CASES = empty(Cases)
AS_OF = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
WATCH = WatchParams(
    schedule_days=(1, 6, 30), return_schedule_days=(6, 12), watch_days=90, return_watch_days=30
)
NOTHING = pd.DataFrame()
RETURNS = KnownReturns(notices=NOTHING, earlier=NOTHING, confirmations=NOTHING)
NO_CALLBACKS = pd.DataFrame({"transaction_id": pd.Series(dtype="string")})


def read_payouts(conn: Any, scope: Any, callbacks: pd.DataFrame) -> pd.DataFrame:
    """What a night reads: the scope, then the payouts the core names for it (24 h window)."""
    first = load_payouts(conn, scope)
    return load_related(conn, first, related_reads(first, callbacks, window=timedelta(hours=24)))


def _payout(tid: str, outcome: str, days_ago: float, *, next_check: bool = False) -> dict[str, Any]:
    since = AS_OF - timedelta(days=days_ago)
    return {
        "transaction_id": tid,
        "merchant_reference": f"ref-{tid}",
        "amount_minor": 1000,
        "currency": "EUR",
        "customer_id": f"c-{tid}",
        "imported_at": since - timedelta(hours=1),
        "outcome": outcome,
        "state": 6 if outcome == "settled" else 3,
        "returned_minor": 0,
        "exceptions": "",
        "candidate_duplicates": "",
        "outcome_since": since,
        "ever_failed": False,
        "created": since - timedelta(hours=2),
        "next_check_at": since + timedelta(days=40) if next_check else None,
    }


def test_an_unscheduled_payout_is_read_only_inside_its_outcomes_watch_window(
    engine: Engine,
) -> None:
    """Settled payouts past the 30-day return watch have no next check by rule and are not read
    (most of a year's history); a failed one of the same age, still inside its 90 days, is."""
    with write_transaction(engine) as conn:
        conn.execute(
            insert(payouts),
            [
                _payout("settled-20", "settled", 20),
                _payout("settled-45", "settled", 45),
                _payout("settled-200", "settled", 200),
                _payout("failed-45", "failed", 45),
                _payout("failed-120", "failed", 120),
                _payout("failed-45-due", "failed", 45, next_check=True),
            ],
        )
    returns = KnownReturns(notices=NOTHING, earlier=NOTHING, confirmations=NOTHING)
    scope = payout_scope(
        poll_ids=[], returns=returns, answers=NOTHING, cases=NO_CASES, as_of=AS_OF, watch=WATCH
    )
    callbacks = pd.DataFrame({"transaction_id": pd.Series(dtype="string")})
    with engine.connect() as conn:
        read = read_payouts(conn, scope, callbacks)
    assert sorted(read["transaction_id"]) == ["failed-45", "settled-20"]


def test_the_candidate_duplicates_read_holds_only_later_or_undated_payouts_of_the_party(
    engine: Engine,
) -> None:
    """A payout seen failed names its customer and amount; of that pair's other payouts only
    those created after it, or without ``created``, can be its candidate duplicates and are read
    (with a same-amount customer paid every week, a year holds 52 of the pair)."""
    failed_at = AS_OF - timedelta(days=10)
    rows = []
    for tid, created in (
        ("late", failed_at),
        ("before", failed_at - timedelta(days=7)),
        ("same-time", failed_at),
        ("after", failed_at + timedelta(days=7)),
        ("undated", None),
    ):
        row = _payout(tid, "settled", 3, next_check=True)
        rows.append(row | {"customer_id": "weekly", "created": created})
    rows[0] |= {"outcome": "failed", "state": 3, "ever_failed": True}
    rows.append(_payout("other-amount", "settled", 3, next_check=True) | {"customer_id": "weekly"})
    rows[-1] |= {"amount_minor": 2000, "created": failed_at + timedelta(days=1)}
    with write_transaction(engine) as conn:
        conn.execute(insert(payouts), rows)
    returns = KnownReturns(notices=NOTHING, earlier=NOTHING, confirmations=NOTHING)
    scope = payout_scope(
        poll_ids=["late"],
        returns=returns,
        answers=NOTHING,
        cases=NO_CASES,
        as_of=AS_OF,
        watch=WATCH,
    )
    callbacks = pd.DataFrame({"transaction_id": pd.Series(dtype="string")})
    with engine.connect() as conn:
        read = read_payouts(conn, scope, callbacks)
    # same-time is read as a possible duplicate's member (the same customer and amount within
    # the window), not as a candidate of the late settlement.
    assert sorted(read["transaction_id"]) == ["after", "late", "same-time", "undated"]


def test_a_polled_payout_reads_the_members_of_its_possible_duplicate_group(
    engine: Engine,
) -> None:
    """Old settled payouts of the same merchant_reference (any time), and of the same account and
    amount created within the window, are read; the same account's others are not."""
    polled_at = AS_OF - timedelta(hours=2)
    near, far = polled_at - timedelta(hours=23), polled_at - timedelta(hours=25)
    rows = [
        _payout("new", "settled", 0) | {"bank_account_id": "acct", "created": polled_at},
        _payout("same-ref", "settled", 40, next_check=True)
        | {"merchant_reference": "ref-new", "bank_account_id": None},
        _payout("acct-near", "settled", 1, next_check=True)
        | {"bank_account_id": "acct", "created": near},
        _payout("acct-far", "settled", 3, next_check=True)
        | {"bank_account_id": "acct", "created": far},
        _payout("acct-other-amount", "settled", 1, next_check=True)
        | {"bank_account_id": "acct", "amount_minor": 999, "created": polled_at},
        _payout("acct-undated", "settled", 1, next_check=True)
        | {"bank_account_id": "acct", "created": None},
    ]
    with write_transaction(engine) as conn:
        conn.execute(insert(payouts), rows)
    scope = payout_scope(
        poll_ids=["new"], returns=RETURNS, answers=NOTHING, cases=NO_CASES, as_of=AS_OF, watch=WATCH
    )
    with engine.connect() as conn:
        read = read_payouts(conn, scope, NO_CALLBACKS)
    assert sorted(read["transaction_id"]) == ["acct-near", "new", "same-ref"]
