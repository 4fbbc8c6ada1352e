"""Returned-funds transactions: the best evidence for each, the payout it belongs to, its flags.

Steps of :func:`recon.reconcile.classify.classify`; which returns a run knows and asks about is
:mod:`recon.reconcile.return_polls`. A return is confirmed only by the provider's own answers (see
:mod:`recon.reconcile.classify`); a notification is a claim. :func:`best_evidence` is the one rule
for which answer speaks for a return.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import NOT_FETCHED, Flag, ObsStatus, Outcome, TxType
from recon.errors import InputError
from recon.frames import ExceptionCol, ItemKind, ObsCol, PayoutCol, ReturnCol
from recon.money import format_minor, to_minor
from recon.reconcile.outcomes import REFUSED_DETAIL
from recon.reconcile.work import Mask, W, answer_col, codes, mask, shown
from recon.words import money_text, type_names

_P = PayoutCol
_R = ReturnCol
_SETTLED = (Outcome.SETTLED, Outcome.RETURNED)


def collapse_returns(ret: pd.DataFrame) -> pd.DataFrame:
    """One row per return id: notified if any row is, the distinct claims counted and joined."""
    if ret[_R.RETURN_ID].isna().any():
        raise InputError("returns: return_id must be present on every row")
    claims = (
        ret[[_R.RETURN_ID, _R.CLAIMED_ORIGINAL_ID]]
        .dropna()
        .drop_duplicates()
        .sort_values([_R.RETURN_ID, _R.CLAIMED_ORIGINAL_ID])
        .groupby(_R.RETURN_ID, sort=False)[_R.CLAIMED_ORIGINAL_ID]
        .agg([";".join, "size"])
        .set_axis([W.CLAIMS, W.N_CLAIMS], axis=1)
    )
    grouped = ret.groupby(_R.RETURN_ID, sort=True)
    first = grouped.first().drop(columns=[_R.NOTIFIED])
    out = (
        first.assign(**fr.columns({_R.NOTIFIED: grouped[_R.NOTIFIED].any()}))
        .join(claims)
        .reset_index()
    )
    single = mask(out[W.N_CLAIMS].eq(1))
    return out.assign(
        **fr.columns(
            {
                W.N_CLAIMS: out[W.N_CLAIMS].fillna(0).astype("int64"),
                _R.CLAIMED_ORIGINAL_ID: out[W.CLAIMS].where(single).astype(fr.TEXT),
            }
        )
    ).astype(dict(fr.RETURNS_IN))


def link_returns(
    work: pd.DataFrame, obs: pd.DataFrame, ret: pd.DataFrame, ids: pd.Index
) -> pd.DataFrame:
    """Every known return with the payout the provider confirms it for, and its flags."""
    frame = ret.pipe(best_evidence, obs).pipe(_filled)
    status = frame[_R.OBS_STATUS]
    is13 = mask(status.eq(ObsStatus.OK) & frame[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS))
    own = frame[_R.OBS_RELATED_TRANSACTION_ID].fillna(frame[_R.OBS_ORIGINAL_TRANSACTION_ID])
    frame = frame.assign(**fr.columns({W.IS13: is13, W.OWN_LINK: own.where(is13)}))
    # The provider's latest word is a 404: an earlier confirmation no longer holds, but the payout
    # it named stays the return's original (what return_changed is about).
    former = frame[_R.CONFIRMED_ORIGINAL_ID]
    confirmed_for = (
        frame[W.OWN_LINK]
        .fillna(_payout_side_links(work, frame))
        .fillna(former.where(~mask(status.eq(ObsStatus.NOT_FOUND))))
    )
    claimed = frame[_R.CLAIMED_ORIGINAL_ID]
    original = confirmed_for.fillna(former).fillna(claimed)
    currency = frame[_R.OBS_CURRENCY].str.upper()
    # The payout each confirmed return belongs to: its currency, and whether it is settled.
    at = ids.get_indexer(pd.Index(confirmed_for))
    known = at >= 0
    payout_currency = pd.Series(pd.NA, index=frame.index, dtype=fr.TEXT)
    payout_currency[known] = work[_P.CURRENCY].str.upper().to_numpy()[at[known]]
    settled = np.zeros(len(frame), dtype=bool)
    outcome = work[_P.OUTCOME].cat.codes.to_numpy()
    settled[known] = np.isin(outcome[at[known]], codes(_SETTLED))
    return frame.assign(
        **fr.columns(
            {
                W.CONFIRMED_FOR: confirmed_for,
                _R.CONFIRMED: confirmed_for.notna().to_numpy(),
                _R.ORIGINAL_ID: original,
                _R.MATCHED: ids.get_indexer(pd.Index(original)) >= 0,
                _R.AMOUNT_MINOR: frame[_R.OBS_AMOUNT_MINOR],
                _R.CURRENCY: currency,
                W.PAYOUT_CURRENCY: payout_currency,
                W.PAYOUT_SETTLED: settled,
                W.SAME_CURRENCY: mask(currency.eq(payout_currency)),
            }
        )
    ).sort_values(_R.RETURN_ID, ignore_index=True)


EVIDENCE: list[str] = [
    _R.OBS_STATUS,
    _R.OBS_TYPE,
    _R.OBS_RELATED_TRANSACTION_ID,
    _R.OBS_ORIGINAL_TRANSACTION_ID,
    _R.OBS_AMOUNT_MINOR,
    _R.OBS_CURRENCY,
]


def best_evidence(ret: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """The one rule for which answer speaks for a return, and type-13 ids seen only this run.

    ``ret`` carries the best earlier evidence (``obs_*``: the latest ``ok`` answer of another
    run, or its ``not_found`` one for a return once confirmed, if any); ``obs`` holds this run's
    answers. This run's ``ok``/``not_found`` answer wins (the latest answer speaks: a confirmed
    return the provider now answers smaller, or not at all, is what the provider says now); else
    the earlier one stays; else this run's ``error`` (or ``refused``, ``wrong_id``) shows as such.
    Applying it twice gives the same frame.
    """
    now = obs.rename(
        columns={ObsCol.TRANSACTION_ID: _R.RETURN_ID}
        | {c: f"obs_{c}" for c in obs.columns if c != ObsCol.TRANSACTION_ID}
    )
    seen13 = now[now[_R.OBS_STATUS].eq(ObsStatus.OK) & now[_R.OBS_TYPE].eq(TxType.RETURNED_FUNDS)]
    new_ids = seen13.loc[~seen13[_R.RETURN_ID].isin(ret[_R.RETURN_ID]), [_R.RETURN_ID]]
    frame = pd.concat([ret, new_ids], ignore_index=True).merge(
        now[[_R.RETURN_ID, *EVIDENCE]], how="left", on=_R.RETURN_ID, suffixes=("", "_now")
    )
    now_status = frame[f"{_R.OBS_STATUS}_now"]
    use_now = mask(now_status.isin([ObsStatus.OK, ObsStatus.NOT_FOUND]))
    # An answer about another id is no evidence either, but says what happened: its status and
    # the id it was about (related_transaction_id) show, as a fetch error's status does.
    failed_now = mask(now_status.isin([*NOT_FETCHED, ObsStatus.WRONG_ID])) & ~mask(
        frame[_R.OBS_STATUS].isin([ObsStatus.OK, ObsStatus.NOT_FOUND])
    )
    wrong_now = failed_now & mask(now_status.eq(ObsStatus.WRONG_ID))
    chosen: dict[str, pd.Series] = {c: frame[f"{c}_now"].where(use_now, frame[c]) for c in EVIDENCE}
    chosen[_R.OBS_STATUS] = chosen[_R.OBS_STATUS].mask(failed_now, now_status)
    related = _R.OBS_RELATED_TRANSACTION_ID
    chosen[related] = chosen[related].mask(wrong_now, frame[f"{related}_now"])
    return frame.assign(**fr.columns(chosen)).drop(columns=[f"{c}_now" for c in EVIDENCE])


def _filled(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows added for this run's type-13 ids are not notified and have no claims."""
    return frame.assign(
        **fr.columns(
            {
                _R.NOTIFIED: mask(frame[_R.NOTIFIED]),
                W.N_CLAIMS: frame[W.N_CLAIMS].fillna(0).astype("int64"),
            }
        )
    )


