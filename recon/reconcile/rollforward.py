"""The roll-forward: what each night's lines are made of, and the identities they close.

Pure: lines in, lines or breaks out. A line is (currency, outcome, line, count, amount in minor
units); the findings' lines have an empty currency and no amount. Per currency and outcome of the
payouts::

    previous + recorded + moved_in - moved_out + record_changed = now

over every outcome of a currency the payouts neither appear nor vanish (previous + recorded +
record_changed = now, and what moved in equals what moved out); confirmed returns
(``returns_confirmed``): previous + recorded + record_changed = now; findings: previous + opened -
closed_by_people - cleared + reopened = now; the provider's fees (``fees``, per currency):
previous + charged + changed = now (a fee is money out beside its payout, never netted).

Every line is measured on its own from the rows (:mod:`recon.store.rollforward_reads` reads them
before the decision); tonight's own rows are the decision's (:mod:`recon.reconcile.night_lines`),
and the next night measures them again from the store (:func:`remeasured`), so a row written
wrong, or edited or removed since, shows there. The only place a line is derived from the others
is :func:`opening`, the first roll-forward of a store whose latest finished run stored none (it
closes by construction and says so).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import pandas as pd

from recon.frames import ItemKind
from recon.reconcile.finding import Kind
from recon.rollforward_lines import (
    COLUMNS,
    FEE_LINES,
    FEES,
    FINDING_LINES,
    FINDINGS,
    PAIR_COLUMNS,
    PAYOUT_LINES,
    RETURN_LINES,
    RETURNS,
    Break,
    Line,
    frame,
)

ALL_OUTCOMES = "all outcomes"  # a break of a currency's totals, over every outcome

ROLLFORWARD_BREAK = Kind(
    name="rollforward_break",
    items=(ItemKind.ROLLFORWARD,),
    label="Stored rows changed outside recon",
    action=(
        "The night's figures do not carry forward: a stored row changed or vanished outside "
        "recon (a hand-made fix, a restore). Find which row, from the line and the difference in "
        "the detail, before trusting the totals; resolve this once it is explained."
    ),
    detail=(
        "roll-forward break: {{ [currency, outcome]|select|join(' ') or outcome }}: line {{ line }}"
        "{% if run_id is not none %} of run {{ run_id }}, measured again,{% endif %} differs from "
        "what the other lines add up to by {{ '%+d'|format(count) }}"
        "{% if amount_minor and currency %}, {{ amount_minor|money(currency) }}{% endif %}"
    ),
    same_when=("currency", "outcome", "line", "count", "amount_minor", "run_id"),
)

# Each line's sign in its identity (``now`` is what the others must add up to).
_SIGN = {Line.MOVED_OUT: -1, Line.CLOSED_BY_PEOPLE: -1, Line.CLEARED: -1}

Key = tuple[str, str, str]  # currency, outcome, line
Amounts = dict[Key, list[int | None]]  # [count, amount_minor]


def amounts(lines: pd.DataFrame) -> Amounts:
    """Lines as a table: (currency, outcome, line) -> [count, amount]."""
    table: Amounts = {}
    for cur, out, line, count, amount in lines[list(COLUMNS)].itertuples(index=False):
        table[(str(cur), str(out), str(line))] = [
            int(count),
            None if pd.isna(amount) else int(amount),
        ]
    return table


def add(table: Amounts, key: Key, count: int, amount: int | None) -> None:
    """Add ``count`` and ``amount`` to the table's line ``key``."""
    got = table.setdefault(key, [0, None if amount is None else 0])
    got[0] = int(got[0] or 0) + count
    if amount is not None:
        got[1] = int(got[1] or 0) + amount


def paired(
    pairs: pd.DataFrame,
) -> Iterator[tuple[str, str | None, str, str, bool, bool, int, int, int]]:
    """Each group of paired history rows as plain values: the currencies before and after
    (stripped), the outcome before (None: the payout's first row) and after, whether the two
    records agree and whether an import changed them, the count and the amounts (none before: 0)."""
    for bc, bo, ac, ao, same, imported, n, before, after in pairs[list(PAIR_COLUMNS)].itertuples(
        index=False
    ):
        yield (
            str(bc).strip(),
            None if pd.isna(bo) else str(bo),
            str(ac).strip(),
            str(ao),
            bool(int(same)),
            bool(int(imported)),
            int(n),
            0 if pd.isna(before) else int(before),
            int(after),
        )


