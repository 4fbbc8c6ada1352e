"""The roll-forward's reads and writes: each line measured on its own, from the rows.

Every query is an aggregate the database answers from an index, bounded by the runs it is about:
the history rows of a run window (``outcome_history(run_id)``, each paired with the row before it
by ``outcome_history(transaction_id)``), a run's returns (its primary key), the cases opened or
ended in a run window and the case actions after a mark (primary keys and indexes); the position
of every stored payout is ``payouts(currency, outcome, amount_minor)`` read from that index alone.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    case,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
)

from recon.constants import DEFAULT_ACCOUNT, LIVE_CASE_STATES, CaseState
from recon.decision import Window
from recon.frames import PayoutsIn
from recon.rollforward_lines import FEES, FINDINGS, PAIR_KEYS, RETURNS, Line, Mark, frame, ordered
from recon.store._batch import chunks, one_of
from recon.store.rollforward_tables import rollforward_lines, rollforward_runs
from recon.store.tables import (
    exception_actions,
    exception_cases,
    outcome_history,
    payouts,
    record_changes,
    run_returns,
)
from recon.store.typed_read import frame_of

_LIVE = sorted(s.value for s in LIVE_CASE_STATES)

_P = PayoutsIn


def window(
    conn: Connection,
    after_run: int | None,
    through_run: int | None,
    mark: Mark,
    *,
    account: str = DEFAULT_ACCOUNT,
) -> Window:
    """The window of ``account``'s runs after ``after_run`` through ``through_run`` (None: every
    later run) as its rows stand: history rows paired, confirmed returns before and at its end,
    findings."""
    return Window(
        pairs=payout_pairs(conn, after_run or 0, through_run, account=account),
        returns_before=confirmed_returns(conn, after_run),
        returns_after=confirmed_returns(conn, through_run),
        findings=finding_movements(conn, after_run or 0, through_run, mark, account=account),
    )


def payout_pairs(
    conn: Connection, after_run: int, through_run: int | None, *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """History rows of runs after ``after_run`` up to ``through_run`` (None: every later run), each
    with the payout's row before it (its record as that run saw it), counted and summed per
    before/after currency and outcome; ``same``: the two records agree on amount and currency;
    ``imported``: an import changed the amount or currency while the row's run could see it (a
    ``record_changes`` row still live then)."""
    h, g, g2 = outcome_history.alias("h"), outcome_history.alias("g"), outcome_history.alias("g2")
    rc = record_changes.c
    p = payouts.c
    # Each history row of the runs, its payout's record, and the id of the row before it; then
    # that row joined by id (a plain join: the linter of some dialects reads a join on a
    # correlated subquery as a cartesian product).
    paired = (
        select(
            h.c.transaction_id,
            h.c.run_id,
            h.c.previous_outcome,
            h.c.outcome,
            # A row from before 0012 has no record of its own: the payout's stands in for it.
            func.coalesce(h.c.currency, p.currency).label("currency"),
            func.coalesce(h.c.amount_minor, p.amount_minor).label("amount_minor"),
            h.c.fee_minor,
            select(func.max(g2.c.id))
            .where(
                g2.c.provider_account == h.c.provider_account,
                g2.c.transaction_id == h.c.transaction_id,
                g2.c.id < h.c.id,
            )
            .scalar_subquery()
            .label("before_id"),
        )
        .select_from(
            h.join(
                payouts,
                and_(
                    p.provider_account == h.c.provider_account,
                    p.transaction_id == h.c.transaction_id,
                ),
            )
        )
        .where(
            h.c.provider_account == account,
            h.c.run_id > after_run,
            *_up_to(h.c.run_id, through_run),
        )
        .subquery("paired")
    )
    ac, aa = paired.c.currency, paired.c.amount_minor
    bc = func.coalesce(g.c.currency, ac)
    ba = func.coalesce(g.c.amount_minor, aa)
    same = case((and_(bc == ac, ba == aa), 1), else_=0)
    imported = case(
        (
            exists().where(
                rc.provider_account == account,
                rc.transaction_id == paired.c.transaction_id,
                rc.field.in_(["amount", "currency"]),
                or_(rc.closed_run_id.is_(None), rc.closed_run_id >= paired.c.run_id),
            ),
            1,
        ),
        else_=0,
    )
    rows = (
        select(
            bc.label("before_currency"),
            paired.c.previous_outcome.label("before_outcome"),
            ac.label("after_currency"),
            paired.c.outcome.label("after_outcome"),
            same.label("same"),
            imported.label("imported"),
            ba.label("before_amount"),
            aa.label("after_amount"),
            g.c.fee_minor.label("before_fee"),
            paired.c.fee_minor.label("after_fee"),
        )
        .select_from(paired.outerjoin(g, g.c.id == paired.c.before_id))
        .subquery()
    )
    keys = [rows.c[k] for k in PAIR_KEYS]
    bf, af = rows.c.before_fee, rows.c.after_fee
    had, has = bf.is_not(None), af.is_not(None)
    query = select(
        *keys,
        func.count().label("count"),
        func.sum(rows.c.before_amount).label("before_amount"),
        func.sum(rows.c.after_amount).label("after_amount"),
        # The fees (recon.reconcile.rollforward.FEE_SUMS): held before, charged, changed.
        func.sum(case((had, 1), else_=0)).label("fee_before_count"),
        func.sum(func.coalesce(bf, 0)).label("fee_before"),
        func.sum(case((and_(~had, has), 1), else_=0)).label("fee_new_count"),
        func.sum(case((~had, func.coalesce(af, 0)), else_=0)).label("fee_new"),
        func.sum(case((and_(had, has), 1), else_=0)).label("fee_kept_count"),
        func.sum(case((had, func.coalesce(af, 0)), else_=0)).label("fee_kept"),
    ).group_by(*keys)
    return frame_of(conn, query)


def payouts_now(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """``now`` of every reconciled payout of ``account``, per currency and outcome, and of their
    fees (outcome ``fees``: the payouts with a fee, and the fees' sum)."""
    p = payouts.c
    query = (
        select(p.currency, p.outcome, func.count(), func.sum(p.amount_minor))
        .where(p.provider_account == account, p.outcome.is_not(None))
        .group_by(p.currency, p.outcome)
    )
    rows = conn.execute(query).all()
    fees = conn.execute(
        select(p.currency, func.count(p.fee_minor), func.sum(p.fee_minor))
        .where(p.provider_account == account, p.outcome.is_not(None), p.fee_minor.is_not(None))
        .group_by(p.currency)
    ).all()
    return frame(
        [
            *((str(c).strip(), str(o), Line.NOW.value, int(n), int(s)) for c, o, n, s in rows),
            *((str(c).strip(), FEES, Line.NOW.value, int(n), int(s)) for c, n, s in fees),
        ]
    )


def confirmed_returns(conn: Connection, run_id: int | None) -> pd.DataFrame:
    """The returns run ``run_id`` judged confirmed (``return_id``, ``currency``,
    ``amount_minor``)."""
    r = run_returns.c
    query = select(r.return_id, r.currency, r.amount_minor).where(
        r.run_id == (run_id or 0), r.confirmed.is_(True)
    )
    got = frame_of(conn, query)
    return got if not got.empty else pd.DataFrame(columns=["return_id", "currency", "amount_minor"])


def returns_now(conn: Connection, run_id: int) -> pd.DataFrame:
    """``now`` of the confirmed returns, per currency, as run ``run_id`` judged them."""
    r = run_returns.c
    query = (
        select(r.currency, func.count(), func.sum(r.amount_minor))
        .where(r.run_id == run_id, r.confirmed.is_(True))
        .group_by(r.currency)
    )
    rows = conn.execute(query).all()
    return frame((str(c), RETURNS, Line.NOW.value, int(n), int(s or 0)) for c, n, s in rows)


def _up_to(column: ColumnElement[int], run_id: int | None) -> list[ColumnElement[bool]]:
    return [] if run_id is None else [column <= run_id]


def finding_movements(
    conn: Connection,
    after_run: int,
    through_run: int | None,
    mark: Mark,
    *,
    account: str = DEFAULT_ACCOUNT,
) -> pd.DataFrame:
    """``opened`` and ``cleared`` in the run window (``through_run`` None: every later run);
    ``closed_by_people`` and ``reopened`` among the case actions ``mark`` counts.

    Those are the actions after the previous run's mark through this run's, less the previous
    run's own (it counted them from its decision: they came after its mark), and this run's own
    (written after its mark) unless its roll-forward starts here."""
    c, a = exception_cases.c, exception_actions.c
    mine = c.provider_account == account
    window = and_(mine, c.opened_run_id > after_run, *_up_to(c.opened_run_id, through_run))
    opened = conn.scalar(select(func.count()).where(window))
    cleared = conn.scalar(
        select(func.count()).where(
            mine,
            c.ended_run_id > after_run,
            *_up_to(c.ended_run_id, through_run),
            c.state == CaseState.CLEARED.value,
        )
    )
    marked = and_(
        a.id > mark.actions_after,
        a.id <= mark.actions_through,
        a.exception_id.in_(select(c.exception_id).where(mine)),
    )
    if mark.previous_run_id is not None:
        marked = and_(marked, a.source != run_source(mark.previous_run_id))
    actions = marked
    if through_run is not None and not mark.started:
        actions = or_(marked, a.source == run_source(through_run))
    resolved = conn.scalar(
        select(func.count()).where(
            actions, a.previous_state.in_(_LIVE), a.state == CaseState.RESOLVED.value
        )
    )
    reopened = conn.scalar(
        select(func.count()).where(
            actions, a.previous_state == CaseState.RESOLVED.value, a.state.in_(_LIVE)
        )
    )
    counts = {
        Line.OPENED: opened,
        Line.CLOSED_BY_PEOPLE: resolved,
        Line.CLEARED: cleared,
        Line.REOPENED: reopened,
    }
    return frame(("", FINDINGS, line.value, int(n or 0), None) for line, n in counts.items())


def run_source(run_id: int) -> str:
    """The ``source`` of the case actions run ``run_id`` took by itself."""
    return f"run {run_id}"


def latest_records(
    conn: Connection, ids: Iterable[str], *, account: str = DEFAULT_ACCOUNT
) -> pd.DataFrame:
    """Of the payouts ``ids`` of ``account``, those whose latest history row kept another amount
    or currency than the payout has now: that row's (``transaction_id``, ``currency``,
    ``amount_minor``)."""
    h, g, p = outcome_history.alias("h"), outcome_history.alias("g"), payouts.c
    parts = []
    for part in chunks(sorted(set(ids))):
        latest = (
            select(func.max(g.c.id))
            .where(
                g.c.provider_account == p.provider_account,
                g.c.transaction_id == p.transaction_id,
            )
            .scalar_subquery()
        )
        differs = or_(
            and_(h.c.currency.is_not(None), h.c.currency != p.currency),
            and_(h.c.amount_minor.is_not(None), h.c.amount_minor != p.amount_minor),
        )
        query = (
            select(
                p.transaction_id,
                func.coalesce(h.c.currency, p.currency).label(_P.CURRENCY),
                func.coalesce(h.c.amount_minor, p.amount_minor).label(_P.AMOUNT_MINOR),
            )
            .select_from(payouts.join(h, h.c.id == latest))
            .where(p.provider_account == account, one_of(conn, p.transaction_id, part), differs)
        )
        parts.append(frame_of(conn, query))
    columns = (_P.TRANSACTION_ID, _P.CURRENCY, _P.AMOUNT_MINOR)
    got = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(columns))
    return got.astype({str(c): c.dtype for c in columns})


