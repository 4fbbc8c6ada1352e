"""Steady state: a store holding ``days`` of history at ``per_day`` payouts a day, generated in SQL,
plus tonight's ``per_day`` new payouts; then one measured ``recon run`` over it.

The store is what nightly runs would have left (every night at ``as_of`` minus whole days):

- ``payouts``: one statement per day, ``INSERT ... SELECT`` over a numbers table (SQLite and
  PostgreSQL alike). Payout ``n`` is ``tx<n><kind>``, amount ``100 + n % 900`` and ``n % 100``
  cents, reference ``ref-<n>``; its kind (by ``n % 1000``) is the answer the provider stand-in
  (:mod:`bench.standin`) gives: 93% settled (``s``), 0.2% settled with an open amount mismatch
  (``m``), 2% failed (``f``), 1% aborted (``a``), 0.2% unknown to the provider (``u``, an open
  exception), 3.6% still pending (``p``: pending after one night, delayed after two, settled
  from then on, ``s``). Tonight's payouts have no outcome yet.
- the reconciled columns as the watch schedules (:mod:`recon.reconcile.watch`) leave them: each
  payout's outcome seen first on the night after it was created (``outcome_since``), last checked
  on the latest day of its schedule before tonight (failed, aborted and unknown on
  ``RECON_WATCH_SCHEDULE`` up to ``watch_days``, settled on ``RECON_RETURN_WATCH_SCHEDULE`` up to
  ``return_watch_days``), ``next_check_at`` the start (UTC midnight) of its next schedule day
  (``NULL`` once the window is over); pending ones checked last night.
- ``runs``: one complete run a night; ``outcome_history``: the first outcome of every payout;
  ``run_exceptions``: last night's open exceptions; ``observations``: the answers of the last
  ``observation_nights`` nights (a ~550-byte body each).

Returned payouts are not generated: a return needs a type-13 transaction the stand-in would have to
answer consistently; at the provider's rates (well under 1%) they do not move these figures.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    and_,
    case,
    cast,
    func,
    insert,
    literal,
    null,
    select,
    text,
)
from sqlalchemy.sql.expression import ColumnElement

from bench.support import RECON, Measured, measure
from recon.constants import Outcome, PollReason, RunStatus
from recon.settings import DEFAULT_RETURN_WATCH_SCHEDULE, DEFAULT_WATCH_SCHEDULE
from recon.store.db import ensure_schema, make_engine, write_transaction
from recon.store.tables import observations, outcome_history, payouts, run_exceptions, runs
from recon.store.types import UTCDateTime

SCHEDULE: tuple[float, ...] = DEFAULT_WATCH_SCHEDULE
RETURN_SCHEDULE: tuple[float, ...] = DEFAULT_RETURN_WATCH_SCHEDULE
WATCH_DAYS = 90.0
RETURN_WATCH_DAYS = 30.0
FIRST_N = 1_000_000_000  # ten-digit numbers: ids sort as numbers do

_numbers_meta = MetaData()
numbers = Table(
    "bench_numbers", _numbers_meta, Column("k", Integer, primary_key=True, autoincrement=False)
)

# Kinds by n % 1000, with the outcome a run would have stored (pending: see _kind).
_KINDS = ((930, "s"), (932, "m"), (952, "f"), (962, "a"), (964, "u"), (1000, "p"))
_OUTCOME = {
    "s": Outcome.SETTLED,
    "m": Outcome.SETTLED,
    "f": Outcome.FAILED,
    "a": Outcome.ABORTED,
    "u": Outcome.UNKNOWN,
}
_STATE = {"s": 6, "m": 6, "f": 3, "a": 2, "p": 1}
_FLAG = {"m": "amount_mismatch", "u": "unknown_transaction"}
_WATCHED = ("f", "a", "u")
_RETURN_WATCHED = ("s", "m")
_RAW = (
    '{"id":"%s","type":1,"state":6,"amount":123.45,"currency_id":"eur","merchant_id":'
    '"sandbox-merchant","merchant_reference":"ref-0","customer_id":null,"created":1700000000,'
    '"completed":1700000060,"credited":null,"settled":1700000060,"eta":1700086400,'
    '"error_code":null,"message":null,"statement_reference":null,"related_transaction_id":null,'
    '"to_bank_account_id":"5OKiqQRherS3f_PUO8W8","to_bank_account":{"bank_name":"Sandbox Test'
    ' Bank","bban":"**************3000","country_id":"de","iban":"DE****************3000"},'
    '"country_id":"de"}'
)


@dataclass(frozen=True)
class Checks:
    """Where a payout of a given age stands on the watch schedule tonight."""

    last: float  # days after the outcome of its last check (0: the night the outcome was seen)
    next: float | None  # days after the outcome of its next check (None: no longer watched)


def checks(age: int, window: float, schedule: tuple[float, ...] = SCHEDULE) -> Checks:
    """The last check before tonight and the next one, for an outcome seen ``age`` nights ago."""
    points = [d for d in schedule if d < window] + ([window] if window > 0 else [])
    before = [d for d in points if d < age]
    after = [d for d in points if d >= age]
    return Checks(max(before, default=0.0), min(after, default=None))


def expected_polls(
    per_day: int,
    schedule: tuple[float, ...] = SCHEDULE,
    return_schedule: tuple[float, ...] = RETURN_SCHEDULE,
    history_days: int = 400,
) -> dict[str, float]:
    """Polls a night at steady state for this mix and these schedules, per reason (computed, not
    measured): tonight's new payouts and the pending ones are ``open``; a failed, aborted or
    unknown payout is a ``watch`` poll on each day of ``schedule`` inside ``WATCH_DAYS``, a settled
    one a ``return watch`` poll on each day of ``return_schedule`` inside ``RETURN_WATCH_DAYS``."""
    share = {kind: (bound - low) / 1000 for (low, _), (bound, kind) in
             zip(((0, ""), *_KINDS), _KINDS, strict=False)}  # fmt: skip
    polls = {PollReason.OPEN.value: per_day * 1.0}  # tonight's new payouts
    polls |= {PollReason.WATCH.value: 0.0, PollReason.RETURN_WATCH.value: 0.0}
    for age in range(1, history_days + 1):
        for kind, part in share.items():
            if kind == "p" and age <= 2:
                polls[PollReason.OPEN.value] += per_day * part  # still open
                continue
            if kind in _WATCHED:
                due = checks(age, WATCH_DAYS, schedule).next == age
                polls[PollReason.WATCH.value] += per_day * part * due
            else:
                due = checks(age, RETURN_WATCH_DAYS, return_schedule).next == age
                polls[PollReason.RETURN_WATCH.value] += per_day * part * due
    return polls


def _day_start(moment: datetime) -> datetime:
    """The start of ``moment``'s day: a check is due from there (RECON_TIMEZONE is UTC here)."""
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _kind(n: ColumnElement[Any], age: int) -> ColumnElement[Any]:
    """The kind letter of payout ``n`` created ``age`` days before tonight."""
    k = n % 1000
    whens = [(k < bound, literal(kind)) for bound, kind in _KINDS[:-1]]
    return case(*whens, else_=literal("p" if age <= 2 else "s"))


