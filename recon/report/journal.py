"""The journal entries a night made, as the report shows them: the lines, the totals, the words.

Read from the report's journal (:data:`recon.report.model.JOURNAL_LINE_COLUMNS`, None when no
``[journal]`` is configured): the lines each night made, by entry number and line. Totals add up
per provider account and currency, never across currencies: per ledger account (its code and
what it holds), and over the entries, where debits must equal credits. The words finance reads
(what an event is, what an account holds) are this module's; the lines carry values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from recon.reconcile.journal import Event, JournalLine, Role
from recon.reconcile.journal_check import currency_totals
from recon.report.model import ACCOUNT, JOURNAL_LINE_COLUMNS, ReportInput
from recon.words import money

EVENT_WORDS: dict[str, str] = {
    Event.PAYOUT_SETTLED: "Payout settled",
    Event.PAYOUT_FEE: "Payout fee",
    Event.PAYOUT_RETURNED: "Payout returned",
    Event.UNRECORDED_PAYOUT: "Payout not in the record",
}
ROLE_WORDS: dict[str, str] = {
    Role.PAYOUTS_PAYABLE: "payouts payable",
    Role.PROVIDER_BALANCE: "provider balance",
    Role.FEE_EXPENSE: "fee expense",
    Role.SUSPENSE: "suspense",
}
_ROLES = [r.value for r in Role]
_ENUMS = frozenset({"event", "role"})  # StrEnums, kept as their values
_DTYPES: dict[str, Any] = {
    "line": "int64",
    "number": "int64",
    "version": "int64",
    "late": bool,
    "debit_minor": "Int64",
    "credit_minor": "Int64",
    "batch": "Int64",
}


def journal_frame(
    lines: Sequence[JournalLine], batches: Sequence[int | None] | None = None
) -> pd.DataFrame:
    """The report's journal frame of ``lines`` (in their order), each with its export batch
    (``batches``; None: none exported)."""
    marks = list(batches) if batches is not None else [None] * len(lines)
    columns: dict[str, list[object]] = {c: [] for c in JOURNAL_LINE_COLUMNS}
    for line, batch in zip(lines, marks, strict=True):
        for name in JOURNAL_LINE_COLUMNS:
            value = batch if name == "batch" else getattr(line, name)
            columns[name].append(str(value) if name in _ENUMS else value)
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in columns.items()})
    return frame.astype(_DTYPES)


def no_journal() -> pd.DataFrame:
    """A configured journal's frame of a night that made no entry (a dry run, a quiet night)."""
    return journal_frame([])


def journal_lines(data: ReportInput) -> pd.DataFrame:
    """The journal's lines in the report's order: the accounts' order, then entry and line."""
    frame = data.journal if data.journal is not None else no_journal()
    order = {a: n for n, a in enumerate(data.accounts)}
    rank = frame[ACCOUNT].astype(object).map(order).fillna(len(order))
    return (
        frame.assign(_rank=rank)
        .sort_values(["_rank", "number", "line"], kind="stable")
        .drop(columns="_rank")
        .reset_index(drop=True)
    )


def journal_totals(data: ReportInput) -> pd.DataFrame:
    """Per provider account, currency and ledger account (``account`` code and ``role``): the
    debits and credits of the night's lines, in the report's account order, then currency,
    then the roles' order."""
    lines = journal_lines(data)
    keys = [ACCOUNT, "currency", "role", "account"]
    if lines.empty:
        columns = [*keys, "debit_minor", "credit_minor"]
        return pd.DataFrame({c: pd.Series(dtype="Int64" if c.endswith("_minor") else object)
                             for c in columns})  # fmt: skip
    work = lines.astype(dict.fromkeys(keys, object))
    summed = work.groupby(keys, sort=False)[["debit_minor", "credit_minor"]].sum().reset_index()
    order = {a: n for n, a in enumerate(data.accounts)}
    summed = summed.assign(
        _a=summed[ACCOUNT].map(order).fillna(len(order)),
        _r=summed["role"].map({r: n for n, r in enumerate(_ROLES)}),
    )
    return (
        summed.sort_values(["_a", "currency", "_r", "account"], kind="stable")
        .drop(columns=["_a", "_r"])
        .astype({"debit_minor": "Int64", "credit_minor": "Int64"})
        .reset_index(drop=True)
    )


