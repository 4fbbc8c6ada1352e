"""The provider's export matched against the record in one pass. Pure.

Every stored export row (its latest version) meets the record's payouts in one merge, and the
night learns five things from it:

    a payout row, final, agreeing with the record's amount and currency,
    seen after the payout's last answer, about a payout to be asked about  -> decided: not asked;
                                                                               the row is its
                                                                               answer (a "poll
                                                                               saved")
    a payout row the record lacks                                          -> an answer about an
                                                                               id the export named:
                                                                               unrecorded_payout
    a payout row, seen after the last answer, disagreeing with it
    (a final state changed, another amount or currency)                    -> asked about tonight
                                                                               (the answer decides)
    a settled payout, settled on a day the export covers, in no row of it,
    once the lookback has passed                                           -> missing_from_export
    a fee row naming a recorded payout, apart from its fee_amount          -> fee_mismatch (its
                                                                               export side)
    a settled payout due for a return-watch check, every settlement day
    since its last answer through yesterday covered, no returned_funds
    row naming it, no row about it disagreeing                             -> decided: not asked;
                                                                               its latest answer
                                                                               stands again (a
                                                                               "poll saved",
                                                                               :func:`watch_from_export`)

A row decided from the export becomes an answer of the run (:class:`~recon.run_frames.Answers`,
status ``ok``, type 1), so classification is unchanged: the classifier reads it as it reads a
``transaction.get`` answer. It is never stored among the observations (nothing was asked).

"Seen after the last answer": a file stored before the payout was last asked about says nothing
newer than that answer; only a newer look at the provider may replace or question one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import ObsStatus, Outcome, TxState, TxType
from recon.decision import answers_frame
from recon.export_rows import ExportKind
from recon.frames import AS_READ, INT, MONEY, TEXT, TIME, Column, Frame, ItemKind
from recon.money import format_minor
from recon.reconcile.fees import FEE_MISMATCH
from recon.reconcile.finding import Ends, Found, Kind, findings, no_findings
from recon.run_frames import Answers, Named

_FINAL = (int(TxState.SETTLED), int(TxState.FAILED), int(TxState.ABORTED))
NAMED_BY_EXPORT = "export"


class ExportRowsIn(Frame):
    """The latest version of every stored export row of an account (``provider_export_rows``),
    with when its file was stored."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    KIND = Column("kind", TEXT, doc="recon.export_rows.ExportKind")
    STATE = Column("state", INT)
    STATE_RAW = Column("state_raw", AS_READ)
    AMOUNT_MINOR = Column("amount_minor", MONEY)
    CURRENCY = Column("currency", TEXT)
    MERCHANT_REFERENCE = Column("merchant_reference", AS_READ)
    SETTLED = Column("settled", TIME)
    CREATED = Column("created", TIME)
    FEE_AMOUNT_MINOR = Column("fee_amount_minor", MONEY)
    FEE_ID = Column("fee_id", AS_READ)
    RELATED_TRANSACTION_ID = Column("related_transaction_id", AS_READ)
    SEEN_AT = Column("seen_at", TIME, doc="when the file holding this version was stored")


class WatchDue(Answers):
    """The payouts due for a return-watch check: each one's latest stored ok answer (the
    :class:`~recon.run_frames.Answers` columns; NA where it has none), its outcome and when it was
    last answered."""

    OUTCOME = Column("outcome", AS_READ)
    LAST_CHECKED_AT = Column("last_checked_at", TIME)


class ExportRecord(Frame):
    """The record's payouts the export concerns (named by a row, or settled on a covered day), with
    what the latest stored answer about each said (NA: never answered)."""

    TRANSACTION_ID = Column("transaction_id", TEXT)
    AMOUNT_MINOR = Column("amount_minor", MONEY)
    CURRENCY = Column("currency", TEXT)
    OUTCOME = Column("outcome", AS_READ)
    FEE_MINOR = Column("fee_minor", MONEY, doc="the fee the latest answer gave (fee_amount)")
    FEE_ID = Column("fee_id", TEXT, doc="the fee's id the latest answer gave")
    SETTLED_AT = Column("settled_at", TIME)
    LAST_CHECKED_AT = Column("last_checked_at", TIME)
    ANSWER_STATE = Column("answer_state", INT)
    ANSWER_AMOUNT_MINOR = Column("answer_amount_minor", MONEY)
    ANSWER_CURRENCY = Column("answer_currency", AS_READ)


