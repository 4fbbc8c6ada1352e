"""Builders of literal :class:`~recon.decision.RunInputs` for the tests of the run's core at its
entry (:func:`recon.reconcile.decide.decide`), and readers of the :class:`Decision` it returns.

Every test that builds run inputs builds them here, with defaults, so a change to ``RunInputs``
touches this module alone. No logic under test here: the rows are plain data, and
:func:`next_night` is what the store keeps of a decision (``recon/store/apply.py``), no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from recon import frames as fr
from recon.conform import conform, typed
from recon.decision import (
    Decision,
    KnownReturns,
    ProviderInputs,
    RollForwardInputs,
    RunInputs,
    Window,
)
from recon.frames import Frame, empty
from recon.reconcile.classify import ClassifyParams
from recon.reconcile.decide import decide
from recon.reconcile.watch import WatchParams
from recon.report.details import details
from recon.rollforward_lines import Mark, frame
from recon.run_frames import (
    Answers,
    Attempts,
    Cases,
    EarlierAnswers,
    ProviderItems,
    RecordChanges,
    Recorded,
    Watched,
)
from tests.unit.classify_support import AS_OF, DAY, NA, payout

__all__ = [
    "AS_OF",
    "DAY",
    "NA",
    "WATCH",
    "answers",
    "cases",
    "decide_at",
    "findings",
    "inputs",
    "known",
    "next_night",
    "ok",
    "opened_cases",
    "payout",
    "payouts",
    "provider",
    "rollforward",
    "row",
    "statuses",
]

WATCH = WatchParams(
    schedule_days=(1, 2, 30), return_schedule_days=(6, 12), watch_days=90, return_watch_days=30
)
_TIME = "datetime64[us, UTC]"


def payouts(*rows: Mapping[str, Any]) -> pd.DataFrame:
    """The store's payouts (rows of :func:`~tests.unit.classify_support.payout`) as the run
    reads them: :class:`recon.frames.PayoutsIn` less ``polled`` and the failure callback."""
    ours = ("polled", "callback_failed_state", "callback_failed_at")
    stored = [c for c in fr.PayoutsIn.names() if c not in ours]
    frame = pd.DataFrame([{k: r.get(k, NA) for k in stored} for r in rows], columns=stored)
    return conform(frame, [c for c in fr.PayoutsIn if c in stored], name="payouts")


def ok(tid: str, state: int = 6, **fields: Any) -> dict[str, Any]:
    """The provider's ``ok`` answer about a EUR 10.00 payout (``fields`` override it)."""
    base = {"transaction_id": tid, "status": "ok", "state": state, "type": 1,
            "amount_minor": 1000, "amount": "10.00", "currency": "EUR"}  # fmt: skip
    return base | fields


def answers(*rows: Mapping[str, Any]) -> pd.DataFrame:
    """This run's answers (:class:`recon.run_frames.Answers`, oldest first); missing: <NA>."""
    frame = pd.DataFrame([{c: r.get(c, NA) for c in Answers} for r in rows], columns=list(Answers))
    return typed(frame, Answers)


def _times(values: Iterable[Any]) -> pd.Series:
    return pd.Series(pd.to_datetime(list(values), utc=True)).astype(_TIME)


def known(
    notices: Iterable[tuple[str, str | None] | tuple[str, str | None, str]] = (),
    *,
    started: Any = None,
    claims: Iterable[tuple[str, Any, Any, Any]] | None = None,
    earlier: Iterable[Mapping[str, Any]] = (),
    confirmations: Mapping[str, str] | None = None,
    seen13: Iterable[str] = (),
    watched: Iterable[Mapping[str, Any]] = (),
) -> KnownReturns:
    """What the store knew of returned-funds transactions when the run started.

    ``notices``: (return_id, claimed_original_id[, claimed amount, default 12.50]). ``claims``:
    (return_id, last_notified_at, first_asked_at, last_asked_at); by default each notice was
    notified two days before :data:`AS_OF` and asked about a day before. ``earlier``: rows of
    :class:`~recon.run_frames.EarlierAnswers` (``status`` ok unless given). ``confirmations``:
    return id -> the payout an earlier run confirmed it for. ``watched``: rows of
    :class:`~recon.run_frames.Watched`. ``started``: when the previous finished run started.
    """
    notes = [(n[0], n[1], n[2] if len(n) > 2 else "12.50") for n in notices]  # type: ignore[misc]
    if claims is None:
        claims = [(n[0], AS_OF - 2 * DAY, AS_OF - DAY, AS_OF - DAY) for n in notes]
    claim_rows = list(claims)
    earlier_rows = [{"status": "ok"} | dict(r) for r in earlier]
    earlier_frame = typed(
        pd.DataFrame(
            [{c: r.get(c, NA) for c in EarlierAnswers} for r in earlier_rows],
            columns=list(EarlierAnswers),
        ),
        EarlierAnswers,
    )
    confirmed = dict(confirmations or {})
    watched_rows = [{c: r.get(c, NA) for c in Watched} for r in watched]
    watched_frame = conform(
        pd.DataFrame(watched_rows, columns=[*Watched]),
        Watched,
        name="watched",
    )
    return KnownReturns(
        notices=pd.DataFrame(
            {
                "return_id": pd.Series([n[0] for n in notes], dtype="string"),
                "claimed_original_id": pd.Series([n[1] for n in notes], dtype="string"),
                "claimed_amount": pd.Series([n[2] for n in notes], dtype="string"),
            }
        ),
        earlier=earlier_frame,
        confirmations=pd.DataFrame(
            {
                "return_id": pd.Series(list(confirmed), dtype="string"),
                "confirmed_original_id": pd.Series(list(confirmed.values()), dtype="string"),
            }
        ),
        seen13=frozenset(seen13),
        claims=pd.DataFrame(
            {
                "return_id": pd.Series([c[0] for c in claim_rows], dtype="string"),
                "last_notified_at": _times(c[1] for c in claim_rows),
                "first_asked_at": _times(c[2] for c in claim_rows),
                "last_asked_at": _times(c[3] for c in claim_rows),
            }
        ),
        previous_started_at=None if started is None else pd.Timestamp(started).to_pydatetime(),
        watched=watched_frame,
    )