def _payout_side_links(work: pd.DataFrame, frame: pd.DataFrame) -> pd.Series:
    """The payout naming a type-13 return in its own answer, when exactly one does so."""
    related = answer_col(ObsCol.RELATED_TRANSACTION_ID)
    named = work.loc[work[W.OK] & work[related].notna(), [_P.TRANSACTION_ID, related]]
    pairs = named.merge(
        frame.loc[frame[W.IS13], [_R.RETURN_ID, W.OWN_LINK]],
        left_on=related,
        right_on=_R.RETURN_ID,
    )
    agrees = pairs[W.OWN_LINK].isna() | pairs[W.OWN_LINK].eq(pairs[_P.TRANSACTION_ID])
    pairs = pairs[mask(agrees)].drop_duplicates([_R.RETURN_ID, _P.TRANSACTION_ID])
    unique = pairs.drop_duplicates(_R.RETURN_ID, keep=False)
    link = frame[[_R.RETURN_ID]].merge(
        unique[[_R.RETURN_ID, _P.TRANSACTION_ID]], how="left", on=_R.RETURN_ID
    )
    return link[_P.TRANSACTION_ID].astype(fr.TEXT).set_axis(frame.index)


def return_exceptions(links: pd.DataFrame) -> pd.DataFrame:
    status, claimed = links[_R.OBS_STATUS], links[_R.CLAIMED_ORIGINAL_ID]
    confirmed_for, conflict = links[W.CONFIRMED_FOR], links[W.N_CLAIMS].to_numpy() > 1
    confirmed = links[_R.CONFIRMED].to_numpy()
    fetch_failed = ~confirmed & mask(status.isin(NOT_FETCHED))
    wrong_id = ~confirmed & mask(status.eq(ObsStatus.WRONG_ID))
    verified = confirmed & ~conflict & (mask(claimed.isna()) | mask(claimed.eq(confirmed_for)))
    claims = "notifications name different payouts: " + shown(links[W.CLAIMS])
    why_unverified = np.select(
        [
            conflict,
            mask(status.eq(ObsStatus.NOT_FOUND)),
            mask(status.eq(ObsStatus.OK)) & ~links[W.IS13].to_numpy(),
            confirmed,
            mask(status.isna()),
        ],
        [
            claims,
            "the provider does not know this transaction id",
            "the provider says it is a "
            + shown(type_names(links[_R.OBS_TYPE]))
            + ", not returned funds",
            "the provider links it to " + shown(confirmed_for) + ", not " + shown(claimed),
            "not fetched from the provider yet",
        ],
        default="the provider names no payout for it",
    )
    why_orphan = np.select(
        [conflict, mask(links[_R.ORIGINAL_ID].isna())],
        [claims, "no original payout is named"],
        default="original payout " + shown(links[_R.ORIGINAL_ID]) + " is not in the store",
    )
    belongs = confirmed & ~links[W.PAYOUT_CURRENCY].isna().to_numpy()
    amount = shown(money_text(links[_R.AMOUNT_MINOR], links[_R.CURRENCY]))
    claimed_differs, claimed = _claimed_amount_differs(links)
    changed, now = _changed_since_confirmed(links)
    before = (
        "confirmed "
        + shown(money_text(links[_R.CONFIRMED_AMOUNT_MINOR], links[_R.CONFIRMED_CURRENCY]))
        + " on "
        + links[_R.CONFIRMED_AT].dt.strftime("%Y-%m-%d").astype(fr.TEXT).fillna("?")
    )
    found = {
        Flag.RETURN_WITHOUT_PAYOUT: (~links[_R.MATCHED].to_numpy(), why_orphan),
        Flag.RETURN_UNVERIFIED: (
            links[_R.NOTIFIED].to_numpy() & ~verified & ~fetch_failed & ~wrong_id & ~changed,
            why_unverified,
        ),
        Flag.WRONG_TRANSACTION: (
            wrong_id,
            "the provider answered about " + shown(links[_R.OBS_RELATED_TRANSACTION_ID]),
        ),
        Flag.FETCH_FAILED: (
            fetch_failed,
            np.where(
                mask(status.eq(ObsStatus.REFUSED)), REFUSED_DETAIL, "could not be fetched this run"
            ),
        ),
        Flag.RETURN_CURRENCY_MISMATCH: (
            belongs & ~links[W.SAME_CURRENCY].to_numpy(),
            amount
            + " for payout "
            + shown(confirmed_for)
            + " in "
            + shown(links[W.PAYOUT_CURRENCY])
            + "; not counted as returned",
        ),
        Flag.RETURN_ON_UNSETTLED: (
            belongs & ~links[W.PAYOUT_SETTLED].to_numpy(),
            "confirmed for payout " + shown(confirmed_for) + ", which is not settled",
        ),
        Flag.RETURN_AMOUNT_MISMATCH: (
            claimed_differs,
            "notification " + claimed + ", provider " + amount,
        ),
        Flag.RETURN_CHANGED: (changed, before + ", now " + now),
    }
    return pd.concat(
        [
            pd.DataFrame(
                {
                    ExceptionCol.ITEM_ID: links.loc[mask, _R.RETURN_ID],
                    ExceptionCol.ITEM_KIND: ItemKind.RETURN.value,
                    ExceptionCol.FLAG: flag.value,
                    ExceptionCol.DETAIL: np.asarray(detail, dtype=object)[mask],
                }
            )
            for flag, (mask, detail) in found.items()
        ]
    )


