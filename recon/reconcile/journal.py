"""The journal: the money movements the record proves, as double-entry entries never edited.

One pure function, :func:`journal_entries`: from each payout's money as the record now says it
(:class:`PayoutMoney`) and the entries already made (:class:`Booked`), the entries a run adds.

- A settled payout (``settled`` or ``returned``) is due ``payout_settled`` (its amount) and, when
  the provider charged one, ``payout_fee`` (the fee); a confirmed return on it is due
  ``payout_returned`` (the returned amount). Failed, aborted and open payouts are due nothing.
  A payout the provider settled that the record lacks (``recorded`` false) is due
  ``unrecorded_payout``: its amount left the provider balance for the suspense account until the
  merchant records it (then it is reversed, and the recorded payout's settlement booked).
- What is due and not booked is booked (version 1, or the next version after a reversal). What is
  booked and no longer due, or due with another amount or currency, is reversed: a new entry with
  the original's lines swapped, ``reverses`` naming it, dated the run's day; then the new amount
  is booked as the next version. Nothing booked is changed.
- ``event_date``: a settlement and its fee, the day the provider settled it (``settled_at``, else
  the day a run first saw it settled), in the configured time zone; a return and a reversal, the
  run's day. ``posting_date``: the event date, or the first day after ``locked_through`` when the
  event date is on or before it (the entry is ``late``).

A ``journal_id`` is derived from the provider account, the event, the payout and the version (a
reversal's from the entry it reverses), so the same facts give the same ids in any store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from recon.constants import SETTLED_OUTCOMES
from recon.errors import ConfigError, InputError


class Event(StrEnum):
    """What moved the money an entry books."""

    PAYOUT_SETTLED = "payout_settled"
    PAYOUT_FEE = "payout_fee"
    PAYOUT_RETURNED = "payout_returned"
    UNRECORDED_PAYOUT = "unrecorded_payout"


class Role(StrEnum):
    """The ledger accounts the journal books to, by what they hold (``[journal.accounts]``)."""

    PAYOUTS_PAYABLE = "payouts_payable"
    PROVIDER_BALANCE = "provider_balance"
    FEE_EXPENSE = "fee_expense"
    SUSPENSE = "suspense"


# Each event's (debit, credit): money out of the provider balance pays the payable and the fee;
# a return puts it back. A fee adds to the money out: its credit is always the provider balance.
# Money out for a payout the record lacks waits in suspense until the merchant records it.
SIDES: Mapping[Event, tuple[Role, Role]] = {
    Event.PAYOUT_SETTLED: (Role.PAYOUTS_PAYABLE, Role.PROVIDER_BALANCE),
    Event.PAYOUT_FEE: (Role.FEE_EXPENSE, Role.PROVIDER_BALANCE),
    Event.PAYOUT_RETURNED: (Role.PROVIDER_BALANCE, Role.PAYOUTS_PAYABLE),
    Event.UNRECORDED_PAYOUT: (Role.SUSPENSE, Role.PROVIDER_BALANCE),
}
_ORDER = tuple(Event)


@dataclass(frozen=True, slots=True)
class PayoutMoney:
    """One payout's money as the record says it now."""

    transaction_id: str
    merchant_reference: str | None
    currency: str
    amount_minor: int
    outcome: str | None
    settled_at: datetime | None  # the provider's settled time (UTC)
    settled_since: datetime | None  # when a run first saw it settled (UTC)
    fee_minor: int | None
    returned_minor: int | None
    recorded: bool = True  # False: a payout the provider made that the record lacks


@dataclass(frozen=True, slots=True)
class JournalLine:
    """One line of an entry, as stored and exported (``debit_minor`` or ``credit_minor`` is 0)."""

    provider_account: str
    journal_id: str
    line: int
    number: int
    event: Event
    transaction_id: str
    merchant_reference: str | None
    version: int
    event_date: date
    posting_date: date
    late: bool
    reverses: str | None
    role: Role
    account: str
    debit_minor: int
    credit_minor: int
    currency: str


@dataclass(frozen=True, slots=True)
class Booked:
    """An entry already made that is not a reversal: its lines, and whether one reversed it."""

    lines: tuple[JournalLine, ...]
    reversed: bool

    @property
    def amount_minor(self) -> int:
        return sum(line.debit_minor for line in self.lines)

    @property
    def head(self) -> JournalLine:
        return self.lines[0]


@dataclass(frozen=True, slots=True)
class JournalParams:
    """What a night's journal is made with: its account, codes per role, zone and dates."""

    provider_account: str
    codes: Mapping[Role, str]
    zone: ZoneInfo
    as_of: datetime
    locked_through: date | None = None
    setting: str = "[journal.accounts]"  # where the codes are configured, for the error


def journal_id(provider_account: str, *parts: object) -> str:
    """A stable id for an entry: the same account and parts always give the same id."""
    text = "\x1f".join(str(part) for part in (provider_account, *parts))
    return "J" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def posting(event_date: date, locked_through: date | None) -> tuple[date, bool]:
    """The posting date of an event and whether it is late: never on or before a closed day."""
    if locked_through is not None and event_date <= locked_through:
        return locked_through + timedelta(days=1), True
    return event_date, False


