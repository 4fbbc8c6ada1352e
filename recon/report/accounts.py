"""A morning's report over several provider accounts: each account's night, combined. Pure.

One run is one account's night, and its report input holds that account's rows. :func:`combine`
makes one input of several nights: their frames one after the other (each row keeps its
``provider_account``, so the same transaction id under two accounts stays two rows), the
statement per currency over the accounts, each account's own kept beside it, and a run that sums
the nights up (its status the worst of theirs). :func:`split` gives the accounts back one by one,
:func:`only` keeps some of them (``--account``).

Amounts add up per account and currency (:func:`by_account`), and per currency over the accounts
(:func:`over_accounts`): never across currencies, as every key holds the currency.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

import pandas as pd

from recon.constants import RunStatus
from recon.reconcile.statement import Row as StatementRow
from recon.reconcile.statement import Section, Step
from recon.report.model import ACCOUNT, ReportInput, RunInfo
from recon.rollforward_lines import ordered

# The night that sums several up takes the worst status of theirs, in this order.
_WORST = (
    RunStatus.FAILED,
    RunStatus.RUNNING,
    RunStatus.APPLIED,
    RunStatus.INCOMPLETE,
    RunStatus.DRY_RUN,
    RunStatus.COMPLETE,
)
_FRAMES = ("payouts", "exceptions", "returns", "changes", "totals", "rollforward")


def combine(
    inputs: Sequence[ReportInput], *, labels: Mapping[str, str] | None = None
) -> ReportInput:
    """One report input of several accounts' nights (each input one or more accounts, no account
    in two), in the order given; ``labels`` (account name to label) join the inputs' own.

    Raises ``ValueError`` for no input, an account given twice, or inputs of different time zones
    or reporting windows (their totals would not add up)."""
    if not inputs:
        raise ValueError("combine: no report to combine")
    names = [a for data in inputs for a in data.accounts]
    twice = sorted(a for a, n in Counter(names).items() if n > 1)
    if twice:
        raise ValueError(f"combine: account {', '.join(twice)} given more than once")
    for what in ("timezone", "window_days"):
        values = {getattr(data, what) for data in inputs}
        if len(values) > 1:
            raise ValueError(f"combine: the reports differ in {what}: {sorted(map(str, values))}")
    merged = {k: v for data in inputs for k, v in data.labels.items()} | dict(labels or {})
    if len(inputs) == 1:
        return replace(inputs[0], labels=merged)
    nights = tuple(n for data in inputs for n in data.nights)
    statements = {a: rows for data in inputs for a, rows in data.statements.items()}
    notes = {a: note for data in inputs for a, note in data.rollforward_notes.items()}
    since = [data.actions_since for data in inputs if data.actions_since is not None]
    first = inputs[0]
    return ReportInput(
        run=summed_run(nights),
        timezone=first.timezone,
        window_days=first.window_days,
        payouts=_concat([d.payouts for d in inputs]),
        exceptions=_concat([d.exceptions for d in inputs]),
        returns=_concat([d.returns for d in inputs]),
        changes=_concat([d.changes for d in inputs]),
        totals=_concat([d.totals for d in inputs]),
        rollforward=_concat([d.rollforward for d in inputs]),
        rollforward_note=" ".join(f"{_label(merged, a)}: {note}" for a, note in notes.items()),
        rollforward_notes=notes,
        statement=tuple(sum_statements(statements.values())),
        statements=statements,
        actions_since=sum(since) if since else None,
        nights=nights,
        labels=merged,
        journal=_journals(inputs),
        balance=_balances(inputs),
    )


def _journals(inputs: Sequence[ReportInput]) -> pd.DataFrame | None:
    """The nights' journal lines one after the other; None when none has a journal (a night
    that did not finish stands without lines)."""
    frames = [data.journal for data in inputs if data.journal is not None]
    return _concat(frames) if frames else None


def _balances(inputs: Sequence[ReportInput]) -> pd.DataFrame | None:
    """The accounts' balance statements one after the other; None when no account has a
    closing recorded."""
    frames = [data.balance for data in inputs if data.balance is not None]
    return _concat(frames) if frames else None


def _label(labels: Mapping[str, str], account: str) -> str:
    return labels.get(account) or account


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames one after the other; empty ones left out (their all-NA columns would change
    the others' types), one empty frame if all are."""
    full = [f for f in frames if len(f)]
    if not full:
        return frames[0].iloc[0:0]
    if len(full) == 1:
        return full[0].reset_index(drop=True)
    return pd.concat(full, ignore_index=True)


def summed_run(nights: Sequence[RunInfo]) -> RunInfo:
    """One run standing for ``nights``: the worst status, the earliest start, the latest as-of and
    end (no end while one has none), the requests and polls added up. One night is itself."""
    if len(nights) == 1:
        return nights[0]
    starts = [n.started_at for n in nights if n.started_at is not None]
    ends = [n.finished_at for n in nights]
    started = min(starts) if len(starts) == len(nights) else None
    finished = None if any(e is None for e in ends) else max(e for e in ends if e is not None)
    took = (finished - started).total_seconds() if started and finished else None
    requests = sum(n.requests for n in nights)
    return RunInfo(
        run_id=None,
        started_at=started,
        finished_at=finished,
        as_of=max(n.as_of for n in nights),
        status=min((RunStatus(n.status) for n in nights), key=_WORST.index),
        duration_seconds=took,
        requests=requests,
        requests_per_second=requests / took if requests and took else None,
        previous_run_id=None,
        polls=_added(n.polls for n in nights),
        polls_saved=sum(n.polls_saved for n in nights),
        previous_as_of=None,
        provider=_added(n.provider for n in nights),
        provider_account=nights[0].provider_account,
    )


