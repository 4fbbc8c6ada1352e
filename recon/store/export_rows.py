"""The provider's export files and their rows kept: each file once, each row by version.

:func:`store_export` keeps one file of one provider account in one transaction. A file already
stored (same account, sha256 and settlement window) changes nothing: a file is a claim about its
window, so the same bytes for another window (two empty days, say) are another file. Each row is
known by its account, kind and transaction id; its digest is the sha256 of its content (every
field of :class:`recon.export_rows.ExportRow` but ``line``, in :func:`row_digest`'s canonical
form). A row whose digest is that of its latest stored version changes nothing; another digest is
the next version, and the history keeps both. The existing digests are read for the whole file
(one ``IN`` list a chunk of ids at a time, never a query per row) and the new versions go in
through the driver's executemany (:func:`recon.store.bulk.execute_columns`).

Reads (every reader of the export reads through these: the balance statement, the night's
match, the pull's days): :func:`latest_rows` (:func:`latest_rows_query` for a frame), the latest
version of each row settled in a window, optionally with when the file of that version was
stored; :func:`complete_files`, the windows of the files not cut at the cap; and
:func:`covered_days`, the settlement days the union of those windows covers whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import ColumnElement, Connection, Engine, Select, exists, false, insert, select
from sqlalchemy.exc import IntegrityError

from recon.export_rows import ExportKind, ExportRow
from recon.store._batch import ROWS_PER_STATEMENT, chunks, one_of
from recon.store.bulk import execute_columns
from recon.store.db import write_transaction
from recon.store.export_tables import provider_export_files, provider_export_rows

ExportSource = Literal["api", "file"]

_F = provider_export_files.c
_R = provider_export_rows.c
# The stored columns that are an ExportRow's fields, in its order.
_ROW_FIELDS = tuple(ExportRow.__dataclass_fields__)
# Rows per insert: as apply.py writes payouts (one executemany per part).
_ROWS_PER_INSERT = 5000
# Ids per read of the stored digests. PostgreSQL, without statistics on a table just filled (the
# cap split stores files seconds apart), filters an account's rows by the id array instead of
# searching the index for each id: one scan of them per read, so few, long arrays (as
# report_reads.py reads on PostgreSQL; a 100,000-row file again: 263 s in parts of 1,000).
_IDS_PER_READ = {"postgresql": 50_000}


@dataclass(frozen=True, slots=True)
class StoredExport:
    """What :func:`store_export` did with one file.

    ``new_file``: False when the same file (account, sha256 and window) was stored already, in which
    case nothing changed and the row counts are 0. ``rows``: the file's row count; ``capped``:
    it has exactly the row cap (never taken as complete). ``rows_new``: rows stored for the first
    time; ``rows_unchanged``: rows whose latest version has the same content; ``rows_versioned``:
    rows stored again as their next version (their content changed).
    """

    file_id: int
    new_file: bool
    rows: int
    capped: bool
    rows_new: int = 0
    rows_unchanged: int = 0
    rows_versioned: int = 0

    def summary(self, account: str) -> str:
        """One line for the command's output."""
        cap = " (exactly the row cap: not taken as complete)" if self.capped else ""
        if not self.new_file:
            return (
                f"export file already stored for {account} (file {self.file_id}, "
                f"{self.rows} rows{cap}): nothing changed"
            )
        return (
            f"export file stored for {account} (file {self.file_id}, {self.rows} rows{cap}): "
            f"{self.rows_new} new, {self.rows_versioned} changed (new versions), "
            f"{self.rows_unchanged} unchanged"
        )


@dataclass(frozen=True, slots=True)
class Coverage:
    """The settlement days (calendar days in a zone) an account's export files cover.

    ``days``: each day that the windows of the files not cut at the cap contain whole, together
    (a day pulled as two halves after a cap split is covered);
    ``last_pulled``: the latest of them (None: no day covered yet).
    """

    days: frozenset[date]
    last_pulled: date | None


