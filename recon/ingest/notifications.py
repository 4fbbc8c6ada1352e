"""Provider notifications (interface section 6) in: parse bodies into records, import JSONL files.

A body is decoded with :func:`recon.provider.jsonparse.loads` (amounts stay ``Decimal``), validated
strictly with :func:`recon.provider.models.parse_notification`, and checked once more for what a
database column could not hold (NUL characters, lone surrogates, huge numbers). What passes becomes
a :class:`~recon.store.notifications.NotificationRecord`; what does not raises :class:`BodyError`.

The dedupe key is the SHA-256 of the body's canonical JSON: keys sorted, no whitespace, numbers
written as digits and exponent with trailing zeros removed (``11.10``, ``11.1`` and ``1.11e1`` are
the same amount; nothing passes through float). So the same notification delivered twice, even
re-serialised with other whitespace, key order or number formatting, is stored once. The merchant's
query string is *not* part of the key: the provider may deliver one event to several subscribed
urls, and that is still one event (the first delivery's query string is kept).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from recon.constants import NotificationKind, NotificationSource
from recon.errors import InputError, StoreError
from recon.provider.jsonparse import loads
from recon.provider.models import (
    Notification,
    ReturnedFundsNotification,
    SessionNotification,
    parse_notification,
)
from recon.store.db import describe_db_error, ensure_schema, make_engine, write_transaction
from recon.store.notifications import NotificationRecord, insert_notifications

MAX_DEPTH = 32  # notification bodies are flat; deeper nesting is garbage, not a notification
MAX_AMOUNT_DIGITS = 30  # integer and fraction digits each; keeps the stored text short
MAX_COUNTRY_CHARS = 16  # the country_id column
INT32 = 2**31  # the state column is a 32-bit integer on every database
MAX_PROBLEMS_SHOWN = 50
IMPORT_BATCH = 500


class BodyError(ValueError):
    """A body that is not a notification; ``problems`` are "field: reason" lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class NotJSON(BodyError):
    """The body is not UTF-8 JSON at all."""


class NotANotification(BodyError):
    """The body is JSON, but not a valid notification."""


# --- parsing --------------------------------------------------------------------------------------


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _check_text(value: str, where: str) -> None:
    if "\x00" in value:
        raise NotANotification([f"{where}: contains a NUL character"])
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NotANotification([f"{where}: contains an unpaired surrogate"]) from None


def _number(value: Decimal) -> str:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite: NaN and Infinity never reach here
    all_digits = "".join(map(str, digits))
    text = all_digits.rstrip("0")
    if not text:
        return "0"
    exponent += len(all_digits) - len(text)
    return f"{'-' if sign else ''}{text}e{exponent}"