def findings_now(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """``now`` of the findings of ``account``: cases that stand and no person resolved."""
    c = exception_cases.c
    n = conn.scalar(
        select(func.count()).where(
            c.provider_account == account, c.ended_run_id.is_(None), c.state.in_(_LIVE)
        )
    )
    return frame([("", FINDINGS, Line.NOW.value, int(n or 0), None)])


def last_action(conn: Connection) -> int:
    """The newest case action's id (0: none yet)."""
    return int(conn.scalar(select(func.max(exception_actions.c.id))) or 0)


def stored_lines(conn: Connection, run_id: int) -> pd.DataFrame:
    """The lines run ``run_id`` stored (none: a run from before the roll-forward)."""
    t = rollforward_lines.c
    rows = conn.execute(
        select(t.currency, t.outcome, t.line, t.count, t.amount_minor).where(t.run_id == run_id)
    ).all()
    return ordered(frame((str(c), str(o), str(ln), int(n), a) for c, o, ln, n, a in rows))


def stored_mark(conn: Connection, run_id: int) -> Mark | None:
    """Where run ``run_id``'s roll-forward started (None: it stored none)."""
    t = rollforward_runs.c
    row = conn.execute(select(rollforward_runs).where(t.run_id == run_id)).first()
    if row is None:
        return None
    return Mark(
        row.previous_run_id, bool(row.started), int(row.actions_after), int(row.actions_through)
    )


def write_lines(conn: Connection, run_id: int, lines: pd.DataFrame, mark: Mark) -> None:
    """Store run ``run_id``'s lines and mark (replacing any, for a run resumed)."""
    conn.execute(delete(rollforward_lines).where(rollforward_lines.c.run_id == run_id))
    conn.execute(delete(rollforward_runs).where(rollforward_runs.c.run_id == run_id))
    conn.execute(
        insert(rollforward_runs).values(
            run_id=run_id,
            previous_run_id=mark.previous_run_id,
            started=mark.started,
            actions_after=mark.actions_after,
            actions_through=mark.actions_through,
        )
    )
    rows = [
        {
            "run_id": run_id,
            "currency": str(c),
            "outcome": str(o),
            "line": str(ln),
            "count": int(n),
            "amount_minor": None if pd.isna(a) else int(a),
        }
        for c, o, ln, n, a in lines.itertuples(index=False)
    ]
    if rows:
        conn.execute(insert(rollforward_lines), rows)
