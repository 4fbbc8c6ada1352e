"""What the demo reads back from its own reports (payouts.csv, exceptions.csv) to say what
happened."""

from __future__ import annotations

import csv
from collections.abc import Collection
from decimal import Decimal
from pathlib import Path

from recon.words import flag_words


def returned_payouts(report_dir: Path) -> set[str]:
    """Payouts the second night's report calls returned."""
    with (report_dir / "payouts.csv").open(encoding="utf-8", newline="") as handle:
        return {r["transaction_id"] for r in csv.DictReader(handle) if r["outcome"] == "returned"}


def still_open(report_dir: Path) -> list[str]:
    """The second night's findings from the first that nobody acted on: still in Needs action."""
    with (report_dir / "exceptions.csv").open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] == "persisting"]
    return [
        f"still in Needs action on the second night, nobody acted on it: {r['exception_id']} "
        f"{flag_words(r['exception'])} on {r['item_kind']} {r['transaction_id']}"
        for r in rows
    ]


def paid_more_than_once(report_dir: Path) -> list[str]:
    """The second night's double payments: a payout a callback called failed, paid after all and
    re-paid; and a payout the provider made that the record lacks, paid beside its twins."""
    with (report_dir / "exceptions.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        f"paid more than once: {r['transaction_id']} ({r['members'].count(';') + 1} payouts, "
        f"{_money(r['amount_at_stake'], r['currency'])} too much): {r['detail']}"
        for r in rows
        if r["exception"] == "double_payment"
    ]


def groups(report_dir: Path) -> list[str]:
    """The second night's findings about groups of payouts (settled or in flight beside each
    other: possibly paid twice), each with its label."""
    from recon.reconcile.kinds import KINDS

    grouped = {k.name: k.label for k in KINDS if k.grows}
    with (report_dir / "exceptions.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        f"{grouped[r['exception']].lower()}: payout {r['transaction_id']}: {r['detail']}"
        for r in rows
        if r["exception"] in grouped
    ]


def found_by_callback(report_dir: Path, from_export: Collection[str] = ()) -> list[str]:
    """The second night's payouts the provider made that the record lacks: found through a
    callback, or (``from_export``: the ids the provider's export was the first to name) from the
    export alone."""
    with (report_dir / "exceptions.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        (
            "payout found from the provider's export alone (no callback names it), not in the "
            if r["transaction_id"] in from_export
            else "payout found through its callback, not in the "
        )
        + f"record: {r['exception']} {r['transaction_id']}: {r['detail']}"
        for r in rows
        if r["exception"] == "unrecorded_payout"
    ]


def _money(amount: str, currency: str) -> str:
    """An exact amount as people read it: ``2,114.77 DKK``."""
    return f"{Decimal(amount):,} {currency}"


def fee_totals(report_dir: Path) -> list[str]:
    """The second night's fees per currency (from fees.csv) and its fee findings, in words."""
    with (report_dir / "fees.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    lines = []
    for currency in sorted({r["currency"] for r in rows}):
        mine = [r for r in rows if r["currency"] == currency]
        charged = sum(Decimal(r["fee_charged"]) for r in mine if r["fee_charged"])
        agreed = [Decimal(r["fee_expected"]) for r in mine if r["fee_expected"]]
        line = f"fees in {currency}: {_money(str(charged), currency)} charged"
        if agreed:
            line += (
                f", {_money(str(sum(agreed)), currency)} agreed"
                f" (difference {_money(str(charged - sum(agreed)), currency)})"
            )
        lines.append(line)
    with (report_dir / "exceptions.csv").open(encoding="utf-8", newline="") as handle:
        found = [
            r["exception"] for r in csv.DictReader(handle) if r["exception"].startswith("fee_")
        ]
    for name in sorted(set(found)):
        lines.append(f"fee finding: {found.count(name)} × {flag_words(name)}")
    return lines
