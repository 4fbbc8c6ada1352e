"""What a re-import does to a stored payout record (the record is evidence too). Pure.

A neutral module, as :mod:`recon.fields`: the store's upsert (:mod:`recon.store.payouts`) applies
these rules and the run's core (:mod:`recon.reconcile.changes`) reads :data:`EVIDENCE_FIELDS`.

- An empty ``created`` or ``eta`` keeps the stored value: a run fills them from the provider's
  answer where the record had none, and the merchant's export, imported again, still has none.
  (A merchant cannot clear one by importing an empty cell; a different value replaces it.)
- A row equal to the stored record after that is unchanged: nothing is written.
- Every field that differs in a payout a run already reconciled is a :class:`FieldChange`, both
  values kept as text. A change of an :data:`EVIDENCE_FIELDS` field is what the provider's answer
  is compared with: the next run asks again and reports ``record_changed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recon.money import format_minor

# Record fields the provider's answer is checked against (amount as minor units with currency).
EVIDENCE_FIELDS: tuple[str, ...] = ("amount", "currency", "bank_account_id", "merchant_reference")
# Record fields a run fills in from the provider's answer where the record has none.
FILLED_BY_RUNS: tuple[str, ...] = ("created", "eta")


@dataclass(frozen=True)
class FieldChange:
    """One field of a stored record that an import changed: its value before and after, as text
    (an amount as ``100.00 SEK``, a time in ISO 8601, ``None`` for empty)."""

    transaction_id: str
    field: str
    before: str | None
    after: str | None


def merged(stored: Mapping[str, Any] | None, incoming: Mapping[str, Any]) -> dict[str, Any]:
    """The record to store: ``incoming``, with the fields runs fill kept where it has none."""
    record = dict(incoming)
    if stored is not None:
        for name in FILLED_BY_RUNS:
            if record.get(name) is None and stored.get(name) is not None:
                record[name] = stored[name]
    return record


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _amount(record: Mapping[str, Any]) -> str:
    currency = str(record["currency"])
    return f"{format_minor(int(record['amount_minor']), currency)} {currency}"


def field_changes(
    stored: Mapping[str, Any], record: Mapping[str, Any], columns: Sequence[str]
) -> list[FieldChange]:
    """Each of ``columns`` (the record's) that differs between ``stored`` and ``record``, in
    order; ``amount_minor`` is the field ``amount``, shown with its side's currency."""
    tid = str(record["transaction_id"])
    changes = []
    for column in columns:
        if column == "transaction_id" or stored.get(column) == record.get(column):
            continue
        if column == "amount_minor":
            changes.append(FieldChange(tid, "amount", _amount(stored), _amount(record)))
        else:
            before, after = _text(stored.get(column)), _text(record.get(column))
            changes.append(FieldChange(tid, column, before, after))
    return changes
