"""The provider's transaction export as recon reads it: one :class:`ExportRow` per row of a file.

A neutral module, like :mod:`recon.decision`: the importer (:mod:`recon.ingest.provider_export`)
makes rows of a file through the ``[export]`` mapping, the store keeps them
(:mod:`recon.store.export_rows`), and the core matches them against the record
(:mod:`recon.reconcile.export_match`) and closes each month's balance
(:mod:`recon.reconcile.balance`) against the closing balances recorded from the provider's back
office (:class:`Closing`). Nothing here reads, writes or decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import StrEnum


class ExportKind(StrEnum):
    """What a row of the export is, by the ``[export.types]`` value of its type column."""

    PAYOUT = "payout"
    RETURNED_FUNDS = "returned_funds"
    FEE = "fee"
    TOP_UP = "top_up"
    MERCHANT_WITHDRAWAL = "merchant_withdrawal"
    OTHER = "other"  # a type the mapping does not name: kept, never matched or summed


def days(start: date, end: date) -> list[date]:
    """Every day from ``start`` through ``end`` (none when ``end`` is before ``start``)."""
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


# The kinds whose rows are money leaving the merchant's balance at the provider.
MONEY_OUT = frozenset({ExportKind.PAYOUT, ExportKind.FEE, ExportKind.MERCHANT_WITHDRAWAL})


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One row of a provider's export file, read through the mapping.

    ``line``: its line in the file (the header is line 1). ``amount_minor`` and
    ``fee_amount_minor`` are minor units of ``currency`` (upper-case ISO 4217). ``state`` is the
    provider's state as a number (names read as in its answers); ``state_raw`` the text as
    written. ``extra``: the columns the mapping does not name, header to text.
    """

    line: int
    transaction_id: str
    kind: ExportKind
    type_raw: str
    state: int | None
    state_raw: str
    amount_minor: int
    currency: str
    merchant_reference: str | None = None
    settled: datetime | None = None  # UTC
    created: datetime | None = None  # UTC
    fee_amount_minor: int | None = None
    fee_id: str | None = None
    related_transaction_id: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Closing:
    """One closing balance recorded from the provider's back office: ``closing_minor`` (minor
    units of ``currency``) at the end of ``day``. ``record_id`` orders the records of a day: the
    latest stands, an earlier one is restated."""

    account: str
    currency: str
    day: date
    closing_minor: int
    record_id: int
    note: str | None = None
    recorded_at: datetime | None = None  # UTC
    recorded_by: str | None = None
