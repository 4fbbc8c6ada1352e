"""Importing the merchant's payout records, from a CSV file or a query against its own database.

All or nothing (:mod:`recon.ingest.allornothing`): rows are read and validated in batches (a
million-row file never becomes a million Python objects) and every batch is written inside ONE
transaction that commits only when the whole input was valid. Problems are reported together, each
with its line (CSV) or row (query). Amounts are exact or refused (:func:`recon.money.to_minor`);
currencies are ISO 4217 codes; times without an offset are read in the zone given (the CLI passes
``RECON_TIMEZONE``). Each row is stored under its provider account (:mod:`recon.ingest.accounts`:
its ``provider_account`` cell, ``--account``, or the one account configured); the same transaction
id under two accounts is two payouts.

Rows of one account and transaction id that agree on what makes a payout (amount, currency,
merchant_reference, bank account) are one payout recorded twice (a retry's row, say, with its own
``created``): the first row read is the payout, the others are merged into it and counted ("N
merged"). The first, not the earliest ``created``: a later batch cannot change a row an earlier
batch wrote without a second write, and an export in time order lists the first attempt first.
Rows of one id that disagree refuse the file, naming both lines. They are found with an in-memory
map from (account, id) to a 64-bit digest of those fields and its first line: about a hundred
bytes per id, and the same code on every database (a temporary table would behave differently on
each, and MySQL cannot join one to itself).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from recon.constants import MAX_ID_LENGTH
from recon.errors import InputError
from recon.ingest.accounts import COLUMN as ACCOUNT_COLUMN
from recon.ingest.accounts import ImportAccounts
from recon.ingest.allornothing import all_or_nothing
from recon.ingest.csvread import column_index, read_csv
from recon.money import normalise_currency, parse_decimal, shown, to_minor
from recon.store.db import ensure_schema
from recon.store.payouts import UpsertCounts, upsert_payouts
from recon.store.provider_items import insert_attempts
from recon.store.source import read_source
from recon.timeparse import parse_timestamp
from recon.words import counted

REQUIRED_COLUMNS = ("transaction_id", "merchant_reference", "amount", "currency")
OPTIONAL_COLUMNS = ("bank_account_id", "customer_id", "country_id", "created", "eta")
# What a row is, and (besides) whose: the account's column is read by :mod:`recon.ingest.accounts`.
RECORD_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
KNOWN_COLUMNS = (*RECORD_COLUMNS, ACCOUNT_COLUMN)
BATCH_ROWS = 10_000
ONLY_DEFAULT = ImportAccounts()  # the default account alone: every row is its own
_DIGEST_MASK = 2**64 - 1
_MAX_DECIMAL_EXPONENT = 1000  # a database DECIMAL beyond this is no amount, id or time


@dataclass(frozen=True)
class ImportResult:
    """What an import did."""

    source: str
    rows: int
    counts: UpsertCounts
    seconds: float
    ignored_columns: tuple[str, ...] = ()
    merged: int = 0  # rows of an id already read, agreeing with it: one payout
    attempts: int = 0  # new creates without a transaction id (their outcome is unknown)

    def summary(self) -> str:
        """The one line the CLI prints."""
        c = self.counts
        rows = counted(self.rows, "row")
        merged = f", {self.merged} merged" if self.merged else ""
        return (
            f"imported payouts from {self.source}: {rows}, {c.inserted} inserted, "
            f"{c.updated} updated, {c.unchanged} unchanged{merged}"
            + (
                f", {counted(self.attempts, 'create')} without a transaction id"
                if self.attempts
                else ""
            )
            + f" in {self.seconds:.2f} s"
        )


# --- one row ---------------------------------------------------------------------------------


def _text(name: str, value: object) -> str | None:
    """A cell as stripped text (``None`` when empty); database values are converted exactly."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool):
        raise ValueError(f"{name} is a boolean")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return _decimal_text(name, value)
    if isinstance(value, datetime):
        return value.isoformat()  # a naive one stays naive: read in the import's zone
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        raise ValueError(
            f"{name} is a floating-point number ({value!r}), which cannot be exact: "
            "cast it to DECIMAL or text in the query"
        )
    raise ValueError(f"{name} has an unsupported type {type(value).__name__}")


def _decimal_text(name: str, value: Decimal) -> str:
    """A database DECIMAL as plain digits; one with a huge exponent is refused, not expanded."""
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int):
        raise ValueError(f"{name} {value} is not a number")
    if value and not -_MAX_DECIMAL_EXPONENT < exponent < _MAX_DECIMAL_EXPONENT:
        raise ValueError(f"{name} {shown(value)} is out of range")
    return format(value, "f")