def frame_lines(frame: pd.DataFrame) -> list[JournalLine]:
    """A journal frame's lines back as the core's :class:`JournalLine` (in the frame's order)."""
    names = [n for n in JOURNAL_LINE_COLUMNS if n != "batch"]
    cells = frame[names].astype(object)
    out = []
    for values in cells.where(cells.notna(), None).to_dict("records"):
        values["event"], values["role"] = Event(values["event"]), Role(values["role"])
        values["late"] = bool(values["late"])
        out.append(JournalLine(**{str(k): v for k, v in values.items()}))
    return out


def journal_checks(data: ReportInput) -> pd.DataFrame:
    """Per provider account and currency: entries, reversals and late entries among them, lines,
    total debits and credits (balanced when equal: :func:`currency_totals`)."""
    by_account: dict[str, list[JournalLine]] = {}
    for line in frame_lines(journal_lines(data)):
        by_account.setdefault(line.provider_account, []).append(line)
    out = [
        {
            ACCOUNT: account,
            "currency": total.currency,
            "entries": total.entries,
            "reversals": total.reversals,
            "late": total.late,
            "lines": total.lines,
            "debit_minor": total.debit_minor,
            "credit_minor": total.credit_minor,
            "balanced": total.balanced,
        }
        for account, mine in by_account.items()
        for total in currency_totals(mine).values()
    ]
    columns = [ACCOUNT, "currency", "entries", "reversals", "late", "lines", "debit_minor",
               "credit_minor", "balanced"]  # fmt: skip
    return pd.DataFrame(out, columns=columns)


def journal_groups(data: ReportInput) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per provider account and currency: its check (a row of :func:`journal_checks`) and its
    ledger accounts' totals (rows of :func:`journal_totals`), in the checks' order."""
    totals = journal_totals(data)
    out = []
    for check in journal_checks(data).to_dict("records"):
        mine = totals[
            (totals[ACCOUNT] == check[ACCOUNT]) & (totals["currency"] == check["currency"])
        ]
        out.append(({str(k): v for k, v in check.items()}, mine.to_dict("records")))
    return out


def _counted(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def check_words(check: Mapping[Any, Any]) -> str:
    """One account and currency's entries and whether their debits equal their credits."""
    cur = str(check["currency"])
    debit, credit = int(str(check["debit_minor"])), int(str(check["credit_minor"]))
    marks = [
        _counted(int(str(check[k])), one, many)
        for k, one, many in (("reversals", "reversal", "reversals"), ("late", "late", "late"))
        if int(str(check[k]))
    ]
    entries = _counted(int(str(check["entries"])), "entry", "entries")
    made = entries + (f" ({', '.join(marks)})" if marks else "")
    if check["balanced"]:
        return f"{made}: debits {money(debit, cur)} = credits {money(credit, cur)}, balanced"
    return (
        f"{made}: debits {money(debit, cur)}, credits {money(credit, cur)}: DO NOT BALANCE, "
        f"difference {money(debit - credit, cur)}"
    )


def ledger_words(code: str, role: str) -> str:
    """A ledger account as finance reads it: its code, then what it holds."""
    return f"{code} {ROLE_WORDS.get(role, role)}"


def journal_text(data: ReportInput) -> list[str]:
    """The email's lines about the journal: per account and currency, the entries and whether
    they balance (nothing without a journal)."""
    if data.journal is None:
        return []
    checks = journal_checks(data)
    if checks.empty:
        return ["", "JOURNAL", "No entries tonight."]
    lines = ["", "JOURNAL (journal.csv has every line)"]
    for c in checks.to_dict("records"):
        who = f" ({data.label(str(c[ACCOUNT]))})" if data.several else ""
        lines.append(f"{c['currency']}{who}: {check_words(c)}")
    return lines


def journal_summary_lines(data: ReportInput) -> list[tuple[str, str]]:
    """The workbook Summary's lines about the journal: (label, sentence) per account and
    currency, each ledger account's debits and credits after the check (none without one)."""
    if data.journal is None:
        return []
    groups = journal_groups(data)
    if not groups:
        return [("Journal", "no entries tonight")]
    out = []
    for c, mine in groups:
        cur = str(c["currency"])
        ledger = "; ".join(
            f"{ledger_words(str(t['account']), str(t['role']))}: debit "
            f"{money(int(t['debit_minor']), cur)}, credit {money(int(t['credit_minor']), cur)}"
            for t in mine
        )
        out.append(
            (
                f"Journal {cur}",
                f"{check_words(c)}; {ledger} (account {data.label(str(c[ACCOUNT]))})",
            )
        )
    return out
