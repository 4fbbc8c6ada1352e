"""The checks a batch of journal lines passes before it leaves for the ledger.

Two rules, over the lines as stored (:class:`~recon.reconcile.journal.JournalLine`):

- every entry (one ``journal_id``) balances per currency: its debits equal its credits;
- every ``provider_balance`` line of a ``payout_fee`` entry is a credit (the fee takes money out of
  the provider balance), and of a reversal of one a debit. A fee booked on the wrong side still
  balances, so only this sign test catches it.

:func:`unbalanced` names each entry that breaks a rule, in the order the lines came; an empty list
is a batch that may be written. :func:`currency_totals` adds lines up per currency (never across
currencies), balanced when debits equal credits: the one sum the entry check, the export's
manifest and the report's journal checks all use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from recon.money import format_minor
from recon.reconcile.journal import Event, JournalLine, Role


@dataclass(frozen=True, slots=True)
class Unbalanced:
    """One entry the checks refuse, and why."""

    journal_id: str
    provider_account: str
    event: str
    transaction_id: str
    reason: str

    def __str__(self) -> str:
        return (
            f"entry {self.journal_id} ({self.event} of {self.transaction_id}, provider account "
            f"{self.provider_account}): {self.reason}"
        )


@dataclass(frozen=True, slots=True)
class CurrencyTotal:
    """Some lines of one currency added up: how many, in how many entries (and of those, how many
    reverse another and how many are late), their debits and their credits."""

    currency: str
    lines: int
    entries: int
    reversals: int
    late: int
    debit_minor: int
    credit_minor: int

    @property
    def balanced(self) -> bool:
        return self.debit_minor == self.credit_minor


def currency_totals(lines: Iterable[JournalLine]) -> dict[str, CurrencyTotal]:
    """``lines`` added up per currency, in the order the currencies first come."""
    groups: dict[str, list[JournalLine]] = {}
    for line in lines:
        groups.setdefault(line.currency, []).append(line)
    out = {}
    for currency, group in groups.items():
        firsts: dict[str, JournalLine] = {}
        for line in group:
            firsts.setdefault(line.journal_id, line)
        heads = firsts.values()
        out[currency] = CurrencyTotal(
            currency=currency,
            lines=len(group),
            entries=len(heads),
            reversals=sum(head.reverses is not None for head in heads),
            late=sum(head.late for head in heads),
            debit_minor=sum(line.debit_minor for line in group),
            credit_minor=sum(line.credit_minor for line in group),
        )
    return out


def by_entry(lines: Iterable[JournalLine]) -> dict[str, list[JournalLine]]:
    """``lines`` grouped by entry (``journal_id``), in the order the entries first come."""
    entries: dict[str, list[JournalLine]] = {}
    for line in lines:
        entries.setdefault(line.journal_id, []).append(line)
    return entries


def unbalanced(lines: Iterable[JournalLine]) -> list[Unbalanced]:
    """The entries among ``lines`` that do not balance per currency, or book a fee on the wrong
    side of the provider balance; one problem per entry, the first found."""
    problems = []
    for journal_id, group in by_entry(lines).items():
        reason = _balance(group) or _fee_side(group)
        if reason is not None:
            head = group[0]
            problems.append(
                Unbalanced(
                    journal_id=journal_id,
                    provider_account=head.provider_account,
                    event=str(head.event),
                    transaction_id=head.transaction_id,
                    reason=reason,
                )
            )
    return problems


def _balance(group: list[JournalLine]) -> str | None:
    for currency, total in sorted(currency_totals(group).items()):
        if not total.balanced:
            debit, credit = total.debit_minor, total.credit_minor
            return (
                f"debits {format_minor(debit, currency)} {currency} and credits "
                f"{format_minor(credit, currency)} {currency} differ"
            )
    return None


def _fee_side(group: list[JournalLine]) -> str | None:
    head = group[0]
    if head.event != Event.PAYOUT_FEE:
        return None
    reversal = head.reverses is not None
    side = "debit" if reversal else "credit"
    for line in group:
        if line.role != Role.PROVIDER_BALANCE:
            continue
        debit, credit = line.debit_minor, line.credit_minor
        right = (debit > 0 and credit == 0) if reversal else (credit > 0 and debit == 0)
        if not right:
            what = "the reversal of a fee" if reversal else "a fee"
            return (
                f"line {line.line} books {what} on the wrong side of provider_balance "
                f"(account {line.account}): it must be a {side}"
            )
    return None