def canonical_json(value: Any, where: str = "body", depth: int = 0) -> str:
    """The canonical JSON of a decoded body: sorted keys, no spaces, numbers normalised exactly."""
    if depth > MAX_DEPTH:
        raise NotANotification([f"{where}: nested more than {MAX_DEPTH} levels deep"])
    if isinstance(value, dict):
        parts = []
        for key in sorted(value):
            _check_text(key, where)
            parts.append(
                json.dumps(key) + ":" + canonical_json(value[key], _short(key, 40), depth + 1)
            )
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(item, where, depth + 1) for item in value) + "]"
    if isinstance(value, str):
        _check_text(value, where)
        return json.dumps(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return _number(Decimal(value))
    if isinstance(value, Decimal):
        return _number(value)
    # json.loads turns the non-standard literals NaN and Infinity into floats
    raise NotANotification([f"{where}: NaN and Infinity are not JSON numbers"])


def dedupe_key(decoded: Any) -> str:
    """SHA-256 hex of the canonical JSON of a decoded body."""
    return hashlib.sha256(canonical_json(decoded).encode("ascii")).hexdigest()


def _validation_problems(exc: ValueError) -> list[str]:
    if isinstance(exc, ValidationError):
        return [
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
    message = _short(str(exc))
    field = "notification_type" if message.startswith("unknown notification_type") else "body"
    return [f"{field}: {message}"]


def _amount_text(amount: Decimal | None) -> str | None:
    if amount is None:
        return None
    exponent = amount.as_tuple().exponent
    assert isinstance(exponent, int)
    if amount.adjusted() >= MAX_AMOUNT_DIGITS or exponent < -MAX_AMOUNT_DIGITS:
        raise NotANotification([f"amount: out of range ({MAX_AMOUNT_DIGITS} digits at most)"])
    return format(amount, "f")


def _record(
    model: Notification,
    key: str,
    body: str,
    query: str,
    source: NotificationSource,
    received_at: datetime,
) -> NotificationRecord:
    transaction_id = original_id = session_id = amount = country = None
    state: int | None = None
    if isinstance(model, SessionNotification):
        kind, session_id, state = NotificationKind.SESSION, model.session_id, model.session_state
    elif isinstance(model, ReturnedFundsNotification):
        kind, transaction_id = NotificationKind.RETURNED_FUNDS, model.transaction_id
        original_id, amount = model.original_transaction_id, _amount_text(model.amount)
        country = model.country_id
        if country is not None and not 1 <= len(country) <= MAX_COUNTRY_CHARS:
            raise NotANotification([f"country_id: must be 1 to {MAX_COUNTRY_CHARS} characters"])
    else:
        kind, transaction_id = NotificationKind.TRANSACTION, model.transaction_id
        state = model.transaction_state
    if state is not None and not -INT32 <= state < INT32:
        raise NotANotification([f"{kind}_state: out of range for a state"])
    return NotificationRecord(
        dedupe_key=key,
        kind=kind,
        merchant_id=model.merchant_id,
        transaction_id=transaction_id,
        original_transaction_id=original_id,
        session_id=session_id,
        state=state,
        amount=amount,
        country_id=country,
        body=body,
        query=query,
        source=source,
        received_at=received_at,
    )


def parse_body(
    raw: bytes | str,
    *,
    source: NotificationSource,
    query: str = "",
    received_at: datetime | None = None,
) -> NotificationRecord:
    """Parse one raw body into a record to store, or raise ``NotJSON`` / ``NotANotification``."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotJSON([f"body: not UTF-8 text (byte {exc.start})"]) from None
    else:
        text = raw
    try:
        decoded = loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and over-long integers; RecursionError deep nesting
        raise NotJSON([f"body: malformed JSON: {_short(str(exc))}"]) from None
    key = dedupe_key(decoded)
    try:
        model = parse_notification(decoded)
    except ValueError as exc:
        raise NotANotification(_validation_problems(exc)) from None
    return _record(model, key, text, query, source, received_at or datetime.now(UTC))


# --- JSONL import ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """What an import did: bodies read, newly stored, and already known (in the store or file)."""

    bodies: int
    new: int

    @property
    def duplicates(self) -> int:
        return self.bodies - self.new


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                stripped = line.strip()
                if stripped:
                    yield number, stripped
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def check_jsonl(path: Path) -> list[str]:
    """Every problem of a JSONL file of notification bodies, as "line N: field: reason" lines."""
    problems: list[str] = []
    for number, line in _lines(path):
        try:
            parse_body(line, source=NotificationSource.FILE)
        except BodyError as exc:
            problems.extend(f"line {number}: {problem}" for problem in exc.problems)
    return problems


def import_notifications(
    engine: Engine, path: Path, *, received_at: datetime | None = None
) -> ImportCounts:
    """Import a JSONL file of bodies in one transaction: all of it, or nothing if any line is bad.

    The file is read twice (check, then store in batches), so memory stays flat for large files.
    """
    problems = check_jsonl(path)
    if problems:
        shown = problems[:MAX_PROBLEMS_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"… and {len(problems) - len(shown)} more")
        raise InputError(f"{path}: malformed notifications; nothing was imported", shown)
    ensure_schema(engine)
    when = received_at or datetime.now(UTC)
    bodies = new = 0
    batch: list[NotificationRecord] = []
    try:
        with write_transaction(engine) as conn:
            for number, line in _lines(path):
                try:
                    batch.append(parse_body(line, source=NotificationSource.FILE, received_at=when))
                except BodyError as exc:  # the file changed since it was checked
                    raise InputError(f"{path}: line {number}: {exc}") from None
                bodies += 1
                if len(batch) >= IMPORT_BATCH:
                    new += insert_notifications(conn, batch)
                    batch.clear()
            new += insert_notifications(conn, batch)
    except SQLAlchemyError as exc:
        raise StoreError(f"could not store notifications: {describe_db_error(exc)}") from None
    return ImportCounts(bodies=bodies, new=new)


def import_notifications_file(database_url: str, path: Path) -> ImportCounts:
    """``recon import notifications``: import ``path`` into the database at ``database_url``."""
    engine = make_engine(database_url)
    try:
        return import_notifications(engine, path)
    finally:
        engine.dispose()
