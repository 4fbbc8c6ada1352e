"""A finding's detail in words: its kind's template rendered from its facts.

The core keeps facts as values (:mod:`recon.reconcile.finding`); this is the one place they become
the sentence finance reads: amounts with their currency, states and types by name, times in UTC.
Each kind's template is compiled once (Jinja2, ``StrictUndefined``: a fact a template names and a
rule does not give fails a test, not a report). A finding stored before facts were values keeps the
words it was stored with; a finding kept from the previous run without a new answer says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from functools import cache
from typing import Any

import jinja2
import pandas as pd
from jinja2.runtime import Context

from recon.durations import duration_text
from recon.reconcile.finding import KEPT as KEPT_FACT
from recon.reconcile.finding import read_facts
from recon.reconcile.kinds import kind_of
from recon.words import money, state_name, type_name

KEPT = "kept from the previous run (not fetched this run)"


def _q(value: Any) -> str:
    """A value for a sentence, ``?`` where it is missing."""
    return "?" if value is None else str(value)


def _money_q(minor: Any, currency: Any) -> str:
    """An amount, ``?`` where the amount is missing (``no amount`` without a currency)."""
    return "?" if minor is None else money(minor, currency)


def _money_or(minor: Any, currency: Any, missing: str) -> str:
    return missing if minor is None or currency is None else money(minor, currency)


@jinja2.pass_context
def _time(context: Context, iso: Any, fmt: str = "%Y-%m-%d %H:%M %Z") -> str:
    """A moment in the report's zone, named (``2026-11-27 19:35 CET``); ``fmt`` for a day."""
    if iso is None:
        return "?"
    return pd.Timestamp(str(iso)).tz_convert(context.get("zone", "UTC")).strftime(fmt)


def _state(value: Any) -> str:
    return "?" if value is None else state_name(value)


def _type(value: Any) -> str:
    return "?" if value is None else type_name(value)


def _duration(seconds: Any) -> str:
    return duration_text(timedelta(seconds=int(seconds)))


def _environment() -> jinja2.Environment:
    # Plain text: a detail goes into CSV cells and mail text as it is; the HTML templates escape
    # it where they place it (autoescape there).
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)  # noqa: S701
    env.filters.update(
        q=_q,
        money=money,
        money_q=_money_q,
        money_or=_money_or,
        time=_time,
        state=_state,
        type=_type,
        duration=_duration,
        upper=lambda v: "?" if v is None else str(v).upper(),
    )
    return env


@cache
def _template(name: str) -> jinja2.Template:
    kind = kind_of(name)
    if kind is None:
        return _environment().from_string("")
    return _environment().from_string(kind.detail)


def detail(
    flag: object, facts: Mapping[str, Any] | None, stored: object = None, *, zone: str = "UTC"
) -> str:
    """The sentence of one finding: the words it was stored with (before facts were values), or
    its kind's template over its facts, times in ``zone``; a carried finding without new facts
    is "kept" (with its case's last sentence, when the case kept its facts)."""
    if isinstance(stored, str):
        return stored
    if facts is None:
        return KEPT
    text = _template(str(flag)).render(**facts, zone=zone)
    return f"{KEPT}: {text}" if facts.get(KEPT_FACT) else text


def details(frame: pd.DataFrame, *, zone: str = "UTC") -> pd.Series:
    """The ``detail`` of each row of a findings frame (``flag``, ``facts``, optional ``detail``),
    times in ``zone``."""
    stored = frame["detail"] if "detail" in frame.columns else pd.Series(None, index=frame.index)
    texts = [
        detail(flag, _facts(facts), None if _missing(words) else words, zone=zone)
        for flag, facts, words in zip(
            frame["flag"].astype(object), frame["facts"], stored.astype(object), strict=True
        )
    ]
    return pd.Series(texts, index=frame.index, dtype="string")


def _facts(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    return read_facts(value)


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def case_detail(
    flag: object, last_facts: object, stored: object = None, *, zone: str = "UTC"
) -> str:
    """A case's sentence as it was last shown (the words of a case written before facts were
    values, else its kind's template over the facts it was last shown with)."""
    facts = read_facts(last_facts)
    if facts is None and _missing(stored):
        return ""
    return detail(flag, facts, None if _missing(stored) else stored, zone=zone)


def change_note(note: object) -> object:
    """The note of a case a run reopened on new facts, in words: ``state: 6 -> 3``; any other
    note as it is."""
    if not isinstance(note, str) or not note.startswith('{"now"'):
        return note
    change = read_facts(note) or {}
    was, now = change.get("was") or {}, change.get("now") or {}
    moved = [
        f"{name}: {_shown(was.get(name))} -> {_shown(now.get(name))}"
        for name in sorted({*was, *now})
        if was.get(name) != now.get(name)
    ]
    return "facts changed: " + "; ".join(moved) if moved else note


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ";".join(str(v) for v in value) or "(none)"
    return "(empty)" if value is None else str(value)
