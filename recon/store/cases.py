"""Exception cases in the store: what a run reads and writes, and what people do.

A run reads the live cases (:func:`live_cases`) before it decides and writes what it decided
(:func:`write_case_decision`), each change conditional on the ``version`` it read: a person who
acted while the run was polling keeps their change, and the next run sees it.

A person's actions are read (:func:`cases_by_id`), checked by the core
(:func:`recon.reconcile.cases.plan_actions`) and written (:func:`write_actions`) in one
transaction by :func:`recon.ops.findings.perform`. Each applied action appends a row to
``exception_actions`` (who, when, what, note, previous state), which is never rewritten.
An action from a file sent back also keeps who the file says decided (``decided_by``), beside
who ran ``apply`` (``by``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import (
    ColumnElement,
    Connection,
    bindparam,
    func,
    insert,
    or_,
    select,
    update,
)

from recon.conform import typed
from recon.constants import DEFAULT_ACCOUNT
from recon.decision import CaseDecision, CaseStanding, PersonChange
from recon.reconcile.cases import RECON
from recon.reconcile.finding import read_facts
from recon.reconcile.problems import members_of
from recon.run_frames import Cases
from recon.store._batch import chunks
from recon.store.tables import exception_actions, exception_cases, run_exceptions, runs
from recon.store.typed_read import frame_of

_C = exception_cases.c
_WHERE = ("exception_id", "version")  # what a run's change is conditional on


def live_cases(conn: Connection, *, account: str = DEFAULT_ACCOUNT) -> pd.DataFrame:
    """Every case of ``account`` whose finding still stands (:class:`~recon.run_frames.Cases`)."""
    query = select(*(_C[c] for c in Cases)).where(
        _C.provider_account == account, _C.ended_run_id.is_(None)
    )
    return typed(frame_of(conn, query), Cases)


def write_case_decision(
    conn: Connection, cases: CaseDecision, *, account: str = DEFAULT_ACCOUNT
) -> int:
    """Store a run's cases (of ``account``): new ones, changes (skipped where a person acted
    since), recon's own actions. Returns how many changes were skipped because a person got
    there first. (A case's id names its run, so it is one account's.)"""
    for part in chunks(cases.opened):
        conn.execute(insert(exception_cases).values(provider_account=account), list(part))
    skipped = 0
    by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for change in cases.changed:
        by_columns.setdefault(tuple(sorted(change)), []).append(change)
    raced: set[str] = set()
    for columns, changes in by_columns.items():
        values: dict[str, Any] = {c: bindparam(f"v_{c}") for c in columns if c not in _WHERE}
        values["version"] = _C.version + 1
        statement = (
            update(exception_cases)
            .where(_C.exception_id == bindparam("b_id"), _C.version == bindparam("b_version"))
            .values(**values)
        )
        for change in changes:
            params = {
                f"v_{c}": v for c, v in change.items() if c not in ("exception_id", "version")
            }
            result = conn.execute(
                statement,
                {**params, "b_id": change["exception_id"], "b_version": change["version"]},
            )
            if result.rowcount == 0:
                skipped += 1
                raced.add(str(change["exception_id"]))
    actions = [a for a in cases.actions if a["exception_id"] not in raced]
    for part in chunks(actions):
        conn.execute(insert(exception_actions), list(part))
    return skipped


# -- what people do: the rules are the core's (recon.reconcile.cases.plan_actions) -----------------


def cases_by_id(conn: Connection, exception_ids: Iterable[str]) -> dict[str, CaseStanding]:
    """Where each named case stands (cases that do not exist are left out)."""
    ids = sorted(set(exception_ids))
    return {
        str(row.exception_id): CaseStanding(
            str(row.exception_id), str(row.state), row.ended_run_id, row.until
        )
        for part in chunks(ids, 500)
        for row in conn.execute(
            select(_C.exception_id, _C.state, _C.ended_run_id, _C.until).where(
                _C.exception_id.in_(list(part))
            )
        )
    }


def write_actions(conn: Connection, changes: Sequence[PersonChange], *, source: str) -> None:
    """Store people's changes: each case's new state, and a row of its history."""
    for change in changes:
        request = change.request
        conn.execute(
            update(exception_cases)
            .where(_C.exception_id == request.exception_id)
            .values(
                state=change.state,
                owner=change.owner,
                note=change.note,
                until=change.until,
                state_at=change.at,
                reported_run_id=None,
                version=_C.version + 1,
            )
        )
        conn.execute(
            insert(exception_actions).values(
                exception_id=request.exception_id,
                at=change.at,
                by=request.by,
                decided_by=request.decided_by,
                action=request.action.value,
                previous_state=change.previous_state,
                state=change.state,
                note=request.note,
                until=request.until,
                source=request.where if request.where != "command line" else source,
            )
        )


# -- what people read ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseView:
    """One case as ``recon exceptions list`` shows it."""

    exception_id: str
    item_kind: str
    item_id: str
    flag: str
    state: str
    last_facts: str | None
    detail: str | None
    opened_at: datetime
    owner: str | None
    note: str | None
    until: datetime | None
    ended_run_id: int | None
    provider_account: str = DEFAULT_ACCOUNT


def _by_number() -> tuple[ColumnElement[Any], ...]:
    """A run's ids ``E<run>-<n>`` in the order of n: within a run the prefix is one length, so the
    shorter id is the smaller number (E2-2 before E2-10), then the text orders the same lengths."""
    return func.length(_C.exception_id), _C.exception_id


def list_cases(
    conn: Connection,
    *,
    states: Iterable[str] = (),
    flags: Iterable[str] = (),
    include_ended: bool = False,
    limit: int | None = None,
    account: str | None = DEFAULT_ACCOUNT,
) -> list[CaseView]:
    """Cases of ``account`` (None: of every account), newest first; by default only those whose
    finding still stands."""
    query = select(
        _C.exception_id,
        _C.item_kind,
        _C.item_id,
        _C.flag,
        _C.state,
        _C.last_facts,
        _C.detail,
        _C.opened_at,
        _C.owner,
        _C.note,
        _C.until,
        _C.ended_run_id,
        _C.provider_account,
    ).order_by(_C.opened_run_id.desc(), *_by_number())
    wanted = list(states)
    if account is not None:
        query = query.where(_C.provider_account == account)
    if not include_ended:
        query = query.where(_C.ended_run_id.is_(None))
    if wanted:
        query = query.where(_C.state.in_(wanted))
    if flags:
        query = query.where(_C.flag.in_(list(flags)))
    if limit is not None:
        query = query.limit(limit)
    return [CaseView(**r._mapping) for r in conn.execute(query)]


@dataclass(frozen=True)
class ActionView:
    """One row of a case's history."""

    at: datetime
    by: str
    action: str
    previous_state: str
    state: str
    note: str | None
    until: datetime | None
    source: str
    decided_by: str | None


