"""The checks a batch of journal lines passes before it leaves for the ledger.

Two rules, over the lines as stored (:class:`~recon.reconcile.journal.JournalLine`):

- every entry (one ``journal_id``) balances per currency: its debits equal its credits;
- every ``provider_balance`` line of a ``payout_fee`` entry is a credit (the fee takes money out of
  the provider balance), and of a reversal of one a debit. A fee booked on the wrong side still
  balances, so only this sign test catches it.

:func:`unbalanced` names each entry that breaks a rule, in the order the lines came; an empty list
is a batch that may be written.
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


def unbalanced(lines: Iterable[JournalLine]) -> list[Unbalanced]:
    """The entries among ``lines`` that do not balance per currency, or book a fee on the wrong
    side of the provider balance; one problem per entry, the first found."""
    entries: dict[str, list[JournalLine]] = {}
    for line in lines:
        entries.setdefault(line.journal_id, []).append(line)
    problems = []
    for journal_id, group in entries.items():
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
    totals: dict[str, tuple[int, int]] = {}
    for line in group:
        debit, credit = totals.get(line.currency, (0, 0))
        totals[line.currency] = (debit + line.debit_minor, credit + line.credit_minor)
    for currency, (debit, credit) in sorted(totals.items()):
        if debit != credit:
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