def read_query(path: Path) -> str:
    """The SQL of a query file (UTF-8); ``InputError`` naming the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the query: {exc}") from None


def validate_row(
    cells: Mapping[str, object], zone: tzinfo = UTC
) -> tuple[dict[str, Any] | None, list[str]]:
    """Check one input row; returns the payout record for the store, or the list of problems.

    ``created`` and ``eta`` without an offset are wall-clock times in ``zone``.
    """
    problems: list[str] = []
    text: dict[str, str | None] = {}
    unreadable: set[str] = set()  # already reported: not "missing" as well
    for name in RECORD_COLUMNS:
        value = cells.get(name)
        try:
            # a CSV's cell is text already (the usual case, kept fast); a database's is converted
            read = (value.strip() or None) if type(value) is str else _text(name, value)
            if read is not None and "\x00" in read:  # no database column holds one
                raise ValueError(f"{name} contains a NUL character")
            text[name] = read
        except ValueError as exc:
            problems.append(str(exc))
            text[name] = None
            unreadable.add(name)
    record: dict[str, Any] = {}

    for name in ("transaction_id", "merchant_reference"):
        value = text[name]
        if value is None:
            # A row without a transaction id is a create whose outcome is unknown:
            # kept as an attempt when it has its reference, amount and currency.
            if name not in unreadable and name != "transaction_id":
                problems.append(f"{name} is missing")
        elif len(value) > MAX_ID_LENGTH:
            problems.append(f"{name} is longer than {MAX_ID_LENGTH} characters")
        record[name] = value
    for name in ("bank_account_id", "customer_id", "country_id"):
        value = text[name]
        if value is not None and len(value) > (16 if name == "country_id" else MAX_ID_LENGTH):
            problems.append(f"{name} {value[:20]!r}... is too long")
        record[name] = value

    currency: str | None = None
    if text["currency"] is None:
        if "currency" not in unreadable:
            problems.append("currency is missing")
    else:
        try:
            currency = normalise_currency(text["currency"])
        except ValueError as exc:
            problems.append(str(exc))
    record["currency"] = currency

    amount_text = text["amount"]
    if amount_text is None:
        if "amount" not in unreadable:
            problems.append("amount is missing")
    else:
        try:
            amount = parse_decimal(amount_text)
        except ValueError:
            quoted = repr(amount_text) if len(amount_text) <= 40 else repr(amount_text[:40]) + "..."
            problems.append(f"amount {quoted} is not a plain decimal number (e.g. 100.10)")
        else:
            if amount <= 0:
                problems.append(f"amount {shown(amount)} is not positive")
            elif currency is not None:
                try:
                    record["amount_minor"] = to_minor(amount, currency)
                except ValueError as exc:
                    problems.append(f"amount {exc}")

    for name in ("created", "eta"):
        value = text[name]
        record[name] = None
        if value is not None:
            try:
                record[name] = parse_timestamp(value, zone)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")

    return (None, problems) if problems else (record, [])


# What makes two rows of one transaction id one payout: they agree on these (normalised).
IDENTITY_FIELDS = ("amount_minor", "currency", "merchant_reference", "bank_account_id")


def row_digest(record: Mapping[str, Any]) -> int:
    """A 64-bit digest of what makes a payout one (:data:`IDENTITY_FIELDS`), to tell a payout
    recorded twice (merged) from a conflict.

    Python's own hash of the normalised values: stable within one process, which is all an import
    needs, and a chance of 2**-64 that two different rows of one id look alike.
    """
    return hash(tuple(record.get(name) for name in IDENTITY_FIELDS)) & _DIGEST_MASK


# --- a whole input ----------------------------------------------------------------------------


class _SeenIds:
    """Every (account, id) read so far, with its first line and data digest packed into one int."""

    def __init__(self) -> None:
        # One map per account: a tuple key per id would cost about 60 bytes more each.
        self._seen: dict[str, dict[str, int]] = {}

    def first_conflict(
        self, account: str, record: Mapping[str, Any], line: int
    ) -> tuple[bool, int | None]:
        """(already seen in ``account``, first line if the earlier row had different data)."""
        digest = row_digest(record)
        tid = record["transaction_id"]
        seen = self._seen.setdefault(account, {})
        packed = seen.get(tid)
        if packed is None:
            seen[tid] = (line << 64) | digest
            return False, None
        if packed & _DIGEST_MASK == digest:
            return True, None
        return True, packed >> 64


Cells = Mapping[str, object]
# Each input row: its line (or row) number, and its cells or why it could not be split into cells.
NumberedRow = tuple[int, Cells | str]


@dataclass(frozen=True)
class _Options:
    zone: tzinfo
    now: datetime | None
    batch_rows: int
    accounts: ImportAccounts


def _account_cell(cells: Cells) -> tuple[str | None, str | None]:
    """The row's ``provider_account`` as stripped text (None: empty), or why it is unreadable."""
    try:
        return _text(ACCOUNT_COLUMN, cells.get(ACCOUNT_COLUMN)), None
    except ValueError as exc:
        return None, str(exc)


