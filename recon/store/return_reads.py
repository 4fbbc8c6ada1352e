"""What the store holds of returned-funds transactions when a run starts.

Reads only (:class:`~recon.decision.ReturnReads`): which of these answers speaks for a return,
when runs asked about a claim, and which returns to ask about are decided in the core
(:mod:`recon.reconcile.return_evidence`, :mod:`recon.reconcile.return_polls`,
:func:`recon.reconcile.returns.best_evidence`).
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Connection, and_, func, or_, select

from recon.conform import typed
from recon.constants import DEFAULT_ACCOUNT, NotificationKind, TxType
from recon.decision import ReturnReads
from recon.frames import empty
from recon.run_frames import Asks, Confirmations, Notices, Notified, StoredAnswers, Watched
from recon.store.runs import previous_finished_run, run_record
from recon.store.tables import notifications, observations, run_returns, runs
from recon.store.typed_read import frame_of


def load_return_reads(
    conn: Connection, run_id: int | None, *, account: str = DEFAULT_ACCOUNT
) -> ReturnReads:
    """Of ``account``: notifications of returned funds, earlier answers about returns, earlier
    confirmations.

    "Earlier" is any run but ``run_id`` (a resumed run's own answers come from the run itself).
    Which of those answers speaks for a return is the core's
    (:func:`recon.reconcile.return_evidence.evidence`).
    """
    n, o, r = notifications.c, observations.c, run_returns.c
    returned = and_(n.provider_account == account, n.kind == NotificationKind.RETURNED_FUNDS.value)
    notices = frame_of(
        conn,
        select(
            n.transaction_id.label(Notices.RETURN_ID),
            n.original_transaction_id.label(Notices.CLAIMED_ORIGINAL_ID),
            n.amount.label(Notices.CLAIMED_AMOUNT),
        )
        .where(returned)
        .order_by(n.id),
    )
    announced = select(n.transaction_id).where(returned)
    ever_confirmed = select(r.return_id).where(r.provider_account == account, r.confirmed.is_(True))
    about_returns = or_(
        o.type == int(TxType.RETURNED_FUNDS),
        o.transaction_id.in_(announced),
        o.transaction_id.in_(ever_confirmed),
    )
    answers = select(*(o[c] for c in StoredAnswers.names())).where(
        o.provider_account == account, about_returns
    )
    asks = (
        select(o.transaction_id, runs.c.as_of, runs.c.started_at)
        .join_from(observations, runs, runs.c.id == o.run_id)
        .where(o.provider_account == account, o.transaction_id.in_(announced))
    )
    if run_id is not None:
        answers = answers.where(o.run_id != run_id)
        asks = asks.where(o.run_id != run_id)
    confirmed = select(r.return_id, func.max(r.run_id).label("rid")).where(
        r.provider_account == account, r.confirmed.is_(True)
    )
    if run_id is not None:
        confirmed = confirmed.where(r.run_id < run_id)
    sub = confirmed.group_by(r.return_id).subquery()
    confirmations = frame_of(
        conn,
        select(r.return_id, r.original_id.label(Confirmations.CONFIRMED_ORIGINAL_ID)).join_from(
            run_returns,
            sub,
            (r.provider_account == account)
            & (sub.c.return_id == r.return_id)
            & (sub.c.rid == r.run_id),
        ),
    )
    notified = frame_of(
        conn,
        select(
            n.transaction_id.label(Notified.RETURN_ID),
            func.max(n.received_at).label(Notified.LAST_NOTIFIED_AT),
        )
        .where(returned)
        .group_by(n.transaction_id),
    )
    asked = frame_of(conn, asks)
    previous = previous_finished_run(conn, run_id, account=account)
    record = run_record(conn, previous) if previous is not None else None
    return ReturnReads(
        notices=typed(notices, Notices),
        answers=typed(frame_of(conn, answers.order_by(o.id)), StoredAnswers),
        confirmed_ids=frozenset(str(i) for i in conn.scalars(ever_confirmed.distinct())),
        confirmations=typed(confirmations, Confirmations),
        notified=typed(notified, Notified),
        asks=typed(asked, Asks),
        watched=_watched_returns(conn, run_id, account),
        previous_started_at=record.started_at if record is not None else None,
    )


def _watched_returns(conn: Connection, run_id: int | None, account: str) -> pd.DataFrame:
    """Per return an earlier run confirmed: the first such run's ``as_of`` and the amount and
    currency it stored, and the latest ``as_of`` of a run that asked about it (any answer)."""
    r, o = run_returns.c, observations.c
    first = select(r.return_id, func.min(r.run_id).label("rid")).where(
        r.provider_account == account, r.confirmed.is_(True)
    )
    asked = (
        select(o.transaction_id, func.max(runs.c.as_of).label("last"))
        .join_from(observations, runs, runs.c.id == o.run_id)
        .where(o.provider_account == account)
    )
    if run_id is not None:
        first = first.where(r.run_id < run_id)
        asked = asked.where(o.run_id != run_id)
    first_sub = first.group_by(r.return_id).subquery()
    asked_sub = (
        asked.where(o.transaction_id.in_(select(first_sub.c.return_id)))
        .group_by(o.transaction_id)
        .subquery()
    )
    frame = frame_of(
        conn,
        select(
            r.return_id,
            runs.c.as_of.label(Watched.CONFIRMED_AT),
            r.amount_minor.label(Watched.CONFIRMED_AMOUNT_MINOR),
            r.currency.label(Watched.CONFIRMED_CURRENCY),
            asked_sub.c.last.label(Watched.LAST_ASKED_AT),
        )
        .join_from(
            run_returns,
            first_sub,
            (r.provider_account == account)
            & (first_sub.c.rid == r.run_id)
            & (first_sub.c.return_id == r.return_id),
        )
        .join(runs, runs.c.id == r.run_id)
        .join(asked_sub, asked_sub.c.transaction_id == r.return_id, isouter=True)
        .order_by(r.return_id),
    )
    if frame.empty:
        return empty(Watched)
    return typed(frame, Watched)
