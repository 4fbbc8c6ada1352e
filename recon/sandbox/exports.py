"""The provider's transaction export: a task per request, a CSV of a settlement window per task.

``transaction.csv_export`` takes a window of settlement times (``settled_from`` inclusive,
``settled_to`` exclusive, epoch seconds) and optional ``types``, and answers a task id.
``export_task.get`` answers the task's state: each ask moves it one step, queued (0) on the first,
running (1) on the second, and done (2) on the third and after (or, when a fault drew it, an error
answer ``export_failed``). The task is made into its file at the ask that finds it done: every
row of that merchant settled in the window then, cut to the cap, behind an unguessable url that
lives 24 hours of sandbox time (then state 4, and the url answers 410).

The file's rows are built from the records, never from overridden answers: what the provider holds.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from typing import Any

from recon.constants import TxState, TxType
from recon.sandbox.errors import SandboxError, invalid
from recon.sandbox.records import MovementRecord, TxRecord, epoch

ARTIFACT_LIFETIME_SECONDS = 24 * 3600.0
ASKS_BEFORE_DONE = 2  # queued, then running: the third ask finds the task finished
ARTIFACT_PATH = "/artifacts/"

# The file's columns, named after the transaction record's fields (interface 2.2).
COLUMNS = (
    "id",
    "type",
    "state",
    "amount",
    "currency_id",
    "merchant_reference",
    "created",
    "settled",
    "fee_amount",
    "fee_id",
    "related_transaction_id",
)
# The type column: the interface's numbers where it has them, names where it has none.
PAYOUT = str(int(TxType.PAYOUT))
RETURNED_FUNDS = str(int(TxType.RETURNED_FUNDS))
FEE = "fee"
TOP_UP = "top_up"
MERCHANT_WITHDRAWAL = "merchant_withdrawal"
TYPES = (PAYOUT, RETURNED_FUNDS, FEE, TOP_UP, MERCHANT_WITHDRAWAL)
MOVEMENTS = (TOP_UP, MERCHANT_WITHDRAWAL)
_SETTLED = str(int(TxState.SETTLED))
# Settlement times are compared as floats, and exactly (as written) only this close to a bound,
# so a file of 100,000 rows needs no Decimal per row to choose them.
_NEAR = 0.002


class TaskState(IntEnum):
    """The sandbox's five task states (the provider numbers five and publishes no names)."""

    QUEUED = 0
    RUNNING = 1
    DONE = 2
    FAILED = 3
    EXPIRED = 4


def failed() -> SandboxError:
    """The answer of ``export_task.get`` about a task that failed (every ask, from then on)."""
    return SandboxError(409, "export_failed", "the export task failed; request the export again")


@dataclass(frozen=True, slots=True)
class Window:
    """What an export asks for: settled in ``[settled_from, settled_to)``, of ``types``."""

    settled_from: Decimal
    settled_to: Decimal
    types: frozenset[str]

    def holds(self, settled: Decimal, kind: str) -> bool:
        return kind in self.types and self.settled_from <= settled < self.settled_to


def _epoch(data: dict[str, Any], name: str) -> Decimal:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise invalid(f"{name}: epoch seconds (a number) are required")
    number = Decimal(value)
    if not number.is_finite() or number < 0:
        raise invalid(f"{name}: must be epoch seconds, 0 or more")
    return number


