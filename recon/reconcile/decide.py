"""The decision of a run: plain data in, a :class:`~recon.decision.Decision` out. Pure.

No database, network, clock or files: "now" is ``as_of``. Every rule of the run lives in this
package: outcomes and flags (:mod:`.outcomes`), which returns are known and which answer speaks
for them (:mod:`.returns`), what changed and who ever failed (:mod:`.record`), and how this run's
exceptions compare with the last run's (:mod:`.compare`), and each exception's case: its id and
where people left it (:mod:`.cases`).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pandas as pd

from recon import frames as fr
from recon.constants import ANSWERED, Flag, FlagStatus
from recon.decision import Decision, RunInputs
from recon.frames import ExceptionCol, ItemKind, ObsCol, PayoutCol
from recon.reconcile.cases import finding_facts, follow_cases
from recon.reconcile.classify import ClassifyParams, classify
from recon.reconcile.compare import compare_exceptions
from recon.reconcile.record import with_record
from recon.reconcile.returns import known_returns, quiet_claims
from recon.reconcile.watch import WatchParams

_KEY = [ExceptionCol.ITEM_KIND, ExceptionCol.ITEM_ID, ExceptionCol.FLAG]


def latest_answers(answers: pd.DataFrame) -> pd.DataFrame:
    """The classifier's ``observations``: the latest of this run's answers per id."""
    latest = answers.drop_duplicates(ObsCol.TRANSACTION_ID, keep="last").sort_values(
        ObsCol.TRANSACTION_ID, kind="stable"
    )
    frame = latest.rename(columns={"amount": ObsCol.AMOUNT_TEXT})
    return fr.conform(frame, fr.OBSERVATIONS_IN, name="observations").reset_index(drop=True)


def _this_runs_payouts(inputs: RunInputs) -> pd.DataFrame:
    """Every stored payout with ``polled`` and ``callback_failed`` set, less those imported while
    the run polled.

    Every payout never reconciled is polled, so one that is neither reconciled nor among the ids
    the run set out to poll arrived after they were chosen: it waits for the next run (otherwise
    it would be "polled" with no answer, and flagged as a fetch failure).
    """
    pay = inputs.payouts
    polled = pay[PayoutCol.TRANSACTION_ID].isin(list(inputs.poll_ids))
    arrived = pay[PayoutCol.PREV_OUTCOME].isna() & ~polled
    callbacks = inputs.failure_callbacks
    said = pd.Series(
        ("a callback said state " + callbacks["state"].astype("string") + " on "
         + callbacks["received_at"].dt.strftime("%Y-%m-%d %H:%M UTC")).to_numpy(),
        index=pd.Index(callbacks["transaction_id"]),
        dtype="string",
    )  # fmt: skip
    callback_failed = pay[PayoutCol.TRANSACTION_ID].map(said).astype("string")
    return pay.assign(
        **fr.columns({PayoutCol.POLLED: polled, PayoutCol.CALLBACK_FAILED: callback_failed})
    )[~arrived.to_numpy()]


def _unreadable(notifications: pd.DataFrame) -> pd.DataFrame:
    """One exception per stored notification recon could not read in full."""
    detail = (
        notifications["status"] + ": " + notifications["reason"].fillna("")
        + "; the body starts " + notifications["excerpt"].fillna("")
    )  # fmt: skip
    return pd.DataFrame(
        {
            ExceptionCol.ITEM_ID: notifications["id"].astype("string"),
            ExceptionCol.ITEM_KIND: ItemKind.NOTIFICATION.value,
            ExceptionCol.FLAG: Flag.NOTIFICATION_UNREADABLE.value,
            ExceptionCol.DETAIL: detail.astype("string"),
        }
    )


def _answered(payouts: pd.DataFrame, latest: pd.DataFrame) -> pd.Series:
    """Per payout: this run has an answer about it (ok, not found, or a session's id)."""
    got = latest.loc[latest[ObsCol.STATUS].isin(list(ANSWERED)), ObsCol.TRANSACTION_ID]
    return payouts[PayoutCol.TRANSACTION_ID].isin(got)


def decide(
    inputs: RunInputs, *, as_of: datetime, params: ClassifyParams, watch: WatchParams
) -> Decision:
    """Classify every payout, link every return, compare exceptions with the previous run's."""
    latest = latest_answers(inputs.answers)
    payouts = _this_runs_payouts(inputs)
    # Claims no answer confirms, already reported once: out of the report, and out of the
    # comparison below (so they never turn "resolved").
    quiet = quiet_claims(inputs.returns, inputs.answers)
    returns = known_returns(inputs.returns, inputs.answers, latest, quiet)
    now = pd.Timestamp(as_of)
    classified = classify(payouts, latest, returns, as_of=now, params=params)
    previous = inputs.previous_exceptions
    # Unreadable notifications are reported once, by the run after they arrived, and so are quiet
    # claims: neither turns "resolved".
    still_open = previous[
        (previous[ExceptionCol.STATUS] != FlagStatus.CLEARED)
        & (previous[ExceptionCol.ITEM_KIND] != ItemKind.NOTIFICATION)
        & ~(
            (previous[ExceptionCol.ITEM_KIND] == ItemKind.RETURN)
            & previous[ExceptionCol.ITEM_ID].isin(quiet)
        )
    ]
    found = pd.concat(
        [classified.exceptions, _unreadable(inputs.unreadable_notifications)], ignore_index=True
    ).astype(dict(fr.EXCEPTIONS))
    compared = compare_exceptions(found, still_open[list(map(str, fr.EXCEPTIONS))])
    answered = _answered(classified.payouts, latest)
    facts = found[_KEY].assign(facts=finding_facts(found, classified.payouts, answered))
    cases = follow_cases(
        compared.merge(facts.drop_duplicates(_KEY), how="left", on=_KEY),
        inputs.cases,
        run_id=inputs.run_id,
        as_of=as_of,
    )
    outcomes = Counter(inputs.other_outcomes)
    decided = classified.payouts[PayoutCol.OUTCOME].astype(str).value_counts()
    outcomes.update({str(k): int(v) for k, v in decided.items()})
    flags = found[ExceptionCol.FLAG].astype(str).value_counts()
    return Decision(
        payouts=with_record(classified.payouts, payouts, answered, as_of=now, watch=watch),
        exceptions=cases.exceptions,
        cases=cases,
        returns=classified.returns,
        previous_run_id=inputs.previous_run_id,
        outcomes={str(k): int(v) for k, v in outcomes.items()},
        flags={str(k): int(v) for k, v in flags.items()},
    )