def payout_movements(pairs: pd.DataFrame) -> pd.DataFrame:
    """``recorded``, ``moved_in``, ``moved_out`` and ``record_changed`` from history rows, each
    paired with the row before it, aggregated: ``before_currency``, ``before_outcome`` (the
    outcome the row moved from; missing: the payout's first), ``after_currency``,
    ``after_outcome``, ``same`` (the two records agree), ``imported`` (an import changed the
    amount or currency), ``count``, ``before_amount``, ``after_amount``.

    A record an import changed is counted at the outcome it had (out with the old record, in with
    the new), then a move with the new record. A record changed without an import (behind
    recon's back) has no ``record_changed``: it moves out as it was and in as it is, so what moved
    in no longer equals what moved out.

    The fees' ``charged`` and ``changed`` come from the pairs' optional fee sums
    (:data:`FEE_SUMS`): a fee the row before lacked is charged; one it had is changed, out as it
    was (in the row before's currency) and in as it is.
    """
    table: Amounts = {}
    if set(FEE_SUMS) <= set(pairs.columns):
        _fee_movements(table, pairs)
    for bc, bo, ac, ao, same, imported, n, before, after in paired(pairs):
        if bo is None:
            add(table, (ac, ao, Line.RECORDED), n, after)
            continue
        if imported and not same:
            add(table, (bc, bo, Line.RECORD_CHANGED), -n, -before)
            add(table, (ac, bo, Line.RECORD_CHANGED), n, after)
            bc, before = ac, after
        if bo != ao or not (same or imported):
            add(table, (bc, bo, Line.MOVED_OUT), n, before)
            add(table, (ac, ao, Line.MOVED_IN), n, after)
    return frame_of(table)


# Per group of paired rows: the fees the rows before held (count, sum), the fees of rows whose
# row before held none (charged), and the fees of rows whose row before held one (changed).
FEE_SUMS = (
    "fee_before_count",
    "fee_before",
    "fee_new_count",
    "fee_new",
    "fee_kept_count",
    "fee_kept",
)


def _fee_movements(table: Amounts, pairs: pd.DataFrame) -> None:
    for bc, ac, *sums in pairs[["before_currency", "after_currency", *FEE_SUMS]].itertuples(
        index=False
    ):
        b_n, b_amt, new_n, new_amt, kept_n, kept_amt = (0 if pd.isna(v) else int(v) for v in sums)
        bc, ac = str(bc).strip(), str(ac).strip()
        if b_n or b_amt:
            add(table, (bc, FEES, Line.CHANGED), -b_n, -b_amt)
        if new_n or new_amt:
            add(table, (ac, FEES, Line.CHARGED), new_n, new_amt)
        if kept_n or kept_amt:
            add(table, (ac, FEES, Line.CHANGED), kept_n, kept_amt)


