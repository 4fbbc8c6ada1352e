"""Classify the nightly run: frames in, frames out, "now" passed in.

The steps live in :mod:`recon.reconcile.outcomes` (payouts) and :mod:`recon.reconcile.returns`
(returned-funds transactions); this module chains them and holds the rules' description.

:func:`classify` takes the payouts in the store, this run's provider answers and what is known about
returned-funds transactions (the frame contract is in :mod:`recon.frames`) and decides,
for every payout, exactly one outcome and zero or more exception flags. It never touches the
network, the database, the clock or files, and it is vectorised: merges, masks and ``np.select``,
never a Python loop over rows (only over the handful of flag kinds).

Outcome, from this run's ``ok`` answer: state 6 settled (returned if a confirmed return points to
it), 3 failed, 2 aborted, 4 delayed when the error code is ``transaction_is_delayed_in_bank`` or
``as_of > eta + delay_grace``, any other state pending. ``not_found`` gives unknown. A payout with
no ``ok``/``not_found`` answer (not polled, or its fetch failed) keeps ``prev_outcome``, or is
unchecked when it never had one; a fetch failure therefore never yields failed, aborted or unknown.

A return is confirmed only by the provider: its own ``ok`` answer is type 13 and names the payout
(``original_transaction_id``, else ``related_transaction_id``), or the payout's ``ok`` answer names
it in ``related_transaction_id`` while it is observed ``ok`` as type 13 (and does not name another
payout), or an earlier run confirmed it (``confirmed_original_id``). A notification alone never
confirms. Returned is reached only from settled.

Choices the payout contract leaves open:

- A state number outside 0-7 (or missing) in an ``ok`` answer is **pending**: not final, so the
  payout is polled again every night and turns ``stale`` after ``stale_days``. Settled would hide
  it, failed/aborted invite a second payment, and unknown stops polling after the re-check window.
- A late settlement uses ``ever_failed``, a previous outcome of failed/aborted or a callback
  (:mod:`recon.reconcile.late`); its mirror, a payout failed after it was seen settled, is
  :mod:`recon.reconcile.reversals`' (a settled night, then pending, then failed counts).
- A ``wrong_id`` answer (about another id) is no answer: the outcome is kept, and the finding is
  ``wrong_transaction``, not ``fetch_failed``.
- Findings that need an answer (the kinds declared ``carried``) are carried from
  ``prev_exceptions`` while a payout is not fetched (final payouts are not polled), so they persist
  instead of turning "resolved" unseen.
- In an ``ok`` answer a missing amount, currency or type counts as a mismatch (amount_mismatch,
  currency_mismatch, not_a_payout): what cannot be checked is not assumed to agree.
- ``stale`` counts from ``created``, else ``prev_outcome_since``; with neither it is not raised.
- A late settlement whose candidate duplicate also settled paid the customer twice
  (:mod:`recon.reconcile.double_payments`); raised beside the late settlement, not instead.
- A return's own link is ``original_transaction_id`` (interface 3.3), else
  ``related_transaction_id``. A payout-side link counts only when exactly one payout names the
  return. A confirmed return still adds to ``returned_minor`` of a payout that is not settled (its
  outcome does not change).
- A return whose notifications name different payouts is never verified and has no original.
- A return that could not be fetched gets ``fetch_failed`` rather than ``return_unverified``.
- Possible duplicates (:mod:`recon.reconcile.duplicates`) are judged on this run's outcomes.
- Each finding's facts are values (:mod:`recon.reconcile.finding`); a kind's facts that the payout
  itself holds (its state, its returned amount) are added to those its rule gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from recon import frames as fr
from recon.conform import conform
from recon.constants import ObsStatus
from recon.errors import InputError
from recon.frames import Finding, ItemKind, Observations, PayoutsOut
from recon.reconcile.fees import with_fee
from recon.reconcile.finding import Found, Kind, Mask, findings, no_findings
from recon.reconcile.kinds import PAYOUT_RULES
from recon.reconcile.late import candidates_of
from recon.reconcile.outcomes import (
    ClassifyParams,
    Tonight,
    apply_returns,
    base_outcome,
    join_observations,
    summarise,
)
from recon.reconcile.payout_checks import PAYOUT_FACTS
from recon.reconcile.return_checks import return_findings
from recon.reconcile.returns import collapse_returns, link_returns
from recon.reconcile.work import W, carried

__all__ = ["Classified", "ClassifyParams", "classify"]
_P = PayoutsOut


@dataclass(frozen=True)
class Classified:
    """The decision of one run: payouts, findings and returns (see :mod:`frames`)."""

    payouts: pd.DataFrame
    exceptions: pd.DataFrame
    returns: pd.DataFrame


def classify(
    payouts: pd.DataFrame,
    observations: pd.DataFrame,
    returns: pd.DataFrame,
    *,
    as_of: pd.Timestamp,
    params: ClassifyParams | None = None,
) -> Classified:
    """Decide every payout's outcome and findings, and every return's link, as of ``as_of``."""
    params = params or ClassifyParams()
    if as_of.tzinfo is None:
        raise InputError("as_of must be a timezone-aware timestamp")
    as_of = as_of.tz_convert("UTC")
    pay, ids = _conform_payouts(payouts)
    obs = _conform_observations(observations)
    ret = conform(returns, fr.ReturnsIn, name="returns")
    work = pay.pipe(join_observations, obs).pipe(base_outcome, as_of, params)
    links = link_returns(work, obs, collapse_returns(ret), ids)
    work = work.pipe(apply_returns, links).pipe(with_fee, params.fees)
    found, candidates = _on_payouts(work, Tonight(as_of, params))
    work = summarise(
        work.assign(**fr.columns({_P.CANDIDATE_DUPLICATES: candidates})),
        {kind.name: _in_cell(work, kind, f) for kind, f in found.items()},
        as_of,
    )
    extras = [c for c in pay.columns if c not in fr.PayoutsIn.names()]
    exceptions = pd.concat([_payout_findings(work, found), return_findings(links)])
    return Classified(
        payouts=work[[*fr.PayoutsOut.names(), *extras]],
        exceptions=_sorted_exceptions(exceptions),
        returns=links[fr.ReturnsOut.names()].astype(fr.ReturnsOut.dtypes()),
    )


def _on_payouts(work: pd.DataFrame, tonight: Tonight) -> tuple[dict[Kind, Found], pd.Series]:
    """Every payout rule of the registry, in the order they run, each carried kind kept while
    there is no answer; and the candidate duplicates column (the late settlements' facts)."""
    found: dict[Kind, Found] = {}
    for kind, rule in PAYOUT_RULES:
        f = rule(work, tonight, found)
        if kind.carried:
            f = Found(f.mask | carried(work, kind.name), f.facts, f.known)
        found[kind] = f
    return found, candidates_of(found)


def _in_cell(work: pd.DataFrame, kind: Kind, found: Found) -> Mask:
    """The payouts whose ``exceptions`` cell names the kind: those it is found on, and for a
    group, every member (payouts.csv filtered on it finds the whole group)."""
    if not kind.grows:
        return found.mask
    members = {str(m) for listed in found.facts.loc[found.mask, "members"] for m in listed}
    return work[_P.TRANSACTION_ID].astype(str).isin(members).to_numpy(dtype=bool)


def _payout_findings(work: pd.DataFrame, found: dict[Kind, Found]) -> pd.DataFrame:
    """The findings on payouts. A fact a kind compares on that its rule does not give is the
    payout's own (state, returned amount), and so are its amount and currency; facts count when
    the payout was answered tonight; a carried kind without an answer is kept (no facts)."""
    fetched = work[W.FETCHED].to_numpy()
    own = pd.DataFrame(
        {
            "state": work[_P.STATE],
            "returned_minor": work[_P.RETURNED_MINOR],
            "amount_minor": work[_P.AMOUNT_MINOR],
            "currency": work[_P.CURRENCY],
        },
        index=work.index,
    )
    ids = work[_P.TRANSACTION_ID]
    parts = [no_findings()]
    for kind, f in found.items():
        if not f.mask.any():  # most kinds find nothing: no rows, so no facts to join either
            continue
        wanted = [*(c for c in PAYOUT_FACTS if c in kind.same_when), "amount_minor", "currency"]
        extra = [c for c in wanted if c not in f.facts.columns]
        facts = f.facts.join(own[extra]) if extra else f.facts
        known = fetched if f.known is None else f.known
        rows = findings(kind, ItemKind.PAYOUT, ids, Found(f.mask, facts), known)
        if kind.carried:
            kept = ~fetched[f.mask]
            rows[Finding.FACTS] = rows[Finding.FACTS].where(~kept, None)
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)


