"""The one rule for which answer speaks for a return (recon.reconcile.returns.best_evidence),
called directly: literal earlier evidence and this run's answers in, the evidence out."""

from __future__ import annotations

from typing import Any

import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.reconcile.returns import EVIDENCE, best_evidence
from tests.unit.classify_support import NA, answer, fetch_error, notice, wrong_answer


def _earlier(rid: str, status: Any = "ok", amount: Any = 1401) -> dict[str, Any]:
    """A known return whose best earlier evidence is ``status`` (type 13 for p1, EUR)."""
    if status is NA:
        return notice(rid, "p1")
    return notice(rid, "p1", obs_status=status, obs_type=13 if status == "ok" else NA,
                  obs_related_transaction_id="p1" if status == "ok" else NA,
                  obs_amount_minor=amount if status == "ok" else NA,
                  obs_currency="EUR" if status == "ok" else NA)  # fmt: skip


def _evidence(ret: list[dict[str, Any]], obs: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """return id -> (status, type, related id, amount) chosen."""
    ret_frame = conform(
        pd.DataFrame(ret) if ret else fr.empty(fr.ReturnsIn), fr.ReturnsIn, name="returns"
    )
    obs_frame = conform(
        pd.DataFrame(obs) if obs else fr.empty(fr.Observations),
        fr.Observations,
        name="observations",
    )
    out = best_evidence(ret_frame, obs_frame).astype(object)
    out = out.where(out.notna(), None)
    return {
        str(r["return_id"]): (
            r["obs_status"], r["obs_type"], r["obs_related_transaction_id"], r["obs_amount_minor"]
        )
        for r in out.to_dict("records")
    }  # fmt: skip


def _returned(rid: str, amount: int) -> dict[str, Any]:
    return answer(rid, 6, type=13, related_transaction_id="p1", amount_minor=amount)


def test_this_runs_ok_answer_wins_over_the_earlier_one() -> None:
    """Earlier 14.01, tonight 10.00: the provider's latest word speaks."""
    assert _evidence([_earlier("r1")], [_returned("r1", 1000)]) == {"r1": ("ok", 13, "p1", 1000)}


def test_this_runs_not_found_wins_over_an_earlier_confirmation() -> None:
    """A confirmed return the provider no longer knows: the 404 is the evidence."""
    gone = answer("r1", 6) | dict.fromkeys(EVIDENCE, NA) | {"status": "not_found", "state": NA,
                                                           "type": NA, "amount_minor": NA,
                                                           "currency": NA}  # fmt: skip
    assert _evidence([_earlier("r1")], [gone]) == {"r1": ("not_found", None, None, None)}


def test_a_failed_fetch_tonight_keeps_the_earlier_evidence() -> None:
    """An error or an answer about another id is no evidence: the earlier ok answer stays."""
    assert _evidence([_earlier("r1")], [fetch_error("r1")]) == {"r1": ("ok", 13, "p1", 1401)}
    assert _evidence([_earlier("r1")], [wrong_answer("r1", "p9")]) == {"r1": ("ok", 13, "p1", 1401)}


def test_a_failed_fetch_with_no_earlier_evidence_shows_what_happened() -> None:
    """Never answered before: the error shows as such, and an answer about another id names it."""
    assert _evidence([_earlier("r1", NA)], [fetch_error("r1")]) == {
        "r1": ("error", None, None, None)
    }
    assert _evidence([_earlier("r2", NA)], [wrong_answer("r2", "p9")]) == {
        "r2": ("wrong_id", None, "p9", None)
    }


def test_a_type_13_id_seen_only_tonight_is_added_and_other_answers_are_not() -> None:
    """A returned-funds answer nobody announced joins the frame; a payout's answer does not."""
    got = _evidence([], [_returned("r-new", 400), answer("p1", 6)])
    assert got == {"r-new": ("ok", 13, "p1", 400)}


def test_applying_the_rule_twice_gives_the_same_evidence() -> None:
    """Idempotent: the chosen evidence chosen again with the same answers is unchanged."""
    ret = [_earlier("r1"), _earlier("r2", NA)]
    obs = [_returned("r1", 1000), fetch_error("r2")]
    once = _evidence(ret, obs)
    again = [
        notice(rid, "p1", obs_status=s, obs_type=t, obs_related_transaction_id=rel,
               obs_amount_minor=amount, obs_currency=None if s != "ok" else "EUR")
        for rid, (s, t, rel, amount) in once.items()
    ]  # fmt: skip
    assert _evidence(again, obs) == once
