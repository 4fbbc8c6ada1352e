"""A month's fees from the store: per currency, the payouts created in it, their fees charged and
agreed, and the fee findings still open on them. Plain reads; the words are recon.ops.fees'."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, case, func, select

from recon.constants import DEFAULT_ACCOUNT, SETTLED_OUTCOMES
from recon.store.tables import exception_cases, payouts

FEE_FLAGS = ("fee_mismatch", "fee_on_unpaid", "fee_missing")


@dataclass(frozen=True)
class MonthFees:
    """One currency's figures over a month (amounts in minor units)."""

    currency: str
    payouts: int
    settled: int
    settled_minor: int
    charged_minor: int
    expected_minor: int | None  # None: no entry prices any of them
    difference_minor: int | None  # charged less agreed over the priced ones (no fee: 0 charged)
    findings: int


def month_fees(
    conn: Connection, start: datetime, end: datetime, *, account: str = DEFAULT_ACCOUNT
) -> list[MonthFees]:
    """Per currency, the payouts of ``account`` created from ``start`` up to ``end`` (aware): how
    many, how many settled and for how much, the fees charged and agreed, the difference over the
    payouts an entry prices, and the open fee findings on them."""
    p, c = payouts.c, exception_cases.c
    settled = p.outcome.in_([o.value for o in SETTLED_OUTCOMES])
    priced = p.fee_expected_minor.is_not(None)
    in_month = (p.provider_account == account) & (p.created >= start) & (p.created < end)
    totals = (
        select(
            p.currency,
            func.count(),
            func.sum(case((settled, 1), else_=0)),
            func.sum(case((settled, p.amount_minor), else_=0)),
            func.sum(func.coalesce(p.fee_minor, 0)),
            func.sum(func.coalesce(p.fee_expected_minor, 0)),
            func.count(p.fee_expected_minor),
            func.sum(
                case(
                    (priced, func.coalesce(p.fee_minor, 0) - p.fee_expected_minor),
                    else_=0,
                )
            ),
        )
        .where(in_month)
        .group_by(p.currency)
        .order_by(p.currency)
    )
    open_findings: dict[str, int] = dict(
        conn.execute(
            select(p.currency, func.count())
            .join_from(
                exception_cases,
                payouts,
                (p.provider_account == c.provider_account) & (p.transaction_id == c.item_id),
            )
            .where(
                in_month, c.item_kind == "payout", c.flag.in_(FEE_FLAGS), c.ended_run_id.is_(None)
            )
            .group_by(p.currency)
        ).all()
    )
    return [
        MonthFees(
            currency=str(currency),
            payouts=int(count),
            settled=int(n_settled or 0),
            settled_minor=int(amount or 0),
            charged_minor=int(charged or 0),
            expected_minor=int(expected or 0) if n_priced else None,
            difference_minor=int(difference or 0) if n_priced else None,
            findings=int(open_findings.get(currency, 0)),
        )
        for currency, count, n_settled, amount, charged, expected, n_priced, difference in (
            conn.execute(totals)
        )
    ]
