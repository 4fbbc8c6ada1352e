"""Which payout a person meant by what they typed to ``recon show``: pure.

An exact match wins: a transaction id, a merchant_reference, a return's id (its payout), or an
id the provider named that the record lacks; an id names its own item before a reference or a
return carrying the same text. Spaces around the text are ignored. A match in another case, or a
near one (:func:`difflib.get_close_matches`), is only offered, never assumed: ``show`` of
``DEMO-00023`` says "did you mean demo-00023?" rather than showing a payout nobody named.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from recon.store.lookup import Hit, HitKind

SUGGESTIONS = 5


# What an exception id looks like (E<run>-<n>): shown through ``recon exceptions history``.
_EXCEPTION_ID = re.compile(r"E[0-9]+-[0-9]+")


@dataclass(frozen=True, slots=True)
class Lookup:
    """The outcome: one payout (``found``), several (``ambiguous``), or suggestions."""

    typed: str
    found: str | None = None
    via: Hit | None = None
    ambiguous: tuple[Hit, ...] = ()
    suggestions: tuple[str, ...] = field(default=())

    def message(self) -> str:
        """What to tell the person when no single payout was found."""
        if self.ambiguous:
            named = ", ".join(f"{h.payout_id} ({h.kind} {h.value})" for h in self.ambiguous)
            return (
                f"{self.typed!r} names {len(self.ambiguous)} payouts: {named}; show one by its id"
            )
        text = f"no payout, reference or return id {self.typed!r} in the store"
        if self.suggestions:
            text += "; did you mean " + " or ".join(self.suggestions) + "?"
        elif _EXCEPTION_ID.fullmatch(self.typed):
            text += f"; an exception id: recon exceptions history {self.typed}"
        return text


def choose(typed: str, hits: Sequence[Hit]) -> Lookup:
    """The payout ``typed`` names among ``hits``, or what to suggest."""
    text = typed.strip()
    exact = [h for h in hits if h.value == text]
    # An id names its own item first: a return's id that is also a provider-side id shows that.
    own = [h for h in exact if h.kind in (HitKind.TRANSACTION_ID, HitKind.PROVIDER_ID)]
    exact = own or exact
    payouts = list(dict.fromkeys(h.payout_id for h in exact))
    if len(payouts) == 1:
        return Lookup(text, found=payouts[0], via=exact[0])
    if payouts:
        first = {h.payout_id: h for h in reversed(exact)}
        return Lookup(text, ambiguous=tuple(first[p] for p in payouts))
    values = list(dict.fromkeys(h.value for h in hits))
    same_case = [v for v in values if v.lower() == text.lower()]
    lowered = {v.lower(): v for v in reversed(values)}
    near = difflib.get_close_matches(text.lower(), list(lowered), n=SUGGESTIONS, cutoff=0.6)
    suggestions = list(dict.fromkeys([*same_case, *(lowered[v] for v in near)]))
    return Lookup(text, suggestions=tuple(suggestions[:SUGGESTIONS]))
