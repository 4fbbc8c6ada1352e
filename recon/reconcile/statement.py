"""The roll-forward read as a statement: per currency, what was in flight and what had settled at
the previous run, what moved, and what stands now. Pure.

The roll-forward's lines (:mod:`recon.reconcile.rollforward`) say, per outcome, what moved in and
out; a statement says where to. Its moves come from the same history rows, each paired with the
row before it (``pairs``, as :func:`recon.reconcile.rollforward.payout_movements` reads them)::

    in flight at the previous run + recorded - settled - failed or aborted - unknown to the
        provider + back in flight +/- changed records = in flight now
    settled at the previous run + settled since - reversed - returned +/- changed records
        = settled now

In flight is :data:`~recon.constants.OPEN_OUTCOMES`. A payout that moved from in flight (or from
failed) straight to returned settled on its way: it is counted as settled since, then returned.
``previous`` and ``now`` are the lines' own, so a statement that does not close says by how much
(``difference``: what the lines hold beyond what the moves explain; a roll-forward break).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

import pandas as pd

from recon.constants import FAILED_OUTCOMES, OPEN_OUTCOMES, Outcome
from recon.reconcile.rollforward import paired
from recon.rollforward_lines import FEES, FINDINGS, RETURNS, Line


class Section(StrEnum):
    """The two parts of a currency's statement."""

    IN_FLIGHT = "in_flight"
    SETTLED = "settled"


class Step(StrEnum):
    """A statement's lines, in the order they are read."""

    PREVIOUS = "previous"
    RECORDED = "recorded"
    SETTLED = "settled"
    FAILED = "failed_or_aborted"
    UNKNOWN = "unknown"
    BACK = "back_in_flight"
    SETTLED_SINCE = "settled_since"
    REVERSED = "reversed"
    RETURNED = "returned"
    CHANGED = "changed"
    DIFFERENCE = "difference"
    NOW = "now"


# How each step adds up to ``now``.
SIGN = {
    Step.SETTLED: -1,
    Step.FAILED: -1,
    Step.UNKNOWN: -1,
    Step.REVERSED: -1,
    Step.RETURNED: -1,
}

_IN_FLIGHT = frozenset(o.value for o in OPEN_OUTCOMES)
_FAILED = frozenset(o.value for o in FAILED_OUTCOMES)
_SETTLED, _RETURNED = Outcome.SETTLED.value, Outcome.RETURNED.value
_ORDER = {step: n for n, step in enumerate(Step)}


@dataclass(frozen=True)
class Row:
    """One line of a currency's statement: a count and an amount in minor units, as added (a
    minus line holds what it takes away; ``changed`` and ``difference`` carry their sign)."""

    currency: str
    section: Section
    step: Step
    count: int
    amount_minor: int


COLUMNS = ("currency", "section", "step", "count", "amount_minor")

_Totals = dict[tuple[str, Section, Step], list[int]]


def statement(lines: pd.DataFrame, pairs: pd.DataFrame) -> list[Row]:
    """Per currency (sorted), the in-flight part then the settled part, each with its previous and
    now and only the steps between that moved; a part where nothing stood or moved is left out."""
    totals: _Totals = {}
    _positions(totals, lines)
    _moves(totals, pairs)
    out: list[Row] = []
    for currency in sorted({cur for cur, _s, _t in totals}):
        for section in Section:
            out += _part(totals, currency, section)
    return out


def _positions(totals: _Totals, lines: pd.DataFrame) -> None:
    """``previous``, ``now`` and the imports' ``changed`` of both parts, from the lines; in flight's
    ``recorded`` too (a payout recorded as settled is settled since)."""
    for cur, outcome, line, count, amount in lines[
        ["currency", "outcome", "line", "count", "amount_minor"]
    ].itertuples(index=False):
        outcome, line = str(outcome), str(line)
        if outcome in (FINDINGS, RETURNS, FEES):
            continue
        n, minor = int(count), 0 if pd.isna(amount) else int(amount)
        section = _section(outcome)
        if line in (Line.PREVIOUS.value, Line.NOW.value):
            if section is not None:
                _add(totals, str(cur), section, Step(line), n, minor)
        elif line == Line.RECORD_CHANGED.value and section is not None:
            _add(totals, str(cur), section, Step.CHANGED, n, minor)
        elif line == Line.RECORDED.value:
            if section is Section.IN_FLIGHT:
                _add(totals, str(cur), section, Step.RECORDED, n, minor)
            elif outcome in (_SETTLED, _RETURNED):
                _add(totals, str(cur), Section.SETTLED, Step.SETTLED_SINCE, n, minor)
                if outcome == _RETURNED:
                    _add(totals, str(cur), Section.SETTLED, Step.RETURNED, n, minor)