def _by_kind(kind: ColumnElement[Any], values: dict[str, Any], type_: Any = None) -> Any:
    whens = [(kind == k, literal(v, type_)) for k, v in values.items() if v is not None]
    return case(*whens, else_=null()) if whens else null()


@dataclass(frozen=True)
class Generated:
    """A generated store: its URL, tonight's ``as_of`` and how many rows each table holds."""

    url: str
    as_of: datetime
    days: int
    rows: dict[str, int]


def _insert_day(
    conn: Any, *, age: int, per_day: int, days: int, as_of: datetime, run_ids: dict[int, int]
) -> None:
    """One day's payouts (created ``age`` days before tonight), reconciled as the runs left them."""
    n = literal(FIRST_N + (days - age) * per_day) + numbers.c.k
    kind = _kind(n, age)
    created = as_of - timedelta(days=age, hours=12)
    columns: dict[str, Any] = {
        "transaction_id": literal("tx").concat(cast(n, String)).concat(kind),
        "merchant_reference": literal("ref-").concat(cast(n, String)),
        "amount_minor": (literal(100) + n % 900) * 100 + n % 100,
        "currency": literal("EUR"),
        "customer_id": literal("cust-").concat(cast(n % 50_000, String)),
        "created": literal(created, UTCDateTime),
        "imported_at": literal(created + timedelta(hours=1), UTCDateTime),
        "ever_failed": case((kind.in_(["f", "a"]), literal(True)), else_=literal(False)),
    }
    if age:
        seen = as_of - timedelta(days=age)
        watch = checks(age, WATCH_DAYS, SCHEDULE)
        ret = checks(age, RETURN_WATCH_DAYS, RETURN_SCHEDULE)
        last = {
            **dict.fromkeys(_WATCHED, watch.last),
            **dict.fromkeys(_RETURN_WATCHED, ret.last),
            "p": age - 1,
        }
        nxt = {**dict.fromkeys(_WATCHED, watch.next), **dict.fromkeys(_RETURN_WATCHED, ret.next)}
        pending = Outcome.PENDING if age == 1 else Outcome.DELAYED
        columns |= {
            "outcome": _by_kind(kind, {**{k: v.value for k, v in _OUTCOME.items()},
                                       "p": pending.value}),
            "state": _by_kind(kind, _STATE),
            "error_code": _by_kind(kind, {"a": "bank_rejected_transaction"}),
            "returned_minor": literal(0),  # what a run stores when no return is confirmed
            "exceptions": case(*((kind == k, literal(f)) for k, f in _FLAG.items()),
                               else_=literal("")),
            "candidate_duplicates": literal(""),
            "outcome_since": literal(seen, UTCDateTime),
            "last_checked_at": _by_kind(
                kind, {k: seen + timedelta(days=d) for k, d in last.items()}, UTCDateTime
            ),
            "last_run_id": _by_kind(kind, {k: run_ids[int(age - d)] for k, d in last.items()}),
            "next_check_at": _by_kind(
                kind,
                {k: _day_start(seen + timedelta(days=d)) if d is not None else None
                 for k, d in nxt.items()},
                UTCDateTime,
            ),
        }  # fmt: skip
    query = select(*(c.label(name) for name, c in columns.items())).where(numbers.c.k < per_day)
    conn.execute(insert(payouts).from_select(list(columns), query))