def _types(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset(TYPES)
    if not isinstance(value, list) or not value:
        raise invalid(f"types: a non-empty list of {', '.join(TYPES)}")
    kinds = set()
    for item in value:
        kind = str(item) if isinstance(item, int | str) and not isinstance(item, bool) else None
        if kind not in TYPES:
            raise invalid(f"types: {str(item)[:40]!r} is not one of {', '.join(TYPES)}")
        kinds.add(kind)
    return frozenset(kinds)


def window_of(data: dict[str, Any]) -> Window:
    """The window a ``transaction.csv_export`` body asks for (a 400 naming a wrong field)."""
    start, end = _epoch(data, "settled_from"), _epoch(data, "settled_to")
    if not start < end:
        raise invalid("settled_to: must be after settled_from")
    return Window(start, end, _types(data.get("types")))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _at(seconds: float) -> Decimal:
    at = epoch(seconds)
    assert at is not None
    return at


def _time(seconds: float | None) -> str:
    return _text(epoch(seconds))


def rows_of(
    merchant_id: str,
    window: Window,
    transactions: Iterable[TxRecord],
    movements: Iterable[MovementRecord],
    cap: int,
) -> list[list[str]]:
    """The first ``cap`` rows of ``merchant_id`` settled in ``window``, oldest settlement first
    (a fee right after its payout when both fall at one moment)."""
    start, end = float(window.settled_from), float(window.settled_to)

    def holds(seconds: float | None, kind: str) -> bool:
        if seconds is None or kind not in window.types:
            return False
        if start + _NEAR <= seconds < end - _NEAR:
            return True
        # Near a bound: exactly, on the time as the file writes it (to the millisecond).
        return start - _NEAR <= seconds < end + _NEAR and window.holds(_at(seconds), kind)

    # (settled, id, 0 for a record's own row or 1 for its fee, the record): one tuple per row.
    found: list[tuple[float, str, int, TxRecord | MovementRecord]] = []
    for tx in transactions:
        if tx.merchant_id != merchant_id:
            continue
        if tx.settled is not None and holds(tx.settled, str(tx.type)):
            found.append((tx.settled, tx.id, 0, tx))
        if tx.fee_id is not None and tx.fee_charged is not None and holds(tx.fee_charged, FEE):
            found.append((tx.fee_charged, tx.id, 1, tx))
    for movement in movements:
        if movement.merchant_id == merchant_id and holds(movement.settled, movement.kind):
            found.append((movement.settled, movement.id, 0, movement))
    found.sort(key=lambda row: row[:3])
    # Only the rows kept are written out: a window over the cap costs no text for the rest.
    return [_row(record, fee=bool(rank)) for _, _, rank, record in found[:cap]]


def _row(record: TxRecord | MovementRecord, *, fee: bool) -> list[str]:
    if isinstance(record, MovementRecord):
        return _movement_row(record)
    return _fee_row(record) if fee else _transaction_row(record, str(record.type))


def _transaction_row(tx: TxRecord, kind: str) -> list[str]:
    return [
        tx.id,
        kind,
        str(tx.state),
        _text(tx.amount),
        tx.currency.lower(),
        _text(tx.merchant_reference),
        _time(tx.created),
        _time(tx.settled),
        _text(tx.fee_amount),
        _text(tx.fee_id),
        _text(tx.related_transaction_id),
    ]


def _fee_row(payout: TxRecord) -> list[str]:
    """The fee as a row of its own: its id is the payout's ``fee_id``, and it names the payout."""
    assert payout.fee_id is not None
    charged = _time(payout.fee_charged)
    return [
        payout.fee_id,
        FEE,
        _SETTLED,
        _text(payout.fee_amount),
        payout.currency.lower(),
        _text(payout.merchant_reference),
        charged,
        charged,
        "",
        "",
        payout.id,
    ]


def _movement_row(movement: MovementRecord) -> list[str]:
    return [
        movement.id,
        movement.kind,
        _SETTLED,
        _text(movement.amount),
        movement.currency.lower(),
        _text(movement.merchant_reference),
        _time(movement.created),
        _time(movement.settled),
        "",
        "",
        "",
    ]


def render(rows: list[list[str]]) -> bytes:
    """The CSV file: a header of :data:`COLUMNS`, ``,``-delimited, CRLF, UTF-8 without a BOM."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


@dataclass(slots=True)
class ExportTask:
    """One requested export, from its request to its file's expiry."""

    id: str
    merchant_id: str
    window: Window
    created: float
    fails: bool  # drawn at the request (FaultConfig.export_failure_rate)
    asked: int = 0
    token: str | None = None  # the artifact url's last segment, once made
    rows: int = 0
    expires: float | None = None
    content: bytes | None = None  # dropped when the artifact expires

    def ask(self, now: float) -> TaskState:
        """Count one ``export_task.get`` and say the state it finds: queued, running, then done
        (or failed, when a fault drew it); done turns expired at ``expires``."""
        before = self.asked
        self.asked += 1
        if before < ASKS_BEFORE_DONE:
            return TaskState(before)
        if self.fails:
            return TaskState.FAILED
        if self.expires is not None and now >= self.expires:
            return TaskState.EXPIRED
        return TaskState.DONE

    def answer(self, state: TaskState, base_url: str) -> dict[str, Any]:
        """The ``export_task.get`` answer in ``state`` (a failed task is an error answer)."""
        if state == TaskState.FAILED:
            raise failed()
        body: dict[str, Any] = {"id": self.id, "state": int(state)}
        if state in (TaskState.DONE, TaskState.EXPIRED):
            body["artifact_url"] = f"{base_url.rstrip('/')}{ARTIFACT_PATH}{self.token}"
            body["rows"] = self.rows
            body["expires"] = epoch(self.expires)
        return body
