"""What the morning read puts first after Needs action: tonight's newly failed payouts.

Pure frames in, frames out. A payout that failed or was aborted since the previous run never left,
and someone must decide to pay the customer again or contact them; each error code's advice comes
from the provider's catalogue (:mod:`recon.provider.codes`, through :mod:`.actions`).

Choices made here, which the rule alone leaves open:

- Newly failed is an outcome change into failed or aborted from any other outcome (a new payout
  included): failed -> aborted was counted the night it failed.
- A payout whose findings say it was booked as paid (settled, then failed: a kind without
  ``repay_advice``) is left out: its finding (in Needs action) says not to re-pay it as an
  ordinary failure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from recon.constants import FAILED_OUTCOMES
from recon.report.actions import NO_CODE_ACTION, advises_repay, error_action
from recon.report.fmt import local_times_text
from recon.report.model import ReportInput, once_per_report

NO_CODE = "(no error code)"


@once_per_report
def failed_tonight(data: ReportInput) -> pd.DataFrame:
    """The payouts that failed or were aborted since the previous run, largest first: the payout
    columns, ``code`` (:data:`NO_CODE` for none), ``advice`` (the catalogue's action for it, or
    the no-code line) and the local ``created_text``. Once per report (the counts, the money at
    stake and its section each read it): not to be changed."""
    changes = data.changes
    now = changes["outcome"].astype(object)
    before = changes["previous_outcome"].astype(object)
    newly = now.isin(FAILED_OUTCOMES) & ~before.isin(FAILED_OUTCOMES)
    ids = data.keyed(changes, "transaction_id")[newly.to_numpy(dtype=bool)].astype(object)
    pay = data.payouts
    out = pay[data.keyed(pay, "transaction_id").astype(object).isin(ids).to_numpy(dtype=bool)]
    repay = [advises_repay(f) for f in out["exceptions"].astype(object)]
    out = out[np.array(repay, dtype=bool)].copy()
    code = out["error_code"].astype(object).where(out["error_code"].notna(), "").astype(str)
    advice = {c: error_action(c) or NO_CODE_ACTION for c in pd.unique(code)}
    out["code"] = code.where(code != "", NO_CODE)
    out["advice"] = code.map(advice).astype(object)
    out["created_text"] = local_times_text(out["created"], data.timezone).tolist()
    out["_amount"] = out["amount_minor"].astype("Int64").fillna(0).astype(np.int64)
    out = out.sort_values(["_amount", "transaction_id"], ascending=[False, True], kind="stable")
    return out.drop(columns="_amount").reset_index(drop=True)


def by_currency(failed: pd.DataFrame) -> pd.DataFrame:
    """currency, count, amount_minor: tonight's failed payouts per currency."""
    frame = pd.DataFrame(
        {
            "currency": failed["currency"].astype(object),
            "amount": failed["amount_minor"].astype("Int64").fillna(0).astype(np.int64),
        }
    )
    out = frame.groupby("currency", sort=True).agg(
        count=("amount", "size"), amount_minor=("amount", "sum")
    )
    return out.reset_index().astype({"count": np.int64, "amount_minor": np.int64})


def by_code(failed: pd.DataFrame) -> pd.DataFrame:
    """code, advice, currency, count, amount_minor: per error code (most payouts first) and
    currency, so each code's advice is read once."""
    frame = pd.DataFrame(
        {
            "code": failed["code"].astype(object),
            "advice": failed["advice"].astype(object),
            "currency": failed["currency"].astype(object),
            "amount": failed["amount_minor"].astype("Int64").fillna(0).astype(np.int64),
        }
    )
    out = frame.groupby(["code", "advice", "currency"], sort=True).agg(
        count=("amount", "size"), amount_minor=("amount", "sum")
    )
    out = out.reset_index().astype({"count": np.int64, "amount_minor": np.int64})
    total = out.groupby("code")["count"].transform("sum")
    out = out.assign(_total=total).sort_values(["_total", "code"], ascending=[False, True])
    return out.drop(columns="_total").reset_index(drop=True)