def generate(
    url: str, *, days: int, per_day: int, as_of: datetime, observation_nights: int = 2
) -> Generated:
    """Fill the empty database at ``url`` with ``days`` of history and tonight's payouts."""
    engine = make_engine(url)
    ensure_schema(engine)
    with write_transaction(engine) as conn:
        _numbers_meta.create_all(conn)
        conn.execute(insert(numbers), [{"k": k} for k in range(per_day)])
        run_ids: dict[int, int] = {}
        for age in range(days, 0, -1):  # oldest night first: ids grow with time
            night = as_of - timedelta(days=age)
            result = conn.execute(
                insert(runs).values(
                    started_at=night, finished_at=night + timedelta(minutes=5), as_of=night,
                    status=RunStatus.COMPLETE.value, counts='{"seconds": "1.000"}',
                    host="bench", pid=0,
                )
            )  # fmt: skip
            run_ids[age] = int(result.inserted_primary_key[0])
        for age in range(days, -1, -1):
            _insert_day(conn, age=age, per_day=per_day, days=days, as_of=as_of, run_ids=run_ids)
        _numbers_meta.drop_all(conn)
        _history(conn)
        if days:
            _exceptions(conn, run_ids[1])
            _observations(conn, as_of - timedelta(days=observation_nights))
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":  # what autovacuum would have done by tonight
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
        rows = {
            t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
            for t in (payouts, outcome_history, observations, run_exceptions, runs)
        }
    engine.dispose()
    return Generated(url, as_of, days, rows)