def _moves(totals: _Totals, pairs: pd.DataFrame) -> None:
    """Each paired row that changed outcome (or whose record changed behind recon's back), out of
    its part with the amount it had and into its part with the amount it has."""
    for bc, bo, ac, ao, same, imported, n, before, after in paired(pairs):
        if bo is None:
            continue  # recorded: counted from the lines
        if imported and not same:
            bc, before = ac, after  # the import's change is the lines' record_changed
        if bo == ao and (same or imported):
            continue
        if bc != ac:  # a currency changed behind recon's back: a changed record on both sides
            for cur, outcome, sign, amount in ((bc, bo, -1, before), (ac, ao, 1, after)):
                section = _section(outcome)
                if section is not None:
                    _add(totals, cur, section, Step.CHANGED, sign * n, sign * amount)
            continue
        _move(totals, ac, bo, ao, n, before, after)


def _move(totals: _Totals, cur: str, was: str, now: str, n: int, before: int, after: int) -> None:
    """One move of ``n`` payouts in ``cur`` from outcome ``was`` to ``now``."""
    if was in _IN_FLIGHT and now not in _IN_FLIGHT:
        step = (
            Step.SETTLED
            if now in (_SETTLED, _RETURNED)
            else Step.FAILED
            if now in _FAILED
            else Step.UNKNOWN
        )
        _add(totals, cur, Section.IN_FLIGHT, step, n, before)
    elif now in _IN_FLIGHT and was not in _IN_FLIGHT:
        _add(totals, cur, Section.IN_FLIGHT, Step.BACK, n, after)
    elif was in _IN_FLIGHT and now in _IN_FLIGHT and before != after:
        _add(totals, cur, Section.IN_FLIGHT, Step.CHANGED, 0, after - before)
    if was == _SETTLED and now != _SETTLED:
        step = Step.RETURNED if now == _RETURNED else Step.REVERSED
        _add(totals, cur, Section.SETTLED, step, n, before)
    elif now in (_SETTLED, _RETURNED) and was not in (_SETTLED, _RETURNED):
        _add(totals, cur, Section.SETTLED, Step.SETTLED_SINCE, n, after)
        if now == _RETURNED:
            _add(totals, cur, Section.SETTLED, Step.RETURNED, n, after)
    elif was == _RETURNED and now == _SETTLED:
        _add(totals, cur, Section.SETTLED, Step.SETTLED_SINCE, n, after)


def _part(totals: _Totals, currency: str, section: Section) -> list[Row]:
    got = {
        step: (count, amount)
        for (cur, sec, step), (count, amount) in totals.items()
        if cur == currency and sec == section
    }
    if all(c == 0 and a == 0 for c, a in got.values()):
        return []
    previous = got.get(Step.PREVIOUS, (0, 0))
    now = got.get(Step.NOW, (0, 0))
    count, amount = previous
    for step, (c, a) in got.items():
        if step not in (Step.PREVIOUS, Step.NOW):
            sign = SIGN.get(step, 1)
            count, amount = count + sign * c, amount + sign * a
    got[Step.DIFFERENCE] = (now[0] - count, now[1] - amount)
    got[Step.PREVIOUS], got[Step.NOW] = previous, now
    return [
        Row(currency, section, step, c, a)
        for step, (c, a) in sorted(got.items(), key=lambda kv: _ORDER[kv[0]])
        if step in (Step.PREVIOUS, Step.NOW) or c or a
    ]


def _section(outcome: str) -> Section | None:
    if outcome in _IN_FLIGHT:
        return Section.IN_FLIGHT
    if outcome == _SETTLED:
        return Section.SETTLED
    return None


def _add(totals: _Totals, cur: str, section: Section, step: Step, n: int, amount: int) -> None:
    got = totals.setdefault((cur, section, step), [0, 0])
    got[0] += n
    got[1] += amount


def frame(rows: Iterable[Row]) -> pd.DataFrame:
    """Rows as a frame of :data:`COLUMNS`."""
    return pd.DataFrame(
        [(r.currency, r.section.value, r.step.value, r.count, r.amount_minor) for r in rows],
        columns=list(COLUMNS),
    )