def _moment(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _content(row: ExportRow) -> dict[str, Any]:
    """Every field of ``row`` but ``line`` as JSON values (times in UTC, ISO 8601), those
    without a value left out: a field added to :class:`ExportRow` later changes no digest of a
    row that has no value for it."""
    content: dict[str, Any] = {
        "transaction_id": row.transaction_id,
        "kind": str(row.kind),
        "type_raw": row.type_raw,
        "state": row.state,
        "state_raw": row.state_raw,
        "amount_minor": row.amount_minor,
        "currency": row.currency,
        "merchant_reference": row.merchant_reference,
        "settled": _moment(row.settled),
        "created": _moment(row.created),
        "fee_amount_minor": row.fee_amount_minor,
        "fee_id": row.fee_id,
        "related_transaction_id": row.related_transaction_id,
        "extra": dict(row.extra) or None,
    }
    return {key: value for key, value in content.items() if value is not None}


# One encoder for every digest: json.dumps builds a new one per call when given options.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_digest(row: ExportRow) -> str:
    """The sha256 (hex) of ``row``'s content: every field but ``line`` that has a value, as
    JSON with sorted keys and no spaces. Two rows differ in digest exactly when their content
    differs."""
    return hashlib.sha256(_CANONICAL.encode(_content(row)).encode("utf-8")).hexdigest()


def _aware(name: str, value: datetime) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, not {value!r}")


def store_export(
    bind: Engine | Connection,
    *,
    account: str,
    settled_from: datetime,
    settled_to: datetime,
    data_sha256: str,
    headers: Sequence[str],
    rows: Sequence[ExportRow],
    source: ExportSource,
    name: str | None,
    row_cap: int,
    now: datetime | None = None,
) -> StoredExport:
    """Keep one export file of ``account`` and its rows, all or nothing (one transaction: the
    engine's own, or the caller's when given a connection).

    ``settled_from``/``settled_to``: the file's settlement window (aware; ``settled_to``
    exclusive). ``data_sha256``: the sha256 (hex) of the file's bytes. ``headers``: its header
    line as read. ``row_cap``: the provider's cap; a file of exactly that many rows is recorded
    as capped. ``now``: when it is stored (default: the clock).
    """
    _aware("settled_from", settled_from)
    _aware("settled_to", settled_to)
    if settled_to <= settled_from:
        raise ValueError(f"empty settlement window: {settled_from} to {settled_to}")
    values: dict[str, Any] = {
        "account": account,
        "sha256": data_sha256,
        "settled_from": settled_from,
        "settled_to": settled_to,
        "headers": list(headers),
        "source": source,
        "name": name,
        "capped": len(rows) == row_cap,
        "stored_at": now or datetime.now(UTC),
    }
    if isinstance(bind, Connection):
        return _store(bind, values, rows)
    try:
        with write_transaction(bind) as conn:
            return _store(conn, values, rows)
    except IntegrityError:
        # Another process stored the same file (bytes and window) or some of its rows since this
        # one read them (PostgreSQL and MariaDB wait for its commit, then refuse the duplicate
        # key): once more, reading what it committed.
        with write_transaction(bind) as conn:
            return _store(conn, values, rows)


def _store(conn: Connection, values: dict[str, Any], rows: Sequence[ExportRow]) -> StoredExport:
    account = values["account"]
    known = conn.execute(
        select(_F.id, _F.rows, _F.capped).where(
            _F.provider_account == account,
            _F.sha256 == values["sha256"],
            _F.settled_from == values["settled_from"],
            _F.settled_to == values["settled_to"],
        )
    ).first()
    if known is not None:
        return StoredExport(int(known.id), False, int(known.rows), bool(known.capped))
    file_id = _insert_file(conn, rows=len(rows), **values)
    new, unchanged, versioned = _store_rows(conn, account, file_id, rows)
    return StoredExport(file_id, True, len(rows), values["capped"], new, unchanged, versioned)


def _insert_file(conn: Connection, *, account: str, headers: list[str], **values: Any) -> int:
    result = conn.execute(
        insert(provider_export_files).values(
            provider_account=account, headers=json.dumps(headers, ensure_ascii=False), **values
        )
    )
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def _latest_digests(
    conn: Connection, account: str, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], tuple[int, str]]:
    """The latest stored (version, digest) of each (kind, transaction id) of ``keys`` that
    ``account`` has: per kind, a part of the ids at a time (by the primary key)."""
    ids_by_kind: dict[str, list[str]] = {}
    for kind, tid in keys:
        ids_by_kind.setdefault(kind, []).append(tid)
    latest: dict[tuple[str, str], tuple[int, str]] = {}
    size = _IDS_PER_READ.get(conn.dialect.name, ROWS_PER_STATEMENT)
    for kind, ids in ids_by_kind.items():
        for part in chunks(sorted(set(ids)), size):
            query = select(_R.transaction_id, _R.version, _R.digest).where(
                _R.provider_account == account,
                _R.kind == kind,
                one_of(conn, _R.transaction_id, part),
            )
            for tid, version, digest in conn.execute(query):
                key = (kind, str(tid))
                if key not in latest or latest[key][0] < int(version):
                    latest[key] = (int(version), str(digest))
    return latest


