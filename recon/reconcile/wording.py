"""Facts stored in the words before issue 28, compared with tonight's without reopening anything.

A finding's facts are mostly its detail text (:func:`recon.reconcile.cases.finding_facts`). Issue
28 reworded the details for people (``50.00 DKK``, not "5000 minor units"; ``settled``, not
"state 6"), so the first night after an upgrade would see every such finding's facts "change" and
reopen every acknowledged or resolved one. A stored fact in the old words (it names minor units or
a state or type by number) is compared by what the rewording did not touch: a payout's state and
returned amount (the ``|state=…|returned=…`` tail); a finding on another item is the same finding.
"""

from __future__ import annotations

import re

_OLD_WORDS = re.compile(r"minor units|\bstate \d|\btype \d|not 1 \(payout\)|not 13 \(returned")
_PAYOUT_TAIL = "|state="


def in_old_words(facts: str) -> bool:
    """Whether stored facts were written in the words before issue 28."""
    return _OLD_WORDS.search(facts.split(_PAYOUT_TAIL)[0]) is not None


def differ_across_wording(before: str, now: str) -> bool:
    """Whether facts in the old words (``before``) and tonight's differ in substance."""
    if _PAYOUT_TAIL not in before or _PAYOUT_TAIL not in now:
        return False
    return before[before.rindex(_PAYOUT_TAIL) :] != now[now.rindex(_PAYOUT_TAIL) :]