MISSING_FROM_EXPORT = Kind(
    name="missing_from_export",
    ends=Ends.EXPORT,
    items=(ItemKind.PAYOUT,),
    label="Settled, missing from the provider's export",
    action=(
        "Our record and the provider's answers say this payout settled, but the provider's "
        "export of that settlement day does not list it: ask the provider whether the money "
        "left, and pull the day's export again."
    ),
    detail=(
        "settled {{ settled_day }}, {{ amount_minor|money(currency) }}; no export file covering "
        "that day lists it, {{ lookback_days }} day(s) after it"
    ),
    same_when=("settled_day", "amount_minor", "currency"),
    facts=("settled_day", "amount_minor", "currency", "lookback_days"),
)


@dataclass(frozen=True)
class ExportMatch:
    """What the export tells a night.

    ``decided``: answers (:class:`~recon.run_frames.Answers`) made from final rows for payouts
    that are not asked about tonight. ``unrecorded``: answers made from payout rows the record
    lacks, and ``named`` those ids as named by the export (:class:`~recon.run_frames.Named`), so
    the provider's side judges them as it judges an answered id a callback named. ``ask``: ids a
    row disagrees about, to ask tonight. ``findings``: missing_from_export and
    fee_mismatch (:class:`~recon.frames.Findings`). ``seen``: the recorded payouts the
    match read the export about; only for these can its findings end by the facts.
    """

    decided: pd.DataFrame
    unrecorded: pd.DataFrame
    named: pd.DataFrame
    ask: tuple[str, ...]
    findings: pd.DataFrame
    seen: frozenset[str] = frozenset()

    @property
    def saved(self) -> int:
        """The polls the export saved: payouts decided from it."""
        return len(self.decided)

    def answers(self) -> pd.DataFrame:
        """Every answer the export gives the night, to go before the run's own (which win)."""
        return pd.concat([self.decided, self.unrecorded], ignore_index=True).astype(
            Answers.dtypes()
        )


def no_match() -> ExportMatch:
    """Nothing from an export (none stored, or the export is off)."""
    none = answers_frame([])
    return ExportMatch(none, none, fr.empty(Named), (), no_findings())


def match_since(as_of: datetime, *, watch_days: int, lookback_days: int) -> datetime:
    """The earliest settlement time whose export rows a night at ``as_of`` reads: the UTC midnight
    ``watch_days + lookback_days`` days before the night's UTC day.

    ``watch_days``: the longer of the two watch windows (a payout is asked about, so an export row
    can save its poll or question its answer, only inside one of them); the lookback, as a day's
    file may come that many days after it. The missing and fee checks judge the same days: a row
    settled earlier concerns a payout no longer asked about.
    """
    day = as_of.astimezone(UTC).date() - timedelta(days=watch_days + lookback_days)
    return datetime.combine(day, time(), tzinfo=UTC)