def case_record(conn: Connection, exception_id: str) -> Any:
    """The case's row, or None."""
    return conn.execute(select(exception_cases).where(_C.exception_id == exception_id)).first()


def case_actions(conn: Connection, exception_ids: Sequence[str]) -> dict[str, list[ActionView]]:
    """Every action on the cases, oldest first."""
    a = exception_actions.c
    out: dict[str, list[ActionView]] = {i: [] for i in exception_ids}
    query = (
        select(
            a.exception_id,
            a.at,
            a.by,
            a.action,
            a.previous_state,
            a.state,
            a.note,
            a.until,
            a.source,
            a.decided_by,
        )
        .where(a.exception_id.in_(list(exception_ids)))
        .order_by(a.id)
    )
    for exception_id, *fields in conn.execute(query):
        out[str(exception_id)].append(ActionView(*fields))
    return out


def case_runs(
    conn: Connection, exception_id: str
) -> list[tuple[int, datetime, str, str | None, str | None]]:
    """Each run that reported the case: run id, as_of, status, facts, detail (before 0016)."""
    e = run_exceptions.c
    query = (
        select(e.run_id, runs.c.as_of, e.status, e.facts, e.detail)
        .join(runs, runs.c.id == e.run_id)
        .where(e.exception_id == exception_id)
        .order_by(e.run_id)
    )
    return [(int(r[0]), r[1], str(r[2]), r[3], r[4]) for r in conn.execute(query)]


def cases_of_items(
    conn: Connection, item_ids: Sequence[str], *, account: str | None = DEFAULT_ACCOUNT
) -> list[Any]:
    """Every case of ``account`` (None: of every account), live or ended, about these items or
    naming one of them among its members (a double payment filed under its twin), oldest
    first."""
    ids = [str(i) for i in item_ids]
    named = [_C.last_facts.like(f'%"{_like(i)}"%', escape="\\") for i in ids]
    mine = [] if account is None else [_C.provider_account == account]
    rows = conn.execute(
        select(exception_cases)
        .where(*mine, or_(_C.item_id.in_(ids), *named))
        .order_by(_C.opened_run_id, *_by_number())
    )
    wanted = set(ids)
    return [
        r
        for r in rows
        if str(r.item_id) in wanted or members_of(r.item_id, read_facts(r.last_facts)) & wanted
    ]


def _like(text: str) -> str:
    """``text`` matched literally by LIKE (its wildcards escaped), as JSON writes it."""
    quoted = json.dumps(text, ensure_ascii=False)[1:-1]
    return quoted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def cases_now(conn: Connection, exception_ids: Iterable[str]) -> pd.DataFrame:
    """The named cases as they stand: exception_id, state, owner, note, until."""
    ids = sorted(set(exception_ids))
    columns = ("exception_id", "state", "owner", "note", "until")
    frames = [
        frame_of(conn, select(*(_C[c] for c in columns)).where(_C.exception_id.in_(list(part))))
        for part in chunks(ids, 500)
    ]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    got = pd.concat(frames, ignore_index=True)
    return got.assign(until=pd.to_datetime(got["until"], utc=True))


def people_actions_after(conn: Connection, at: datetime, *, account: str = DEFAULT_ACCOUNT) -> int:
    """How many actions people took on any case of ``account`` after ``at`` (a run's own are not
    counted)."""
    a = exception_actions.c
    query = (
        select(func.count())
        .join_from(exception_actions, exception_cases, _C.exception_id == a.exception_id)
        .where(a.at > at, a.by != RECON, _C.provider_account == account)
    )
    return int(conn.execute(query).scalar_one())