def _changed_since_confirmed(links: pd.DataFrame) -> tuple[Mask, pd.Series]:
    """Where the provider's latest answer about a return a run confirmed differs from what the
    first confirmation saw (gone, not type 13, another amount or currency), and what it says now.

    The comparison is with the first confirmation, not the previous answer, so the finding stands
    (with the same facts) while the answer stays, and its facts change when the answer changes.
    """
    status = links[_R.OBS_STATUS]
    was = links[_R.CONFIRMED_AT].notna().to_numpy()
    gone = mask(status.eq(ObsStatus.NOT_FOUND))
    ok = mask(status.eq(ObsStatus.OK))
    not13 = ok & ~links[W.IS13].to_numpy()
    other = ok & ~(
        mask(links[_R.AMOUNT_MINOR].eq(links[_R.CONFIRMED_AMOUNT_MINOR]))
        & mask(links[_R.CURRENCY].eq(links[_R.CONFIRMED_CURRENCY].str.upper()))
    )
    now = np.select(
        [gone, not13],
        ["404 not found", shown(type_names(links[_R.OBS_TYPE])) + ", not returned funds"],
        default=shown(money_text(links[_R.AMOUNT_MINOR], links[_R.CURRENCY])),
    )
    return was & (gone | not13 | other), pd.Series(now, index=links.index, dtype=fr.TEXT)


def _claimed_amount_differs(links: pd.DataFrame) -> tuple[Mask, pd.Series]:
    """Where a notification's amount is not the provider's (in the provider's currency).

    Returns are few, so each claimed amount is converted on its own (exactly: Decimal, never
    float); one that does not fit the currency's minor units differs.
    """
    said: list[str] = []  # the notification's amount as people read it: 14.02 SEK
    differs = np.zeros(len(links), dtype=bool)
    rows = zip(links[_R.CLAIMED_AMOUNT], links[_R.CURRENCY], links[_R.AMOUNT_MINOR], strict=True)
    for i, (claimed, currency, provider) in enumerate(rows):
        if pd.isna(claimed) or pd.isna(currency) or pd.isna(provider):
            said.append("?")
            continue
        try:
            value: int | None = to_minor(Decimal(str(claimed)), str(currency))
        except (ArithmeticError, ValueError):
            value = None
        code = str(currency).upper()
        said.append(f"{claimed} {code}" if value is None else f"{format_minor(value, code)} {code}")
        differs[i] = value != int(provider)
    return differs, pd.Series(said, index=links.index, dtype=fr.TEXT)
