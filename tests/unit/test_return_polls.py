"""Which returned-funds ids a run asks about and knows (recon/reconcile/return_polls.py), called
directly with literal KnownReturns and answers: claims on a thinning schedule under a cap, ids
named by a payout's answer, quiet claims, and the returns frame the classifier gets."""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon.decision import KnownReturns
from recon.reconcile.decide import latest_answers
from recon.reconcile.return_polls import known_returns, quiet_claims, returns_to_poll
from tests.unit.decide_support import AS_OF, DAY, NA, WATCH, answers, known, ok


def _asked(
    returns: KnownReturns, *rows: dict[str, Any], as_of: pd.Timestamp = AS_OF, cap: int = 10
) -> tuple[list[str], int]:
    return returns_to_poll(
        returns, answers(*rows), as_of=as_of.to_pydatetime(), watch=WATCH, cap=cap
    )


def _claims(*asked: tuple[str, Any, Any]) -> KnownReturns:
    """Claims (return id, first asked, last asked), each notified three days before AS_OF."""
    return known(
        [(r, "p1") for r, _, _ in asked],
        claims=[(r, AS_OF - 3 * DAY, first, last) for r, first, last in asked],
    )


def test_a_claim_never_asked_about_is_asked_by_the_next_run() -> None:
    """Notified, not asked since: chosen, nothing left over."""
    assert _asked(_claims(("r1", NA, NA))) == (["r1"], 0)


def test_the_cap_asks_the_claims_asked_least_recently_and_counts_the_rest() -> None:
    """Cap 2 of four due claims: the never-asked first, then the oldest ask; two left."""
    returns = _claims(
        ("r-new", NA, NA),
        ("r-old", AS_OF - 20 * DAY, AS_OF - 20 * DAY),
        ("r-mid", AS_OF - 10 * DAY, AS_OF - 10 * DAY),
        ("r-a", NA, NA),
    )
    assert _asked(returns, cap=2) == (["r-a", "r-new"], 2)
    assert _asked(returns, cap=3) == (["r-a", "r-new", "r-old"], 1)


def test_a_claim_is_asked_again_on_the_return_schedule_then_dropped() -> None:
    """First asked on day 0: not on day 5, again from day 6; asked on day 30, the end of the
    return watch's window, it is never due again (until a new notification)."""
    asked_once = _claims(("r1", AS_OF, AS_OF))
    assert _asked(asked_once, as_of=AS_OF + 5 * DAY) == ([], 0)
    assert _asked(asked_once, as_of=AS_OF + 6 * DAY) == (["r1"], 0)
    assert _asked(_claims(("r1", AS_OF, AS_OF + 12 * DAY)), as_of=AS_OF + 29 * DAY) == ([], 0)
    assert _asked(_claims(("r1", AS_OF, AS_OF + 12 * DAY)), as_of=AS_OF + 30 * DAY) == (["r1"], 0)
    done = _claims(("r1", AS_OF, AS_OF + 30 * DAY))
    assert _asked(done, as_of=AS_OF + 90 * DAY) == ([], 0)


def test_an_id_a_payout_answer_names_is_asked_until_confirmed_and_outside_the_cap() -> None:
    """The payout's answer names r7: asked (even with a cap of 0); once some run saw it as type
    13 it is no longer a first ask."""
    named = ok("p1", related_transaction_id="r7")
    assert _asked(known(), named, cap=0) == (["r7"], 0)
    assert _asked(known(seen13={"r7"}), named, cap=0) == ([], 0)


def test_an_id_answered_this_run_is_not_asked_again() -> None:
    """A claim this run already has an answer about (a not found, say) is not asked twice."""
    gone = {"transaction_id": "r1", "status": "not_found"}
    assert _asked(_claims(("r1", NA, NA)), gone) == ([], 0)


def test_a_claim_notified_before_the_previous_run_and_not_confirmed_is_quiet() -> None:
    """The previous run saw its notification: quiet, unless an answer confirms it (type 13)."""
    returns = known([("r1", "p1"), ("r2", "p1")], started=AS_OF - DAY)
    assert quiet_claims(returns, answers()) == {"r1", "r2"}
    confirmed = ok("r2", type=13, related_transaction_id="p1")
    assert quiet_claims(returns, answers(confirmed)) == {"r1"}
    assert quiet_claims(known([("r1", "p1")]), answers()) == set()  # no previous run


def _known_ids(
    returns: KnownReturns, *rows: dict[str, Any], quiet: set[str] | None = None
) -> list[str]:
    got = answers(*rows)
    frame = known_returns(returns, got, latest_answers(got), quiet or set())
    return list(frame["return_id"])


def test_known_returns_are_the_claims_the_type_13_answers_and_the_confirmed() -> None:
    """A claim, a type-13 id seen only tonight and one confirmed earlier are known; a quiet
    claim is not, nor an id a payout's answer names that the provider says is a payout."""
    returns = known([("claim", "p1"), ("quiet", "p1")], confirmations={"old": "p2"},
                    seen13={"old"},
                    earlier=[{"transaction_id": "old", "type": 13, "amount_minor": 5,
                              "related_transaction_id": "p2", "currency": "EUR"}])  # fmt: skip
    tonight = ok("new13", type=13, related_transaction_id="p3")
    names_payout = ok("p4", related_transaction_id="p5")
    other_payout = ok("p5")
    ids = _known_ids(returns, tonight, names_payout, other_payout, quiet={"quiet"})
    assert ids == ["claim", "new13", "old"]


def test_a_known_return_carries_this_runs_answer_over_the_earlier_one() -> None:
    """Earlier 14.01 EUR, tonight 10.00: the frame's evidence is tonight's."""
    returns = known(
        seen13={"r1"},
        earlier=[{"transaction_id": "r1", "type": 13, "related_transaction_id": "p1",
                  "amount_minor": 1401, "currency": "EUR"}],
    )  # fmt: skip
    got = answers(ok("r1", type=13, related_transaction_id="p1", amount_minor=1000))
    frame = known_returns(returns, got, latest_answers(got), set())
    assert frame[["return_id", "obs_status", "obs_amount_minor"]].astype(
        object
    ).values.tolist() == [["r1", "ok", 1000]]