def cases(*rows: Mapping[str, Any]) -> pd.DataFrame:
    """Live cases (:class:`recon.run_frames.Cases`): an open case on a payout by default."""
    records = [
        {
            "item_kind": "payout", "state": "open", "facts": NA, "detail": "d",
            "opened_at": AS_OF - 3 * DAY, "owner": None, "note": None, "until": pd.NaT,
            "state_at": AS_OF - DAY, "previous_resolution": None, "reported_run_id": pd.NA,
            "version": 1, **r,
        }
        for r in rows
    ]  # fmt: skip
    return typed(pd.DataFrame(records, columns=list(Cases)), Cases)  # as the store reads them


def _record_changes(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    none = empty(RecordChanges)
    frame = pd.DataFrame([{c: r.get(c, NA) for c in none.columns} for r in rows])
    if frame.empty:
        return none
    frame["imported_at"] = pd.to_datetime(frame["imported_at"], utc=True)
    return frame.astype(dict(none.dtypes))


def provider(
    items: Iterable[Mapping[str, Any]] = (),
    *,
    attempts: Iterable[Mapping[str, Any]] = (),
    recorded: Iterable[Mapping[str, Any]] = (),
    recorded_ids: Iterable[str] = (),
) -> ProviderInputs:
    """The provider's side: ids it named that the record lacks (first named by a callback a day
    before :data:`AS_OF`, not asked yet, unless given), creates without an id, recorded payouts."""
    named = {"first_named_at": AS_OF - DAY, "named_by": "callback", "status": "unasked"}

    def frame(rows: Iterable[Mapping[str, Any]], declared: type[Frame]) -> pd.DataFrame:
        names = declared.names()
        return typed(pd.DataFrame([{c: r.get(c, NA) for c in names} for r in rows]), declared)

    return ProviderInputs(
        items=frame(({**named, **r} for r in items), ProviderItems),
        attempts=frame(attempts, Attempts),
        recorded=frame(recorded, Recorded),
        window=pd.Timedelta(hours=24),
        recorded_ids=frozenset(recorded_ids),
    )


def rollforward(
    previous: Iterable[tuple[str, str, int, int | None]] = (),
    *,
    stored: Iterable[tuple[str, str, int, int | None]] | None = None,
    records: Iterable[tuple[str, str, int]] = (),
) -> RollForwardInputs:
    """The roll-forward's reads for a night after run 1: the ``now`` lines run 1 stored
    (currency, outcome, count, amount; the findings' outcome "findings"), ``stored``: the
    payouts' position as read (by default run 1's), and ``records``: (transaction_id, currency,
    amount) a payout's latest history row kept where it differs from the payout's. Nothing moved
    in the window before tonight, and no case action came since run 1's mark."""
    was = frame((c, o, "now", n, a) for c, o, n, a in previous)
    read = was if stored is None else frame((c, o, "now", n, a) for c, o, n, a in stored)
    pairs = pd.DataFrame(
        columns=["before_currency", "before_outcome", "after_currency", "after_outcome", "same",
                 "imported", "count", "before_amount", "after_amount"]
    )  # fmt: skip
    returns = pd.DataFrame(columns=["return_id", "currency", "amount_minor"])
    kept = pd.DataFrame(list(records), columns=["transaction_id", "currency", "amount_minor"])
    return RollForwardInputs(
        mark=Mark(1, started=False, actions_after=0, actions_through=0),
        previous=was,
        tonight=Window(pairs, returns, returns, frame([])),
        payouts_now=read[read["outcome"] != "findings"],
        records=kept.astype(
            {"transaction_id": "string", "currency": "string", "amount_minor": "Int64"}
        ),
    )


def inputs(
    *rows: Mapping[str, Any],
    answered: Iterable[Mapping[str, Any]] = (),
    poll: Iterable[str] | None = None,
    returns: KnownReturns | None = None,
    live: pd.DataFrame | None = None,
    previous_run_id: int | None = 1,
    run_id: int | None = 2,
    failure_callbacks: Iterable[tuple[str, int, Any]] = (),
    unreadable: Iterable[tuple[int, str, str, str] | tuple[int, str, str, str, str]] = (),
    record_changes: Iterable[Mapping[str, Any]] = (),
    provider: ProviderInputs | None = None,
    other_outcomes: Mapping[str, int] | None = None,
    rolled: RollForwardInputs | None = None,
) -> RunInputs:
    """The run's inputs: these payouts (``rows``) and answers, nothing else known by default.

    ``poll``: the ids the run set out to poll; by default those it has an answer about.
    ``live``: the live cases (:func:`cases`). ``failure_callbacks``: (transaction_id, state,
    received_at). ``unreadable``: (id, status, reason, excerpt[, account not configured]) of
    notifications not read in full.
    """
    got = answers(*answered)
    callbacks = list(failure_callbacks)
    notes = list(unreadable)
    base = RunInputs(
        payouts=payouts(*rows),
        poll_ids=frozenset(got["transaction_id"].astype(str) if poll is None else poll),
        answers=got,
        returns=returns if returns is not None else known(),
        previous_run_id=previous_run_id,
        run_id=run_id,
        other_outcomes=dict(other_outcomes or {}),
        record_changes=_record_changes(record_changes),
        provider=provider,
        rollforward=rolled,
    )
    extra: dict[str, Any] = {}
    if live is not None:
        extra["cases"] = live
    if callbacks:
        extra["failure_callbacks"] = pd.DataFrame(
            {
                "transaction_id": pd.Series([c[0] for c in callbacks], dtype="string"),
                "state": pd.Series([c[1] for c in callbacks], dtype="Int64"),
                "received_at": _times(c[2] for c in callbacks),
            }
        )
    if notes:
        extra["unreadable_notifications"] = pd.DataFrame(
            {
                "id": pd.Series([n[0] for n in notes], dtype="Int64"),
                "status": pd.Series([n[1] for n in notes], dtype="string"),
                "reason": pd.Series([n[2] for n in notes], dtype="string"),
                "excerpt": pd.Series([n[3] for n in notes], dtype="string"),
                "account": pd.Series([n[4] if len(n) > 4 else None for n in notes], dtype="string"),
            }
        )
    return RunInputs(**{**base.__dict__, **extra})


def decide_at(
    run: RunInputs, *, as_of: pd.Timestamp = AS_OF, params: ClassifyParams | None = None
) -> Decision:
    """:func:`decide` at ``as_of`` with the default rules and :data:`WATCH`."""
    return decide(run, as_of=as_of.to_pydatetime(), params=params or ClassifyParams(), watch=WATCH)


def statuses(decision: Decision) -> dict[tuple[str, str], str]:
    """(item id, flag) -> status of every finding the report lists."""
    exc = decision.exceptions
    return {
        (str(i), str(f)): str(s)
        for i, f, s in zip(exc["item_id"], exc["flag"], exc["status"], strict=True)
    }


def findings(decision: Decision) -> dict[tuple[str, str], dict[str, Any]]:
    """(item id, flag) -> the report's row of each finding (status, detail in words,
    exception_id...)."""
    exc = decision.exceptions.assign(detail=details(decision.exceptions)).astype(object)
    return {(str(r["item_id"]), str(r["flag"])): r for r in exc.to_dict("records")}


def row(decision: Decision, tid: str) -> dict[str, Any]:
    """The decided payout ``tid`` as a plain record."""
    frame = decision.payouts.set_index("transaction_id").astype(object)
    return {str(k): v for k, v in frame.loc[tid].items()}


def next_night(decision: Decision, tid: str, **overrides: Any) -> dict[str, Any]:
    """The payout row the store gives the next run after writing ``decision`` (store/apply.py)."""
    now = row(decision, tid)
    kept = {k: now[k] for k in ("merchant_reference", "amount_minor", "currency",
                                "bank_account_id", "customer_id", "created", "eta")}  # fmt: skip
    prev = {
        "prev_outcome": str(now["outcome"]), "prev_state": now["state"],
        "prev_error_code": now["error_code"], "prev_outcome_since": now["outcome_since"],
        "prev_exceptions": now["exceptions"], "prev_returned_minor": now["returned_minor"],
        "prev_candidate_duplicates": now["candidate_duplicates"],
        "prev_next_check_at": now["next_check_at"], "ever_failed": bool(now["ever_failed_now"]),
        "settled_since": now["settled_since_now"],
        "prev_fee_minor": now["fee_minor"], "prev_fee_id": now["fee_id"],
        "prev_fee_expected_minor": now["fee_expected_minor"],
        "prev_fee_entry": now["fee_entry"],
    }  # fmt: skip
    return {"transaction_id": tid, **kept, **prev, **overrides}


def opened_cases(decision: Decision, **overrides: Any) -> pd.DataFrame:
    """The cases ``decision`` opened, as the next run reads them (``overrides``: per column)."""
    return cases(
        *({k: v for k, v in c.items() if k in Cases} | overrides for c in decision.cases.opened)
    )
