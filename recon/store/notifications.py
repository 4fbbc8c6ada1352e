"""The SQL for notifications: store each distinct body once, atomically, on every database.

Duplicates are ignored by the database itself, so many connections may insert the same body at
the same time: ``ON CONFLICT DO NOTHING`` on SQLite and PostgreSQL, ``ON DUPLICATE KEY UPDATE
id = id`` on MySQL/MariaDB (not ``INSERT IGNORE``, which would also turn other errors into
warnings). Rows are inserted in dedupe-key order so two transactions never wait on each other's
rows in opposite order.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, literal_column, or_, select, text
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from recon import retry
from recon.constants import DEFAULT_ACCOUNT, NotificationKind, NotificationSource, ParseStatus
from recon.errors import StoreError
from recon.store.db import write_transaction
from recon.store.tables import notifications as table

# Where a callback is stored whose path names no account recon could have (not a plain
# identifier): never a configured account's name, as those start with a letter.
NOT_A_NAME = "_not_a_name"
# 15 columns x 500 rows stays well under every driver's bound-parameter limit
INSERT_BATCH = 500
# Deadlock and serialisation failures: the whole transaction may simply be run again.
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
_RETRY_MYSQL_CODES = frozenset({1205, 1213})  # lock wait timeout, deadlock
TRANSACTION_ATTEMPTS = 3
_TRANSACTION_BACKOFF = retry.Backoff(attempts=TRANSACTION_ATTEMPTS, initial=0.01, maximum=0.1)


@dataclass(frozen=True, slots=True)
class NotificationRecord:
    """One notification as stored: the raw body, the ids and state read from it, and how far
    it could be read (``parse_problem`` says why not further)."""

    dedupe_key: str
    kind: NotificationKind
    merchant_id: str | None
    transaction_id: str | None
    original_transaction_id: str | None
    session_id: str | None
    state: int | None
    amount: str | None  # exact decimal text, as the returned-funds body gave it
    country_id: str | None
    body: str
    query: str
    source: NotificationSource
    received_at: datetime
    parse_status: ParseStatus = ParseStatus.PARSED
    parse_problem: str | None = None
    provider_account: str = DEFAULT_ACCOUNT  # whose callback (or file) it came by


def _unique_sorted(records: Iterable[NotificationRecord]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        key = (record.provider_account, record.dedupe_key)
        if key not in rows:
            row = asdict(record)
            # plain str: drivers must not see an Enum (psycopg would write its name)
            row["kind"], row["source"] = str(record.kind), str(record.source)
            row["parse_status"] = str(record.parse_status)
            rows[key] = row
    return [rows[key] for key in sorted(rows)]


def _insert_chunk(conn: Connection, rows: list[dict[str, Any]]) -> int:
    dialect = conn.dialect.name
    if dialect in ("postgresql", "sqlite"):
        module = postgresql if dialect == "postgresql" else sqlite
        stmt = (
            module.insert(table)
            .values(rows)
            .on_conflict_do_nothing(index_elements=[table.c.provider_account, table.c.dedupe_key])
            .returning(table.c.id)
        )
        return len(conn.execute(stmt).all())
    if dialect in ("mysql", "mariadb"):
        # The driver connects with CLIENT_FOUND_ROWS, so the affected-row count also counts the
        # duplicates. The no-op update counts them in a session variable instead; still id = id.
        conn.execute(text("SET @recon_duplicates = 0"))
        stmt = (
            mysql.insert(table)
            .values(rows)
            .on_duplicate_key_update(
                id=literal_column("IF((@recon_duplicates := @recon_duplicates + 1) > 0, id, id)")
            )
        )
        conn.execute(stmt)
        duplicates = conn.execute(text("SELECT @recon_duplicates")).scalar_one()
        return len(rows) - int(duplicates)
    raise StoreError(f"unsupported database: {dialect}")


def insert_notifications(conn: Connection, records: Sequence[NotificationRecord]) -> int:
    """Insert records, ignoring bodies already stored; returns how many were newly stored.

    Runs inside the caller's transaction; duplicates within ``records`` count once.
    """
    rows = _unique_sorted(records)
    return sum(
        _insert_chunk(conn, rows[i : i + INSERT_BATCH]) for i in range(0, len(rows), INSERT_BATCH)
    )


def _retryable(exc: Exception) -> bool:
    if not isinstance(exc, DBAPIError):
        return False
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in _RETRY_SQLSTATES:
        return True
    args: tuple[Any, ...] = getattr(orig, "args", ())
    return bool(args) and args[0] in _RETRY_MYSQL_CODES


def store_notifications(engine: Engine, records: Sequence[NotificationRecord]) -> int:
    """Insert and commit in a transaction of its own; returns how many were newly stored.

    A deadlock or serialisation failure is retried (it is the database asking for it); any other
    database error propagates (SQLAlchemy's, or ``StoreError`` when no connection could be opened)
    for the caller to answer "try again later".
    """

    def once() -> int:
        with write_transaction(engine) as conn:
            return insert_notifications(conn, records)

    return retry.call(once, retry.Attempts(_TRANSACTION_BACKOFF, _retryable))


EXCERPT_CHARS = 120


@dataclass(frozen=True, slots=True)
class UnparsedNotification:
    """A stored notification recon could not read in full, for a run to report."""

    id: int
    received_at: datetime
    status: ParseStatus
    reason: str
    excerpt: str  # the body's start, control characters shown as "?"
    # The account it came for when that is not configured (None: the account read for).
    account: str | None = None


def _excerpt(text: str | None) -> str:
    if text is None:
        return "(raw body dropped: RECON_KEEP_RAW_DAYS)"
    shown = "".join(ch if ch.isprintable() else "?" for ch in text[:EXCERPT_CHARS])
    return shown + ("…" if len(text) > EXCERPT_CHARS else "")


def unparsed_notifications(
    conn: Connection,
    *,
    since: datetime | None = None,
    limit: int = 1000,
    account: str = DEFAULT_ACCOUNT,
    configured: Collection[str] | None = None,
) -> list[UnparsedNotification]:
    """Notifications of ``account`` stored with a parse problem (partial or unparsed), oldest
    first; with ``configured`` (the configured accounts' names), also every notification of an
    account not among them, read or not: a callback to a URL of no account recon asks.

    ``since`` keeps those received at or after it (a run passes its previous run's start);
    at most ``limit`` rows, each with the first characters of its body.
    """
    c = table.c
    wanted = and_(c.parse_status != ParseStatus.PARSED.value, c.provider_account == account)
    if configured is not None:
        wanted = or_(wanted, c.provider_account.not_in(sorted(configured)))
    query = (
        select(
            c.id,
            c.received_at,
            c.parse_status,
            c.parse_problem,
            func.substr(c.body, 1, EXCERPT_CHARS + 1).label("start"),
            c.provider_account,
        )
        .where(wanted)
        .order_by(c.received_at, c.id)
        .limit(limit)
    )
    if since is not None:
        query = query.where(c.received_at >= since)
    return [
        UnparsedNotification(
            id=row.id,
            received_at=row.received_at,
            status=ParseStatus(row.parse_status),
            reason=row.parse_problem or "",
            excerpt=_excerpt(row.start),
            account=None if row.provider_account == account else row.provider_account,
        )
        for row in conn.execute(query)
    ]


def probe_writes(engine: Engine) -> None:
    """Raise SQLAlchemy's error unless the database accepts a notification insert right now.

    The probe row is inserted in a write transaction (on SQLite one that takes the write lock)
    and rolled back, so nothing is kept; on PostgreSQL and MySQL it may use up one id.
    """
    with engine.connect() as conn:
        conn.execution_options(recon_write=True)
        transaction = conn.begin()
        try:
            conn.execute(
                table.insert().values(
                    dedupe_key=secrets.token_hex(32),
                    kind=NotificationKind.UNKNOWN.value,
                    body="{}",
                    query="",
                    source=NotificationSource.RECEIVER.value,
                    received_at=datetime.now(UTC),
                    parse_status=ParseStatus.UNPARSED.value,
                    parse_problem="health probe",
                )
            )
        finally:
            transaction.rollback()