def match_export(
    rows: pd.DataFrame,
    record: pd.DataFrame,
    *,
    to_ask: Iterable[str],
    covered: Iterable[date],
    as_of: datetime,
    lookback_days: int,
) -> ExportMatch:
    """Match the export ``rows`` (:class:`ExportRowsIn`) against ``record``
    (:class:`ExportRecord`): ``to_ask`` the ids the night would ask about, ``covered`` the
    settlement days some complete file covers, ``as_of`` the night's clock."""
    payouts = rows[rows[ExportRowsIn.KIND].astype(str) == ExportKind.PAYOUT.value]
    payouts = payouts.drop_duplicates(ExportRowsIn.TRANSACTION_ID, keep="last")
    joined = payouts.merge(
        record, on=ExportRowsIn.TRANSACTION_ID, how="left", suffixes=("", "_record"), indicator=True
    )
    recorded = (joined["_merge"] == "both").to_numpy()
    fresh = _fresh(joined)
    disagrees = recorded & fresh & _disagrees(joined)
    final = joined[ExportRowsIn.STATE].isin(_FINAL).fillna(False).to_numpy(dtype=bool)
    agrees = _same(
        joined[ExportRowsIn.AMOUNT_MINOR], joined[f"{ExportRecord.AMOUNT_MINOR}_record"]
    ) & _same_currency(joined[ExportRowsIn.CURRENCY], joined[f"{ExportRecord.CURRENCY}_record"])
    asked = joined[ExportRowsIn.TRANSACTION_ID].isin(list(to_ask)).to_numpy()
    decided = recorded & fresh & final & agrees & asked & ~disagrees
    ask = joined.loc[disagrees & ~asked, ExportRowsIn.TRANSACTION_ID].astype(str)
    lacked = joined[~recorded]
    return ExportMatch(
        decided=_answers(joined[decided]),
        unrecorded=_answers(lacked),
        named=pd.DataFrame(
            {
                Named.TRANSACTION_ID: lacked[ExportRowsIn.TRANSACTION_ID].to_numpy(),
                Named.NAMED_AT: lacked[ExportRowsIn.SEEN_AT].to_numpy(),
                Named.NAMED_BY: NAMED_BY_EXPORT,
            }
        ).astype(Named.dtypes()),
        ask=tuple(sorted(ask.tolist())),
        findings=pd.concat(
            [
                _missing(payouts, record, covered, as_of=as_of, lookback_days=lookback_days),
                _fee_mismatch(rows, record),
            ],
            ignore_index=True,
        ).astype(fr.Findings.dtypes()),
        seen=frozenset(record[ExportRecord.TRANSACTION_ID].astype(str).tolist()),
    )


def watch_from_export(
    due: pd.DataFrame, rows: pd.DataFrame, *, covered: Iterable[date], as_of: datetime
) -> pd.DataFrame:
    """The return-watch checks of ``due`` (:class:`WatchDue`) the export stands in for, as answers
    (:class:`~recon.run_frames.Answers`): each one's latest answer again, so the night decides it
    as if it had asked and been answered the same.

    A settled payout (outcome and latest answer) qualifies when complete files cover
    (``covered``) every UTC settlement day from its last answer's through the day before
    ``as_of``'s, no ``rows`` (:class:`ExportRowsIn`) of kind returned_funds names it
    (related_transaction_id) or, naming no payout, settled after its last answer, and no payout
    row about it gives another state, amount or currency than its latest answer. Anything else
    keeps the check: a return it would have seen may lie on a day no file shows, or be any
    payout's, or a row says something the answer does not.
    """
    if due.empty:
        return answers_frame([])
    settled = (
        (due[WatchDue.OUTCOME].astype(TEXT) == Outcome.SETTLED.value).fillna(False).to_numpy(bool)
        & (due[WatchDue.STATUS].astype(TEXT) == ObsStatus.OK.value).fillna(False).to_numpy(bool)
        & _same(due[WatchDue.STATE], pd.Series(int(TxState.SETTLED), index=due.index))
    )
    checked = due[WatchDue.LAST_CHECKED_AT].dt.tz_convert("UTC").dt.floor("D")
    yesterday = pd.Timestamp(as_of).tz_convert("UTC").floor("D") - timedelta(days=1)
    days = frozenset(pd.Timestamp(d).tz_localize("UTC") for d in covered)
    first = checked.min()
    gaps = (
        []
        if pd.isna(first)
        else [d for d in pd.date_range(first, yesterday, freq="D") if d not in days]
    )
    # Covered from its last answer on: answered after the latest day no complete file covers.
    since_gap = checked > max(gaps) if gaps else checked.notna()
    covered_since = since_gap.fillna(False).to_numpy(dtype=bool)
    kind = rows[ExportRowsIn.KIND].astype(str)
    returns = rows[kind == ExportKind.RETURNED_FUNDS.value]
    linked = returns[ExportRowsIn.RELATED_TRANSACTION_ID]
    named_returned = due[WatchDue.TRANSACTION_ID].isin(linked.dropna().astype(str)).to_numpy(bool)
    # A return that names no payout may be any one's: it keeps each check answered before it.
    unnamed = returns.loc[linked.isna().to_numpy(bool), ExportRowsIn.SETTLED].max()
    if not pd.isna(unnamed):  # rows are read by their settled time: an unnamed one has one
        before = due[WatchDue.LAST_CHECKED_AT].lt(unnamed).fillna(True).to_numpy(bool)
        named_returned = named_returned | before
    about = rows[kind == ExportKind.PAYOUT.value].merge(
        due[[WatchDue.TRANSACTION_ID, WatchDue.STATE, WatchDue.AMOUNT_MINOR, WatchDue.CURRENCY]],
        on=ExportRowsIn.TRANSACTION_ID,
        suffixes=("", "_answer"),
    )
    disagree = (
        ~_same(about[ExportRowsIn.STATE], about[f"{WatchDue.STATE}_answer"])
        | ~_same(about[ExportRowsIn.AMOUNT_MINOR], about[f"{WatchDue.AMOUNT_MINOR}_answer"])
        | ~_same_currency(about[ExportRowsIn.CURRENCY], about[f"{WatchDue.CURRENCY}_answer"])
    )
    questioned = due[WatchDue.TRANSACTION_ID].isin(
        about.loc[disagree, ExportRowsIn.TRANSACTION_ID].astype(str)
    )
    stands = settled & covered_since & ~named_returned & ~questioned.to_numpy(bool)
    stood: pd.DataFrame = due.loc[stands, Answers.names()].reset_index(drop=True)
    return stood.astype(Answers.dtypes())