def _added(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for one in counts:
        for key, n in one.items():
            out[key] = out.get(key, 0) + n
    return out


_SECTIONS = list(Section)
_STEPS = list(Step)


def sum_statements(statements: Iterable[Sequence[StatementRow]]) -> list[StatementRow]:
    """Several accounts' statements as one per currency: each line's count and amount added up
    over the accounts, in the statement's order (currency, section, step)."""
    totals: dict[tuple[str, Section, Step], list[int]] = {}
    for rows in statements:
        for r in rows:
            got = totals.setdefault((r.currency, r.section, r.step), [0, 0])
            got[0] += r.count
            got[1] += r.amount_minor
    keys = sorted(totals, key=lambda k: (k[0], _SECTIONS.index(k[1]), _STEPS.index(k[2])))
    return [StatementRow(c, s, t, *totals[(c, s, t)]) for c, s, t in keys]


def split(data: ReportInput) -> list[ReportInput]:
    """Each account's part of ``data``, one input per night, in order (one night: ``data``)."""
    if not data.several:
        return [data]
    return [_part(data, night) for night in data.nights]


def _part(data: ReportInput, night: RunInfo) -> ReportInput:
    account = night.provider_account
    frames = {name: _rows_of(getattr(data, name), {account}) for name in _FRAMES}
    mine = tuple(data.statements.get(account, ()))
    note = data.rollforward_notes.get(account, "")
    return ReportInput(
        run=night,
        timezone=data.timezone,
        window_days=data.window_days,
        payouts=frames["payouts"],
        exceptions=frames["exceptions"],
        returns=frames["returns"],
        changes=frames["changes"],
        totals=frames["totals"],
        rollforward=frames["rollforward"],
        rollforward_note=note,
        statement=mine,
        statements={account: mine} if mine else {},
        rollforward_notes={account: note} if note else {},
        nights=(night,),
        labels=data.labels,
        journal=None if data.journal is None else _rows_of(data.journal, {account}),
        balance=None if data.balance is None else _rows_of(data.balance, {account}),
    )


def only(data: ReportInput, accounts: Collection[str]) -> ReportInput:
    """``data`` of ``accounts`` alone (``--account``), combined again. Raises ``ValueError``
    naming an account the report does not hold."""
    unknown = sorted(set(accounts) - set(data.accounts))
    if unknown:
        held = ", ".join(data.accounts)
        raise ValueError(f"--account {', '.join(unknown)}: not in this report (it holds {held})")
    return combine([part for part in split(data) if part.run.provider_account in accounts],
                   labels=data.labels)  # fmt: skip


def _rows_of(frame: pd.DataFrame, accounts: Collection[str]) -> pd.DataFrame:
    keep = frame[ACCOUNT].astype(object).isin(list(accounts)).to_numpy(dtype=bool)
    return frame[keep].reset_index(drop=True)


def by_account(frame: pd.DataFrame, keys: Sequence[str], sums: Sequence[str]) -> pd.DataFrame:
    """``sums`` added up per account and ``keys`` (which hold the currency): rows in the
    accounts' first-seen order, then by ``keys``."""
    return _grouped(frame, [ACCOUNT, *keys], sums)


def over_accounts(frame: pd.DataFrame, keys: Sequence[str], sums: Sequence[str]) -> pd.DataFrame:
    """``sums`` added up per ``keys`` (which hold the currency) over every account."""
    return _grouped(frame, list(keys), sums)


def _grouped(frame: pd.DataFrame, keys: list[str], sums: Sequence[str]) -> pd.DataFrame:
    work = frame.astype(dict.fromkeys(keys, object))
    out = work.groupby(keys, sort=True, dropna=False)[list(sums)].sum(min_count=1)
    return out.reset_index().astype(dict.fromkeys(sums, "Int64"))


def rollforward_over_accounts(lines: pd.DataFrame) -> pd.DataFrame:
    """The roll-forward's lines added up per currency, outcome and line over the accounts, in
    rollforward.csv's order (one account's lines are returned as they are)."""
    if lines[ACCOUNT].nunique() <= 1:
        return lines
    summed = over_accounts(lines, ["currency", "outcome", "line"], ["count", "amount_minor"])
    summed = summed.astype(
        {"currency": "string", "outcome": "string", "line": "string", "count": "int64"}
    )
    return ordered(summed)


def headline_nights(data: ReportInput) -> list[tuple[str, str, RunInfo]]:
    """Each night as the headline names it: (account, label, its run)."""
    return [(n.provider_account, data.label(n.provider_account), n) for n in data.nights]
