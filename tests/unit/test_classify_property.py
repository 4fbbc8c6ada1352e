"""Properties over random stores: one outcome each, and fetch errors never invent a failure."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recon.constants import Outcome
from tests.unit.classify_support import NA, answer, fetch_error, not_found, notice, payout, run

OUTCOMES = [o.value for o in Outcome]
ANSWER_KINDS = ["ok", "not_found", "error", "none"]


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    """Payouts with random previous outcomes and random answers, plus random return notices."""
    n = draw(st.integers(min_value=1, max_value=12))
    payouts, observations, kinds = [], [], []
    for i in range(n):
        tid = f"p{i}"
        kind = draw(st.sampled_from(ANSWER_KINDS))
        payouts.append(
            payout(
                tid,
                prev_outcome=draw(st.sampled_from([NA, *OUTCOMES])),
                ever_failed=draw(st.booleans()),
                polled=kind != "none" or draw(st.booleans()),
                amount_minor=draw(st.sampled_from([1000, 999])),
            )
        )
        if kind == "ok":
            state = draw(st.integers(min_value=-1, max_value=14))
            kind_of = draw(st.sampled_from([0, 1, 13]))
            observations.append(answer(tid, state, type=kind_of, related_transaction_id=NA))
        elif kind == "not_found":
            observations.append(not_found(tid))
        elif kind == "error":
            observations.append(fetch_error(tid))
        kinds.append(kind)
    claims = draw(st.lists(st.sampled_from([f"p{i}" for i in range(n)] + ["ghost"]), max_size=3))
    returns = [notice(f"r{j}", claim) for j, claim in enumerate(claims)]
    return payouts, observations + [fetch_error(r["return_id"]) for r in returns], [kinds, returns]


@settings(max_examples=50, deadline=None)
@given(stores())
def test_every_payout_gets_one_outcome_and_fetch_errors_never_fail_it(
    store: tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]],
) -> None:
    """One outcome per payout, from the enum; no answer never yields failed, aborted or unknown."""
    payouts, observations, (kinds, returns) = store
    result = run(payouts, observations, returns)
    out = result.payouts
    assert out["transaction_id"].tolist() == [p["transaction_id"] for p in payouts]
    assert out["outcome"].notna().all()
    assert set(out["outcome"].astype(str)) <= set(OUTCOMES)
    for row, kind, outcome in zip(payouts, kinds, out["outcome"].astype(str), strict=True):
        if kind in ("error", "none"):
            kept = row["prev_outcome"] or Outcome.UNCHECKED.value
            assert outcome == kept
            if kept not in ("failed", "aborted", "unknown"):
                assert outcome not in ("failed", "aborted", "unknown")