def _payout_by(payouts: pd.DataFrame, column: str) -> pd.Series:
    """The payout rows' ids by ``column``'s value, for the values exactly one payout row has."""
    named = payouts.dropna(subset=[column])
    key = named[column].astype(str)
    once = ~key.duplicated(keep=False).to_numpy()
    return pd.Series(
        named.loc[once, ExportRowsIn.TRANSACTION_ID].astype(str).to_numpy(),
        index=key[once].to_numpy(),
    )


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    return a.eq(b).fillna(False).to_numpy(dtype=bool)


def _same_currency(a: pd.Series, b: pd.Series) -> np.ndarray:
    return _same(a.astype(TEXT).str.upper(), b.astype(TEXT).str.upper())


def _fresh(joined: pd.DataFrame) -> np.ndarray:
    """The row's file was stored after the payout's last answer (or it was never answered)."""
    last = joined[ExportRecord.LAST_CHECKED_AT]
    return (last.isna() | (joined[ExportRowsIn.SEEN_AT] > last)).fillna(False).to_numpy(bool)


def _disagrees(joined: pd.DataFrame) -> np.ndarray:
    """The row contradicts the latest answer: a final state it changed, another amount, another
    currency (a row moving an open payout to a final state is news, not a contradiction)."""
    answer = joined[ExportRecord.ANSWER_STATE]
    state = joined[ExportRowsIn.STATE]
    was_final = answer.isin(_FINAL).fillna(False).to_numpy(dtype=bool)
    changed = ~_same(state, answer) & answer.notna().to_numpy()
    amount = joined[ExportRecord.ANSWER_AMOUNT_MINOR]
    currency = joined[ExportRecord.ANSWER_CURRENCY]
    other_amount = amount.notna().to_numpy() & ~_same(joined[ExportRowsIn.AMOUNT_MINOR], amount)
    other_currency = currency.notna().to_numpy() & ~_same_currency(
        joined[ExportRowsIn.CURRENCY], currency
    )
    result: np.ndarray = (was_final & changed) | other_amount | other_currency
    return result