def local_day(moment: datetime, zone: ZoneInfo) -> date:
    """The day of a UTC moment in ``zone``; a naive one is UTC, never the machine's own zone."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone).date()


def run_day(params: JournalParams) -> date:
    """The run's own day in the configured zone; a closed period may not end after it."""
    day = local_day(params.as_of, params.zone)
    if params.locked_through is not None and params.locked_through > day:
        raise InputError(
            f"RECON_JOURNAL_LOCKED_THROUGH is {params.locked_through.isoformat()}, after the "
            f"run's own day {day.isoformat()}: a closed period ends on or before today"
        )
    return day


def _due(payout: PayoutMoney, params: JournalParams, today: date) -> dict[Event, tuple[int, date]]:
    """What the payout's facts say is due, per event: the amount and its event date."""
    if payout.outcome not in SETTLED_OUTCOMES:
        return {}
    when = payout.settled_at or payout.settled_since
    settled_on = local_day(when, params.zone) if when is not None else today
    if not payout.recorded:
        return {Event.UNRECORDED_PAYOUT: (payout.amount_minor, settled_on)}
    due = {Event.PAYOUT_SETTLED: (payout.amount_minor, settled_on)}
    if payout.fee_minor:
        due[Event.PAYOUT_FEE] = (payout.fee_minor, settled_on)
    if payout.returned_minor:
        due[Event.PAYOUT_RETURNED] = (payout.returned_minor, today)
    return due


def journal_entries(
    payouts: Iterable[PayoutMoney],
    booked: Iterable[Booked],
    params: JournalParams,
    next_number: int = 1,
) -> list[JournalLine]:
    """The lines a run adds to the journal of ``params.provider_account``, in a stable order
    (by payout id, then event): reversals of what is no longer so, then what is newly due.

    ``booked``: every entry made before that is not itself a reversal. ``next_number``: the
    number the account's next entry takes. A code missing for an event that needs it is
    ``ConfigError`` naming the event and the setting; a closed period ending after the run's day
    is ``InputError``.
    """
    today = run_day(params)
    live: dict[tuple[str, Event], Booked] = {}
    versions: dict[tuple[str, Event], int] = {}
    for done in booked:
        key = (done.head.transaction_id, done.head.event)
        versions[key] = max(versions.get(key, 0), done.head.version)
        if not done.reversed:
            live[key] = done
    made: list[JournalLine] = []
    number = next_number
    facts = {payout.transaction_id: payout for payout in payouts}
    for transaction_id in sorted(facts.keys() | {key[0] for key in live}):
        payout = facts.get(transaction_id)
        due = _due(payout, params, today) if payout is not None else {}
        for event in _ORDER:
            key = (transaction_id, event)
            entry, wanted = live.get(key), due.get(event)
            if entry is not None and (
                wanted is None
                or wanted[0] != entry.amount_minor
                or payout is None
                or payout.currency != entry.head.currency
            ):
                made.extend(_reversal(entry, number, today, params.locked_through))
                number += 1
                entry = None
            if entry is None and wanted is not None and payout is not None:
                version = versions.get(key, 0) + 1
                made.extend(_entry(payout, event, version, wanted, number, params))
                number += 1
    return made


def _entry(
    payout: PayoutMoney,
    event: Event,
    version: int,
    due: tuple[int, date],
    number: int,
    params: JournalParams,
) -> list[JournalLine]:
    amount, event_date = due
    posting_date, late = posting(event_date, params.locked_through)
    entry_id = journal_id(params.provider_account, event, payout.transaction_id, version)
    lines = []
    for index, (role, debit) in enumerate(zip(SIDES[event], (True, False), strict=True), 1):
        code = params.codes.get(role)
        if not code:
            raise ConfigError(
                f"journal: the event {event} needs an account code for {role.value}: set "
                f"{role.value} in {params.setting}"
            )
        lines.append(
            JournalLine(
                provider_account=params.provider_account,
                journal_id=entry_id,
                line=index,
                number=number,
                event=event,
                transaction_id=payout.transaction_id,
                merchant_reference=payout.merchant_reference,
                version=version,
                event_date=event_date,
                posting_date=posting_date,
                late=late,
                reverses=None,
                role=role,
                account=code,
                debit_minor=amount if debit else 0,
                credit_minor=0 if debit else amount,
                currency=payout.currency,
            )
        )
    return lines


def _reversal(
    entry: Booked, number: int, today: date, locked_through: date | None
) -> list[JournalLine]:
    original = entry.head
    posting_date, late = posting(today, locked_through)
    entry_id = journal_id(original.provider_account, "reversal", original.journal_id)
    return [
        replace(
            line,
            journal_id=entry_id,
            number=number,
            event_date=today,
            posting_date=posting_date,
            late=late,
            reverses=original.journal_id,
            debit_minor=line.credit_minor,
            credit_minor=line.debit_minor,
        )
        for line in entry.lines
    ]


def booked_entries(lines: Sequence[JournalLine]) -> list[Booked]:
    """Stored lines as :class:`Booked` entries: every entry that is not a reversal, each marked
    reversed when a reversal names it."""
    by_id: dict[str, list[JournalLine]] = {}
    reversed_ids = set()
    for line in lines:
        if line.reverses is not None:
            reversed_ids.add(line.reverses)
        else:
            by_id.setdefault(line.journal_id, []).append(line)
    return [
        Booked(tuple(sorted(group, key=lambda line: line.line)), entry_id in reversed_ids)
        for entry_id, group in by_id.items()
    ]
