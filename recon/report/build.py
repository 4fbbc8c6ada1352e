"""Building a :class:`ReportInput`: from a run's decision (dry run) or from the store (any run).

A normal run writes its decision to the store and then reports from the store, through the same
function ``recon report`` uses, so a report rebuilt later, or by a run resumed after a crash, is the
same report.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd
from sqlalchemy import Engine

from recon.errors import InputError
from recon.reconcile.classify import Classified
from recon.reconcile.frames import ExceptionCol, ItemKind
from recon.report.model import PAYOUT_COLUMNS, ReportInput, RunInfo
from recon.store import reconcile as q
from recon.store.runs import latest_runs, run_record


def assemble(
    info: RunInfo,
    payouts: pd.DataFrame,
    compared: pd.DataFrame,
    returns: pd.DataFrame,
    changes: pd.DataFrame,
    *,
    timezone: str,
) -> ReportInput:
    """Join what a person needs to act on each exception (amount, reference, error code)."""
    pay = payouts[list(PAYOUT_COLUMNS)].reset_index(drop=True)
    exc = compared.astype({ExceptionCol.ITEM_KIND: "string", ExceptionCol.FLAG: "string",
                           ExceptionCol.STATUS: "string"})  # fmt: skip
    on_payouts = exc[exc[ExceptionCol.ITEM_KIND] == ItemKind.PAYOUT].merge(
        pay[["transaction_id", "amount_minor", "currency", "merchant_reference", "error_code"]],
        how="left",
        left_on=ExceptionCol.ITEM_ID,
        right_on="transaction_id",
    )
    on_returns = exc[exc[ExceptionCol.ITEM_KIND] == ItemKind.RETURN].merge(
        returns[["return_id", "amount_minor", "currency"]],
        how="left",
        left_on=ExceptionCol.ITEM_ID,
        right_on="return_id",
    )
    columns = [
        "item_id", "item_kind", "flag", "status", "detail",
        "amount_minor", "currency", "merchant_reference", "error_code",
    ]  # fmt: skip
    exceptions = pd.concat(
        [on_payouts.reindex(columns=columns), on_returns.reindex(columns=columns)],
        ignore_index=True,
    ).astype(
        {
            "item_id": "string",
            "item_kind": "string",
            "flag": "string",
            "status": "string",
            "detail": "string",
            "amount_minor": "Int64",
            "currency": "string",
            "merchant_reference": "string",
            "error_code": "string",
        }
    )
    return ReportInput(
        run=info,
        payouts=pay,
        exceptions=exceptions.sort_values(["status", "flag", "item_id"]).reset_index(drop=True),
        returns=returns.reset_index(drop=True),
        changes=changes.reset_index(drop=True),
        timezone=timezone,
    )


def from_decision(
    info: RunInfo, classified: Classified, compared: pd.DataFrame, *, timezone: str
) -> ReportInput:
    """The report of a decision that was not stored (a dry run)."""
    pay = classified.payouts.astype({"outcome": "string"})
    changed = pay[pay["outcome_changed"].astype(bool)]
    changes = pd.DataFrame(
        {
            "transaction_id": changed["transaction_id"],
            "previous_outcome": changed["prev_outcome"].astype("string"),
            "outcome": changed["outcome"],
            "amount_minor": changed["amount_minor"],
            "currency": changed["currency"],
        }
    )
    return assemble(info, pay, compared, classified.returns, changes, timezone=timezone)


def from_store(
    engine: Engine,
    *,
    timezone: str,
    run_id: int | None = None,
    as_of: datetime | None = None,
) -> ReportInput:
    """The report of a stored run (default: the latest that applied its outcomes)."""
    with engine.connect() as conn:
        if run_id is None:
            run_id = q.previous_complete_run(conn, None, include_applied=True)
            if run_id is None:
                raise InputError("there is no completed run to report on yet: run `recon run`")
        record = run_record(conn, run_id)
        if record is None:
            known = ", ".join(str(r.id) for r in latest_runs(conn, 5)) or "none"
            raise InputError(f"--run {run_id}: no such run (latest runs: {known})")
        payouts = q.payouts_at_run(conn, run_id)
        compared = q.load_exceptions(conn, run_id, open_only=False)
        returns = q.run_returns_frame(conn, run_id)
        changes = q.outcome_changes(conn, run_id)
        previous = q.previous_complete_run(conn, run_id)
    counts = record.counts
    info = RunInfo(
        run_id=run_id,
        started_at=record.started_at,
        finished_at=record.finished_at,
        as_of=as_of or record.as_of,
        status=record.status,
        duration_seconds=counts.get("seconds"),
        requests=int(counts.get("requests", 0)),
        requests_per_second=counts.get("requests_per_second"),
        previous_run_id=previous,
    )
    return assemble(info, payouts, compared, returns, changes, timezone=timezone)