# --- inputs ----------------------------------------------------------------------------------


def _conform_payouts(payouts: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index]:
    """The conformed frame on a fresh RangeIndex, and its ids as an Index (hashed once, reused)."""
    pay = conform(payouts, fr.PayoutsIn, name="payouts")
    pay = pay.reset_index(drop=True)
    ids = pd.Index(pay[_P.TRANSACTION_ID])
    if ids.hasnans or not ids.is_unique:
        dupes = sorted(set(ids[ids.duplicated()].dropna()))[:5]
        raise InputError(f"payouts: transaction_id must be present and unique (repeated: {dupes})")
    return pay, ids


def _conform_observations(observations: pd.DataFrame) -> pd.DataFrame:
    obs = conform(observations, fr.Observations, name="observations")
    ids = obs[Observations.TRANSACTION_ID]
    if ids.isna().any() or not ids.is_unique:
        dupes = sorted(set(ids[ids.duplicated()].dropna()))[:5]
        raise InputError(f"observations: at most one row per transaction_id (repeated: {dupes})")
    bad = set(obs[Observations.STATUS].dropna().unique()) - {s.value for s in ObsStatus}
    if bad or obs[Observations.STATUS].isna().any():
        allowed = ", ".join(s.value for s in ObsStatus)
        raise InputError(f"observations: status must be one of {allowed}, not {sorted(bad)}")
    return obs


def _sorted_exceptions(exceptions: pd.DataFrame) -> pd.DataFrame:
    typed = exceptions.astype(fr.Findings.dtypes())
    order = [Finding.ITEM_KIND, Finding.ITEM_ID, Finding.FLAG]
    return typed.sort_values(order).reset_index(drop=True)