def _answers(rows: pd.DataFrame) -> pd.DataFrame:
    """Export payout rows (joined with the record) as the run's answers: status ok, type 1, the
    row's facts. A row that gives no fee says nothing about it (a file may have no fee column):
    the payout's fee stays as its answers gave it; so does the fee's id, unless the row gives
    another fee or an id of its own."""
    amount = rows[ExportRowsIn.AMOUNT_MINOR]
    given = rows[ExportRowsIn.FEE_AMOUNT_MINOR]
    fee = given.where(given.notna(), rows[ExportRecord.FEE_MINOR])
    given_id = rows[ExportRowsIn.FEE_ID]
    own_id = given_id.notna().to_numpy(bool) | ~_same(fee, rows[ExportRecord.FEE_MINOR])
    fee_id = given_id.where(own_id, rows[f"{ExportRecord.FEE_ID}_record"])
    currency = rows[ExportRowsIn.CURRENCY].astype(TEXT).str.upper()
    text = [format_minor(int(m), str(c)) for m, c in zip(amount, currency, strict=True)]
    none = pd.Series(pd.NA, index=rows.index, dtype=object)
    frame = pd.DataFrame(
        {
            Answers.TRANSACTION_ID: rows[ExportRowsIn.TRANSACTION_ID],
            Answers.STATUS: ObsStatus.OK.value,
            Answers.STATE: rows[ExportRowsIn.STATE],
            Answers.TYPE: int(TxType.PAYOUT),
            Answers.ERROR_CODE: none,
            Answers.AMOUNT_MINOR: amount,
            Answers.AMOUNT: pd.Series(text, index=rows.index, dtype=object),
            Answers.CURRENCY: currency,
            Answers.RELATED_TRANSACTION_ID: rows[ExportRowsIn.RELATED_TRANSACTION_ID],
            Answers.ORIGINAL_TRANSACTION_ID: none,
            Answers.MERCHANT_REFERENCE: rows[ExportRowsIn.MERCHANT_REFERENCE],
            Answers.TO_BANK_ACCOUNT_ID: none,
            Answers.CREATED: rows[ExportRowsIn.CREATED],
            Answers.ETA: none,
            Answers.STATE_RAW: none,
            Answers.FEE_AMOUNT_MINOR: fee,
            Answers.FEE_ID: fee_id,
            Answers.SETTLED: rows[ExportRowsIn.SETTLED],
        },
        index=rows.index,
    )
    return (
        answers_frame([])
        if rows.empty
        else frame[Answers.names()].astype(Answers.dtypes()).reset_index(drop=True)
    )


def _missing(
    payouts: pd.DataFrame,
    record: pd.DataFrame,
    covered: Iterable[date],
    *,
    as_of: datetime,
    lookback_days: int,
) -> pd.DataFrame:
    """Settled payouts (record and answer) on a covered day the lookback has passed, in no row."""
    days = frozenset(covered)
    if not days or record.empty:
        return no_findings()
    day = record[ExportRecord.SETTLED_AT].dt.tz_convert("UTC").dt.floor("D")
    settled = (record[ExportRecord.OUTCOME].astype(TEXT) == Outcome.SETTLED.value).fillna(
        False
    ) & record[ExportRecord.ANSWER_STATE].eq(int(TxState.SETTLED)).fillna(False)
    # A day is past its lookback once its end is lookback_days or more before the night's clock.
    last_day = pd.Timestamp(as_of).tz_convert("UTC").floor("D") - timedelta(days=lookback_days + 1)
    covered_days = [pd.Timestamp(d).tz_localize("UTC") for d in days]
    on_covered = day.isin(covered_days).fillna(False) & (day <= last_day).fillna(False)
    listed = record[ExportRecord.TRANSACTION_ID].isin(payouts[ExportRowsIn.TRANSACTION_ID])
    found = (settled & on_covered & ~listed).to_numpy(dtype=bool)
    facts = pd.DataFrame(
        {
            "settled_day": day.dt.strftime("%Y-%m-%d"),
            "amount_minor": record[ExportRecord.AMOUNT_MINOR],
            "currency": record[ExportRecord.CURRENCY],
            "lookback_days": lookback_days,
        },
        index=record.index,
    )
    return findings(
        MISSING_FROM_EXPORT,
        ItemKind.PAYOUT,
        record[ExportRecord.TRANSACTION_ID],
        Found(found, facts),
    )