def _history(conn: Any) -> None:
    p, r = payouts.c, runs.c
    query = select(
        p.transaction_id, r.id, null(), p.outcome, p.state, p.error_code, p.returned_minor,
        p.exceptions,
        p.candidate_duplicates, p.outcome_since, p.outcome_since,
    ).join_from(payouts, runs, r.as_of == p.outcome_since)  # fmt: skip
    names = [
        "transaction_id", "run_id", "previous_outcome", "outcome", "state", "error_code",
        "returned_minor", "exceptions", "candidate_duplicates", "outcome_since", "changed_at",
    ]  # fmt: skip
    conn.execute(insert(outcome_history).from_select(names, query))


def _exceptions(conn: Any, last_run: int) -> None:
    p = payouts.c
    query = select(
        literal(last_run), literal("payout"), p.transaction_id, p.exceptions,
        literal("persisting"), literal("generated by the benchmark"),
    ).where(p.exceptions.is_not(None), p.exceptions != "")  # fmt: skip
    names = ["run_id", "item_kind", "item_id", "flag", "status", "detail"]
    conn.execute(insert(run_exceptions).from_select(names, query))


def _observations(conn: Any, since: datetime) -> None:
    p = payouts.c
    unknown = p.outcome == Outcome.UNKNOWN.value
    query = select(
        p.last_run_id,
        p.transaction_id,
        p.last_checked_at,
        case((unknown, literal("not_found")), else_=literal("ok")),
        p.state,
        case((unknown, null()), else_=literal(1)),
        p.error_code,
        literal("123.45"),
        p.amount_minor,
        p.currency,
        literal(_RAW),
    ).where(and_(p.last_checked_at.is_not(None), p.last_checked_at >= literal(since, UTCDateTime)))
    names = [
        "run_id", "transaction_id", "fetched_at", "status", "state", "type", "error_code",
        "amount", "amount_minor", "currency", "raw",
    ]  # fmt: skip
    conn.execute(insert(observations).from_select(names, query))


@dataclass(frozen=True)
class Night:
    """One measured ``recon run``: the process, its stored counts and its polling seconds."""

    process: Measured
    counts: dict[str, Any]
    polling_seconds: float

    @property
    def outside_polling(self) -> float:
        """Whole process minus polling: start-up, selection, decide, apply, reports."""
        return self.process.seconds - self.polling_seconds


_POLLED = re.compile(r"polled (\d+) in ([0-9.]+)s")


def run_night(
    store: Generated,
    provider_url: str,
    work: Path,
    *,
    timeout: float = 3600,
    memory_limit_mb: float | None = None,
) -> Night:
    """``recon run --no-email`` as of ``store.as_of`` against ``provider_url``, measured."""
    import json

    with tempfile.TemporaryDirectory(dir=work) as out:
        env = {
            "RECON_DATABASE_URL": store.url,
            "RECON_API_BASE_URL": provider_url,
            "RECON_CONCURRENCY": "50",
            "RECON_OUT_DIR": out,
            "RECON_SMTP_HOST": "",
        }
        cmd = [*RECON, "run", "--no-email", "--out", out, "--as-of", store.as_of.isoformat()]
        process = measure(
            cmd, env=env, timeout=timeout, check=False, memory_limit_mb=memory_limit_mb
        )
    polled = _POLLED.search(process.stdout + process.stderr)
    engine = make_engine(store.url)
    with engine.connect() as conn:
        stored = conn.execute(select(runs.c.counts).order_by(runs.c.id.desc()).limit(1)).scalar()
    engine.dispose()
    counts = json.loads(str(stored)) if process.returncode == 0 else {}
    return Night(process, counts, float(polled.group(2)) if polled else 0.0)


def tonight() -> datetime:
    """Tonight's ``as_of``: the last whole hour (runs are generated at whole days before it)."""
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