def return_movements(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """``recorded`` and ``record_changed`` of the confirmed returns: ``after`` (tonight's
    confirmed returns: ``return_id``, ``currency``, ``amount_minor``) against ``before`` (the
    previous run's). A return confirmed before is counted out as it was and in as it is now (if
    it is still confirmed); one confirmed since is recorded."""
    table: Amounts = {}
    earlier = set(before["return_id"].astype(str))
    for rid, cur, amount in after[["return_id", "currency", "amount_minor"]].itertuples(
        index=False
    ):
        line = Line.RECORD_CHANGED if str(rid) in earlier else Line.RECORDED
        add(table, (str(cur), RETURNS, line), 1, int(amount) if not pd.isna(amount) else 0)
    for _rid, cur, amount in before[["return_id", "currency", "amount_minor"]].itertuples(
        index=False
    ):
        amt = int(amount) if not pd.isna(amount) else 0
        add(table, (str(cur), RETURNS, Line.RECORD_CHANGED), -1, -amt)
    return frame_of(table)


def frame_of(table: Amounts) -> pd.DataFrame:
    """The table as lines."""
    return frame((c, o, str(ln), int(v[0] or 0), v[1]) for (c, o, ln), v in table.items())


def _lines_of(outcome: str) -> tuple[Line, ...]:
    return (
        FINDING_LINES
        if outcome == FINDINGS
        else RETURN_LINES
        if outcome == RETURNS
        else FEE_LINES
        if outcome == FEES
        else (PAYOUT_LINES)
    )


def complete(lines: pd.DataFrame) -> pd.DataFrame:
    """Every line of every (currency, outcome) that has one, zero where nothing moved, in the
    order rollforward.csv lists them (currencies, payout outcomes, returns, fees; findings
    last)."""
    table: Amounts = defaultdict(list)
    table.update(amounts(lines))
    pairs = sorted(
        {(c, o) for c, o, _ in table},
        key=lambda p: (p[1] == FINDINGS, p[0], p[1] == FEES, p[1] == RETURNS, p[1]),
    )
    rows = []
    for cur, out in pairs:
        for line in _lines_of(out):
            got = table.get((cur, out, line.value)) or [0, None if out == FINDINGS else 0]
            amount = got[1] if out != FINDINGS else None
            rows.append((cur, out, line.value, int(got[0] or 0), amount))
    return frame(rows)


def opening(lines: pd.DataFrame) -> pd.DataFrame:
    """``previous`` for the first roll-forward after a run that stored none: what tonight's
    movements leave of ``now`` (closing by construction)."""
    table = amounts(complete(lines))
    rows = []
    for cur, out, line in table:
        if line != Line.NOW:
            continue
        count, amount = 0, None if out == FINDINGS else 0
        for moved in _lines_of(out):
            if moved in (Line.PREVIOUS, Line.NOW):
                continue
            got = table.get((cur, out, moved.value), [0, 0])
            count += _SIGN.get(moved, 1) * int(got[0] or 0)
            if amount is not None:
                amount += _SIGN.get(moved, 1) * int(got[1] or 0)
        now = table[(cur, out, line)]
        rows.append(
            (
                cur,
                out,
                Line.PREVIOUS.value,
                int(now[0] or 0) - count,
                None if amount is None else int(now[1] or 0) - amount,
            )
        )
    return frame(rows)


def breaks(lines: pd.DataFrame) -> list[Break]:
    """Every identity of ``lines`` that does not close (see the module docstring)."""
    table = amounts(complete(lines))
    found: list[Break] = []
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for cur, out in sorted({(c, o) for c, o, _ in table}):
        count, amount = 0, 0
        for line in _lines_of(out):
            if line is Line.NOW:
                continue
            got = table[(cur, out, line.value)]
            count += _SIGN.get(line, 1) * int(got[0] or 0)
            amount += _SIGN.get(line, 1) * int(got[1] or 0)
        now = table[(cur, out, Line.NOW.value)]
        off_count, off_amount = int(now[0] or 0) - count, int(now[1] or 0) - amount
        if off_count or off_amount:
            found.append(
                Break(cur, out, Line.NOW.value, off_count, None if out == FINDINGS else off_amount)
            )
        if out in (FINDINGS, RETURNS, FEES):
            continue
        sums = totals[cur]
        for i, line in enumerate((Line.MOVED_IN, Line.MOVED_OUT)):
            sums[2 * i] += int(table[(cur, out, line.value)][0] or 0)
            sums[2 * i + 1] += int(table[(cur, out, line.value)][1] or 0)
        sums[4] += sum(int(table[(cur, out, x.value)][0] or 0) for x in _COUNTED)
        sums[4] -= int(now[0] or 0)
    for cur, sums in sorted(totals.items()):
        if sums[0] != sums[2] or sums[1] != sums[3]:
            found.append(
                Break(cur, ALL_OUTCOMES, Line.MOVED_IN.value, sums[0] - sums[2], sums[1] - sums[3])
            )
        if sums[4]:  # a payout appeared or vanished: counted over every outcome of the currency
            found.append(Break(cur, ALL_OUTCOMES, Line.NOW.value, -sums[4], None))
    return found


_COUNTED = (Line.PREVIOUS, Line.RECORDED, Line.RECORD_CHANGED)


def remeasured(stored: pd.DataFrame, measured: pd.DataFrame, *, run_id: int) -> list[Break]:
    """The movement lines run ``run_id`` stored against the same lines measured again from its
    rows tonight: a row of that run edited or removed since shows as a difference."""
    moved = {
        Line.RECORDED,
        Line.MOVED_IN,
        Line.MOVED_OUT,
        Line.RECORD_CHANGED,
        Line.OPENED,
        Line.CLOSED_BY_PEOPLE,
        Line.CLEARED,
        Line.REOPENED,
        Line.CHARGED,
        Line.CHANGED,
    }
    was, now = amounts(complete(stored)), amounts(complete(measured))
    found = []
    for key in sorted(was.keys() | now.keys()):
        if key[2] not in moved:
            continue
        a, b = was.get(key, [0, 0]), now.get(key, [0, 0])
        dc, da = int(b[0] or 0) - int(a[0] or 0), int(b[1] or 0) - int(a[1] or 0)
        if dc or da:
            found.append(Break(*key, dc, None if key[1] == FINDINGS else da, run_id=run_id))
    return found


def to_open(found: list[Break], live: frozenset[str]) -> list[Break]:
    """The breaks that open a case: those whose item has no case standing (one that stands is
    reported as it stands, until a person resolves it)."""
    seen: set[str] = set(live)
    fresh = []
    for b in found:
        if b.item_id not in seen:
            seen.add(b.item_id)
            fresh.append(b)
    return fresh
