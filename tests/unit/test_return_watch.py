"""Confirmed returns stay watched: asked again on the return watch schedule,
and the latest answer about a return speaks for it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from recon.decision import KnownReturns, answers_frame
from recon.reconcile.return_polls import known_returns, returns_to_poll
from recon.reconcile.watch import WatchParams
from recon.run_frames import Answers

CONFIRMED = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
DAY = timedelta(days=1)
WATCH = WatchParams(
    schedule_days=(1, 6, 30), return_schedule_days=(6, 12), watch_days=90, return_watch_days=30
)
NOTHING = pd.DataFrame({"return_id": pd.Series(dtype="string")})


def _answer(tid: str, status: str = "ok", **fields: object) -> tuple[object, ...]:
    row = dict.fromkeys(Answers) | {"transaction_id": tid, "status": status} | fields
    return tuple(row[c] for c in Answers)


def _known(
    *, last_asked: datetime | None = CONFIRMED, earlier: pd.DataFrame | None = None
) -> KnownReturns:
    """One return ``r``, confirmed for payout ``p`` at 14.01 EUR by the run of CONFIRMED."""
    return KnownReturns(
        notices=pd.DataFrame(
            {
                "return_id": pd.Series(dtype="string"),
                "claimed_original_id": pd.Series(dtype="string"),
            }
        ),
        earlier=earlier
        if earlier is not None
        else pd.DataFrame(
            {
                "transaction_id": ["r"],
                "status": ["ok"],
                "type": pd.Series([13], dtype="Int64"),
                "related_transaction_id": ["p"],
                "original_transaction_id": ["p"],
                "amount_minor": pd.Series([1401], dtype="Int64"),
                "currency": ["EUR"],
            }
        ),
        confirmations=pd.DataFrame({"return_id": ["r"], "confirmed_original_id": ["p"]}),
        seen13=frozenset({"r"}),
        watched=pd.DataFrame(
            {
                "return_id": pd.Series(["r"], dtype="string"),
                "confirmed_at": pd.Series([CONFIRMED], dtype="datetime64[us, UTC]"),
                "confirmed_amount_minor": pd.Series([1401], dtype="Int64"),
                "confirmed_currency": pd.Series(["EUR"], dtype="string"),
                "last_asked_at": pd.Series([last_asked], dtype="datetime64[us, UTC]"),
            }
        ),
    )


def _asked(known: KnownReturns, as_of: datetime, answers: pd.DataFrame | None = None) -> list[str]:
    chosen, _ = returns_to_poll(
        known,
        answers if answers is not None else answers_frame([]),
        as_of=as_of,
        watch=WATCH,
        cap=10,
    )
    return chosen


def test_a_confirmed_return_is_asked_again_when_its_return_watch_day_comes() -> None:
    """Confirmed on day 0, last asked then: not asked on day 5, asked from day 6 on."""
    assert _asked(_known(), CONFIRMED + 5 * DAY) == []
    assert _asked(_known(), CONFIRMED + 6 * DAY) == ["r"]
    assert _asked(_known(), CONFIRMED + 9 * DAY) == ["r"]


def test_a_confirmed_return_asked_on_a_watch_day_waits_for_the_next_one() -> None:
    """Asked on day 6: not again on day 11, again on day 12, never after the window's last day."""
    on_day_6 = _known(last_asked=CONFIRMED + 6 * DAY)
    assert _asked(on_day_6, CONFIRMED + 11 * DAY) == []
    assert _asked(on_day_6, CONFIRMED + 12 * DAY) == ["r"]
    on_day_30 = _known(last_asked=CONFIRMED + 30 * DAY)
    assert _asked(on_day_30, CONFIRMED + 45 * DAY) == []


def test_a_confirmed_return_never_asked_counts_from_its_confirmation() -> None:
    """No ask on record (confirmed from the payout's side): due on the schedule all the same."""
    never = _known(last_asked=None)
    assert _asked(never, CONFIRMED + 2 * DAY) == []
    assert _asked(never, CONFIRMED + 6 * DAY) == ["r"]


def test_a_confirmed_return_answered_this_run_is_not_asked_twice() -> None:
    """This run's payout answer already made the run ask about it: one ask."""
    answers = answers_frame([_answer("r", type=13, related_transaction_id="p")])
    assert _asked(_known(), CONFIRMED + 6 * DAY, answers) == []


def _returns(known: KnownReturns) -> pd.DataFrame:
    none = answers_frame([])
    latest = pd.DataFrame(columns=[c if c != "amount" else "amount_text" for c in Answers])
    return known_returns(known, none, latest.astype({"status": "string"}), set())


def test_a_confirmed_return_carries_its_first_confirmation() -> None:
    """The returns frame says when and at what amount the return was first confirmed."""
    frame = _returns(_known())
    row = frame.iloc[0]
    assert row["return_id"] == "r"
    assert row["obs_status"] == "ok"
    assert row["confirmed_at"] == pd.Timestamp(CONFIRMED)
    assert row["confirmed_amount_minor"] == 1401
    assert row["confirmed_currency"] == "EUR"


def test_an_earlier_404_after_the_confirmation_is_the_returns_evidence() -> None:
    """The latest earlier answer, a 404, speaks for the return on a night that does not ask, and
    the return is still known though no notification announced it."""
    gone = pd.DataFrame(
        {
            "transaction_id": ["r"],
            "status": ["not_found"],
            "type": pd.Series([None], dtype="Int64"),
            "related_transaction_id": [None],
            "original_transaction_id": [None],
            "amount_minor": pd.Series([None], dtype="Int64"),
            "currency": [None],
        }
    )
    frame = _returns(_known(earlier=gone))
    assert frame["return_id"].tolist() == ["r"]
    assert frame.iloc[0]["obs_status"] == "not_found"
    assert frame.iloc[0]["confirmed_original_id"] == "p"


def test_a_store_with_no_confirmed_return_watches_nothing() -> None:
    """No confirmations: no return is asked about by the watch."""
    none = pd.DataFrame({"return_id": [], "confirmed_original_id": []})
    known = KnownReturns(notices=NOTHING, earlier=pd.DataFrame(), confirmations=none)
    assert _asked(known, CONFIRMED) == []