def _store_rows(
    conn: Connection, account: str, file_id: int, rows: Sequence[ExportRow]
) -> tuple[int, int, int]:
    """Insert the rows of file ``file_id`` that are new or changed; (new, unchanged, versioned).

    A row repeated in the file counts as its latest content by then: unchanged when the same,
    the next version when not.
    """
    digests = [row_digest(row) for row in rows]
    latest = _latest_digests(conn, account, ((str(r.kind), r.transaction_id) for r in rows))
    new = unchanged = versioned = 0
    written: list[tuple[ExportRow, int, str]] = []
    for row, digest in zip(rows, digests, strict=True):
        key = (str(row.kind), row.transaction_id)
        before = latest.get(key)
        if before is not None and before[1] == digest:
            unchanged += 1
            continue
        version = 1 if before is None else before[0] + 1
        if before is None:
            new += 1
        else:
            versioned += 1
        latest[key] = (version, digest)
        written.append((row, version, digest))
    statement = insert(provider_export_rows).values(provider_account=account, file_id=file_id)
    for part in chunks(written, _ROWS_PER_INSERT):
        execute_columns(conn, statement, _columns(part))
    return new, unchanged, versioned


def _columns(part: Sequence[tuple[ExportRow, int, str]]) -> dict[str, list[Any]]:
    """The rows of ``part`` as the insert's columns (kind as its value, extra as JSON)."""
    columns: dict[str, list[Any]] = {name: [] for name in (*_ROW_FIELDS, "version", "digest")}
    for row, version, digest in part:
        for name in _ROW_FIELDS:
            columns[name].append(getattr(row, name))
        columns["version"].append(version)
        columns["digest"].append(digest)
    columns["kind"] = [str(kind) for kind in columns["kind"]]
    columns["extra"] = [
        json.dumps(dict(extra), sort_keys=True, ensure_ascii=False) if extra else None
        for extra in columns["extra"]
    ]
    return columns


def _row(values: Any) -> ExportRow:
    m = values._mapping
    extra = m["extra"]
    return ExportRow(
        line=int(m["line"]),
        transaction_id=str(m["transaction_id"]),
        kind=ExportKind(m["kind"]),
        type_raw=str(m["type_raw"]),
        state=None if m["state"] is None else int(m["state"]),
        state_raw=str(m["state_raw"]),
        amount_minor=int(m["amount_minor"]),
        currency=str(m["currency"]).strip(),
        merchant_reference=m["merchant_reference"],
        settled=m["settled"],
        created=m["created"],
        fee_amount_minor=None if m["fee_amount_minor"] is None else int(m["fee_amount_minor"]),
        fee_id=m["fee_id"],
        related_transaction_id=m["related_transaction_id"],
        extra=json.loads(extra) if extra else {},
    )


def settled_between(
    account: str, settled_from: datetime, settled_to: datetime | None
) -> ColumnElement[bool]:
    """``provider_export_rows``' rows (any version) of ``account`` settled in
    [``settled_from``, ``settled_to``) (None: no end): the condition every windowed read of the
    rows shares. A row without a settlement time is in no window."""
    _aware("settled_from", settled_from)
    condition = (_R.provider_account == account) & (_R.settled >= settled_from)
    if settled_to is None:
        return condition
    _aware("settled_to", settled_to)
    return condition & (_R.settled < settled_to)