def _import_rows(
    engine: Engine,
    source: str,
    where: str,
    rows: Iterator[NumberedRow],
    ignored: Sequence[str],
    options: _Options,
) -> ImportResult:
    started = time.monotonic()
    seen = _SeenIds()
    counts = UpsertCounts()
    total = merged = 0
    new_attempts = 0
    with all_or_nothing(engine, source) as (conn, problems):
        while batch := list(itertools.islice(rows, options.batch_rows)):
            records: dict[str, list[dict[str, Any]]] = {}
            attempts: dict[str, list[dict[str, Any]]] = {}
            for number, cells in batch:
                total += 1
                if isinstance(cells, str):
                    problems.add(f"{where} {number}", [cells])
                    continue
                named, unreadable = _account_cell(cells)
                account, no_account = options.accounts.of_row(named)
                record, errors = validate_row(cells, options.zone)
                errors = [e for e in (unreadable or no_account,) if e is not None] + errors
                if record is None or account is None:
                    problems.add(f"{where} {number}", errors)
                    continue
                if record["transaction_id"] is None:
                    attempts.setdefault(account, []).append(record)
                    continue
                repeated, first = seen.first_conflict(account, record, number)
                if first is not None:
                    problems.add(
                        f"{where} {number}",
                        [
                            f"transaction_id {record['transaction_id']!r} is also on {where} "
                            f"{first} with another amount, currency, merchant_reference or "
                            "bank_account_id"
                        ],
                    )
                elif repeated:
                    merged += 1
                else:
                    records.setdefault(account, []).append(record)
            if problems:
                continue  # nothing more is written: the transaction will be rolled back
            for account, part in sorted(records.items()):
                counts += upsert_payouts(conn, part, now=options.now, account=account)
            for account, part in sorted(attempts.items()):
                new_attempts += insert_attempts(
                    conn, part, now=options.now or datetime.now(UTC), account=account
                )
    return ImportResult(
        source,
        total,
        counts,
        time.monotonic() - started,
        tuple(ignored),
        merged=merged,
        attempts=new_attempts,
    )


def import_payouts_csv(
    engine: Engine,
    path: Path,
    *,
    zone: tzinfo = UTC,
    now: datetime | None = None,
    batch_rows: int = BATCH_ROWS,
    accounts: ImportAccounts = ONLY_DEFAULT,
) -> ImportResult:
    """Import a CSV file of payouts (header line first); all rows or none.

    ``zone`` is where times without an offset are read (the CLI passes ``RECON_TIMEZONE``);
    ``accounts`` which account each row is stored under (default: the default account only).
    """
    ensure_schema(engine)
    with read_csv(path, known=KNOWN_COLUMNS, required=REQUIRED_COLUMNS) as (rows, ignored):
        first = next(rows, None)
        if first is not None and not isinstance(first[1], str):  # a record: its columns known
            accounts.check_columns(str(path), ACCOUNT_COLUMN in first[1], "nothing was imported")
        rows = itertools.chain([first] if first is not None else [], rows)
        options = _Options(zone, now, batch_rows, accounts)
        return _import_rows(engine, str(path), "line", rows, ignored, options)


def import_payouts_sql(
    engine: Engine,
    query: str,
    source_url: str,
    *,
    zone: tzinfo = UTC,
    now: datetime | None = None,
    batch_rows: int = BATCH_ROWS,
    accounts: ImportAccounts = ONLY_DEFAULT,
) -> ImportResult:
    """Import payouts from a read-only query against the merchant's database; all rows or none.

    ``zone`` is where times without an offset (naive timestamp columns) are read; ``accounts``
    which account each row is stored under (a ``provider_account`` column of the query, or one).
    """
    ensure_schema(engine)
    with read_source(source_url, query, batch_rows) as result:
        index, ignored = column_index(
            result.columns, "the query", known=KNOWN_COLUMNS, required=REQUIRED_COLUMNS
        )

        def cells() -> Iterator[NumberedRow]:
            number = 0
            for batch in result.batches:
                for row in batch:
                    number += 1
                    yield number, {name: row[i] for name, i in index.items()}

        accounts.check_columns("the query", ACCOUNT_COLUMN in index, "nothing was imported")
        options = _Options(zone, now, batch_rows, accounts)
        return _import_rows(engine, "the query", "row", cells(), ignored, options)