def _fee_mismatch(rows: pd.DataFrame, record: pd.DataFrame) -> pd.DataFrame:
    """Recorded payouts whose fee rows charge, together, another fee than the payout's fee_amount
    (or none). A fee row names its payout by related_transaction_id or, lacking one, by being the
    fee_id of a payout row or, lacking that, by a merchant_reference no other payout row has (the
    provider does not say which it writes). The payout's fee_amount
    is its latest look's: its own export row when that was seen after its last answer and gives a
    fee (an answer from before it settled gives no fee yet), else that answer's."""
    kind = rows[ExportRowsIn.KIND].astype(str)
    own = rows[kind == ExportKind.PAYOUT.value].drop_duplicates(
        ExportRowsIn.TRANSACTION_ID, keep="last"
    )
    fees = rows[kind == ExportKind.FEE.value].drop_duplicates(
        ExportRowsIn.TRANSACTION_ID, keep="last"
    )
    # The first way that names a payout, in order: the row's own link, the fee_id, the reference.
    ways = [
        fees[ExportRowsIn.RELATED_TRANSACTION_ID].astype(object),
        fees[ExportRowsIn.TRANSACTION_ID].astype(object).map(_payout_by(own, ExportRowsIn.FEE_ID)),
        fees[ExportRowsIn.MERCHANT_REFERENCE]
        .astype(object)
        .map(_payout_by(own, ExportRowsIn.MERCHANT_REFERENCE)),
    ]
    payout_of = ways[0]
    for way in ways[1:]:
        payout_of = payout_of.where(payout_of.notna(), way)
    named = payout_of.notna().to_numpy()
    if not named.any():
        return no_findings()
    fees = (
        pd.DataFrame(
            {
                "payout": payout_of[named].astype(str).to_numpy(),
                "fee_minor": fees.loc[named, ExportRowsIn.AMOUNT_MINOR].to_numpy(),
                "fee_row": fees.loc[named, ExportRowsIn.TRANSACTION_ID].astype(str).to_numpy(),
            }
        )
        .sort_values(["payout", "fee_row"], kind="stable")
        .groupby("payout", sort=False)
        .agg(export_fee_minor=("fee_minor", "sum"), fee_row_id=("fee_row", ", ".join))
        .reset_index()
    )
    own = own[[ExportRowsIn.TRANSACTION_ID, ExportRowsIn.FEE_AMOUNT_MINOR, ExportRowsIn.SEEN_AT]]
    known = record.merge(own, on=ExportRecord.TRANSACTION_ID, how="left")
    # A newer own row that gives no fee says nothing about it: the answer's fee stands.
    newer = known[ExportRowsIn.FEE_AMOUNT_MINOR].notna().to_numpy() & _fresh(known)
    known[ExportRecord.FEE_MINOR] = known[ExportRecord.FEE_MINOR].mask(
        newer, known[ExportRowsIn.FEE_AMOUNT_MINOR]
    )
    joined = fees.merge(
        known.drop(columns=[ExportRowsIn.FEE_AMOUNT_MINOR, ExportRowsIn.SEEN_AT]),
        left_on="payout",
        right_on=ExportRecord.TRANSACTION_ID,
    )
    if joined.empty:
        return no_findings()
    fee = joined[ExportRecord.FEE_MINOR]
    found = ~_same(joined["export_fee_minor"].astype(MONEY), fee)
    facts = pd.DataFrame(
        {
            "charged_minor": fee,
            "expected_minor": None,
            "entry": None,
            "fee_id": None,
            "export_fee_minor": joined["export_fee_minor"],
            "fee_row_id": joined["fee_row_id"],
            "currency": joined[ExportRecord.CURRENCY],
            "at_stake_minor": (joined["export_fee_minor"] - fee.fillna(0)).abs(),
        },
        index=joined.index,
    )
    return findings(
        FEE_MISMATCH,
        ItemKind.PAYOUT,
        joined[ExportRecord.TRANSACTION_ID],
        Found(found, facts),
    )