def latest_rows_query(
    account: str,
    settled_from: datetime,
    settled_to: datetime | None,
    kinds: Iterable[ExportKind] | None = None,
    *,
    file_stored_at: str | None = None,
) -> Select[Any]:
    """The query of :func:`latest_rows`: its columns are :class:`ExportRow`'s fields (stored
    values: ``kind`` and ``extra`` as text), and, named ``file_stored_at`` when given, when the
    file that gave each row's latest version was stored. ``settled_to`` None: no end."""
    later = provider_export_rows.alias("later")
    newer = exists().where(
        later.c.provider_account == _R.provider_account,
        later.c.kind == _R.kind,
        later.c.transaction_id == _R.transaction_id,
        later.c.version > _R.version,
    )
    query = (
        select(*(_R[name] for name in _ROW_FIELDS))
        .where(settled_between(account, settled_from, settled_to), ~newer)
        .order_by(_R.kind, _R.transaction_id)
    )
    if kinds is not None:
        query = query.where(_R.kind.in_([str(k) for k in kinds]))
    if file_stored_at is not None:
        query = query.join(provider_export_files, _F.id == _R.file_id).add_columns(
            _F.stored_at.label(file_stored_at)
        )
    return query


def latest_rows(
    conn: Connection,
    account: str,
    settled_from: datetime,
    settled_to: datetime,
    kinds: Iterable[ExportKind] | None = None,
) -> list[ExportRow]:
    """The latest version of each of ``account``'s rows whose latest version was settled in
    [``settled_from``, ``settled_to``), of ``kinds`` (None: every kind), by kind and transaction
    id. ``line`` is the row's line in the file that gave that version."""
    query = latest_rows_query(account, settled_from, settled_to, kinds)
    return [_row(values) for values in conn.execute(query)]


@dataclass(frozen=True, slots=True)
class FileWindow:
    """One stored file's settlement window (``settled_to`` exclusive) and when it was stored."""

    settled_from: datetime
    settled_to: datetime
    stored_at: datetime


def has_files(conn: Connection, account: str) -> bool:
    """Whether any export file of ``account`` is stored (capped or not)."""
    query = select(_F.id).where(_F.provider_account == account).limit(1)
    return conn.execute(query).first() is not None


def complete_files(
    conn: Connection, account: str, *, ending_after: datetime | None = None
) -> list[FileWindow]:
    """The windows of ``account``'s files not cut at the cap (those ending after
    ``ending_after`` when given), by start, end and storing time."""
    query = (
        select(_F.settled_from, _F.settled_to, _F.stored_at)
        .where(_F.provider_account == account, _F.capped == false())
        .order_by(_F.settled_from, _F.settled_to, _F.stored_at)
    )
    if ending_after is not None:
        _aware("ending_after", ending_after)
        query = query.where(_F.settled_to > ending_after)
    return [FileWindow(start, end, stored) for start, end, stored in conn.execute(query)]


def union(windows: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """The windows [from, to) joined where they meet or overlap, by start."""
    joined: list[tuple[datetime, datetime]] = []
    for start, end in sorted(windows):
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return joined


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone)


def window_days(settled_from: datetime, settled_to: datetime, zone: ZoneInfo) -> list[date]:
    """The calendar days in ``zone`` that [``settled_from``, ``settled_to``) contains whole."""
    day = settled_from.astimezone(zone).date()
    if _midnight(day, zone) < settled_from:
        day += timedelta(days=1)
    days = []
    while _midnight(day + timedelta(days=1), zone) <= settled_to:
        days.append(day)
        day += timedelta(days=1)
    return days


def day_window(first: date, last: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The settlement window of the days ``first`` to ``last`` (inclusive) in ``zone``: from
    ``first``'s midnight to the midnight after ``last`` (exclusive), in UTC."""
    start = _midnight(first, zone).astimezone(UTC)
    end = _midnight(last + timedelta(days=1), zone).astimezone(UTC)
    return start, end


def covered_days(conn: Connection, account: str, zone: ZoneInfo) -> Coverage:
    """The settlement days in ``zone`` that ``account``'s files not cut at the cap cover whole
    together (the union of their windows), and the last of them."""
    days = days_covered(complete_files(conn, account), zone)
    return Coverage(days, max(days) if days else None)


def days_covered(files: Iterable[FileWindow], zone: ZoneInfo) -> frozenset[date]:
    """The calendar days in ``zone`` that the windows of ``files`` cover whole together."""
    days: set[date] = set()
    for start, end in union((f.settled_from, f.settled_to) for f in files):
        days.update(window_days(start, end, zone))
    return frozenset(days)
