"""The export matched against the record, at the core's entry, with literal data."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd

from recon.constants import ObsStatus
from recon.reconcile.export_match import (
    MISSING_FROM_EXPORT,
    NAMED_BY_EXPORT,
    ExportRecord,
    ExportRowsIn,
    WatchDue,
    match_export,
    match_since,
    watch_from_export,
)
from recon.reconcile.fees import FEE_MISMATCH
from recon.run_frames import Answers, Named
from tests.unit.classify_support import payout
from tests.unit.decide_support import AS_OF as DECIDED
from tests.unit.decide_support import DAY, cases, decide_at, inputs, next_night, ok
from tests.unit.decide_support import findings as decide_findings
from tests.unit.decide_support import row as decision_row
from tests.unit.decide_support import statuses as decision_statuses
from tests.unit.test_decide_fees import HUNDRED, PRICED, settled

AS_OF = datetime(2026, 1, 10, 2, 0, tzinfo=UTC)
SEEN = pd.Timestamp("2026-01-10T01:00:00Z")  # tonight's pull
BEFORE = pd.Timestamp("2026-01-09T02:00:00Z")  # the last night's answers
SETTLED = pd.Timestamp("2026-01-05T12:00:00Z")


def rows(*given: dict[str, Any]) -> pd.DataFrame:
    """Export rows: a settled payout of 10.00 EUR seen tonight, with what ``given`` changes."""
    base = {
        "transaction_id": "T1", "kind": "payout", "state": 6, "state_raw": "6",
        "amount_minor": 1000, "currency": "EUR", "merchant_reference": "R1",
        "settled": SETTLED, "created": SETTLED, "fee_amount_minor": 30, "fee_id": "F1",
        "related_transaction_id": None, "seen_at": SEEN,
    }  # fmt: skip
    frame = pd.DataFrame([{**base, **g} for g in given], columns=ExportRowsIn.names())
    return frame.astype(ExportRowsIn.dtypes())


def record(*given: dict[str, Any]) -> pd.DataFrame:
    """Recorded payouts: 10.00 EUR, pending when last asked the night before, with ``given``."""
    base = {
        "transaction_id": "T1", "amount_minor": 1000, "currency": "EUR", "outcome": "pending",
        "fee_minor": None, "settled_at": None, "last_checked_at": BEFORE, "answer_state": 1,
        "answer_amount_minor": 1000, "answer_currency": "EUR",
    }  # fmt: skip
    frame = pd.DataFrame([{**base, **g} for g in given], columns=ExportRecord.names())
    return frame.astype(ExportRecord.dtypes())


def match(
    export: pd.DataFrame,
    payouts: pd.DataFrame,
    *,
    to_ask: tuple[str, ...] = ("T1",),
    covered: tuple[date, ...] = (),
    lookback_days: int = 3,
) -> Any:
    return match_export(
        export, payouts, to_ask=to_ask, covered=covered, as_of=AS_OF, lookback_days=lookback_days
    )


def test_a_final_agreeing_row_decides_the_payout_without_asking() -> None:
    """The row becomes the run's ok answer about the payout (type 1, its state and amount), and
    counts as a poll saved; nothing is asked, nothing found."""
    for state in (6, 3, 2):
        got = match(rows({"state": state}), record({}))
        assert got.saved == 1
        answer = got.decided.iloc[0]
        assert answer[Answers.TRANSACTION_ID] == "T1"
        assert answer[Answers.STATUS] == ObsStatus.OK.value
        assert (answer[Answers.STATE], answer[Answers.TYPE]) == (state, 1)
        assert (answer[Answers.AMOUNT_MINOR], answer[Answers.AMOUNT]) == (1000, "10.00")
        assert answer[Answers.CURRENCY] == "EUR"
        assert answer[Answers.FEE_AMOUNT_MINOR] == 30
        assert got.ask == ()
        assert got.findings.empty
        assert got.unrecorded.empty


def test_a_row_of_another_amount_or_currency_is_not_decided() -> None:
    """The record's amount or currency differs: the payout is asked about as it would be."""
    assert match(rows({"amount_minor": 999}), record({"answer_amount_minor": None})).saved == 0
    assert match(rows({"currency": "SEK"}), record({"answer_currency": None})).saved == 0


def test_a_row_in_a_state_that_is_not_final_is_not_decided() -> None:
    """Pending (1) or completed (4) in the export: the payout is still asked about."""
    assert match(rows({"state": 1}), record({})).saved == 0
    assert match(rows({"state": 4}), record({})).saved == 0


def test_a_row_about_a_payout_not_to_ask_about_is_no_poll_saved() -> None:
    """Only a payout the night would ask about counts: nothing was to be saved otherwise."""
    assert match(rows({}), record({}), to_ask=()).saved == 0


def test_a_row_older_than_the_last_answer_decides_nothing() -> None:
    """A file stored before the payout was last asked about is no newer look at it."""
    old = rows({"seen_at": pd.Timestamp("2026-01-08T00:00:00Z")})
    assert match(old, record({})).saved == 0


def test_a_payout_row_the_record_lacks_is_an_answered_id_the_export_named() -> None:
    """The row is an ok type-1 answer about an id named by the export, for the provider's side
    to judge as unrecorded_payout; nothing is decided or asked."""
    got = match(rows({"transaction_id": "X9"}), record({}))
    assert got.saved == 0
    assert got.unrecorded[Answers.TRANSACTION_ID].tolist() == ["X9"]
    assert got.unrecorded[Answers.TYPE].tolist() == [1]
    assert got.unrecorded[Answers.MERCHANT_REFERENCE].tolist() == ["R1"]
    assert got.named[Named.TRANSACTION_ID].tolist() == ["X9"]
    assert got.named[Named.NAMED_BY].tolist() == [NAMED_BY_EXPORT]
    assert got.named[Named.NAMED_AT].tolist() == [SEEN]


def test_a_row_disagreeing_with_the_latest_answer_is_asked_about() -> None:
    """A final answer the row changes (settled, now failed), another amount or currency than the
    answer's: asked about tonight, never decided from the row."""
    settled = {"outcome": "settled", "answer_state": 6}
    for export, rec in [
        ({"state": 3}, settled),
        ({"amount_minor": 1100}, {"answer_amount_minor": 1000, **settled}),
        ({"currency": "SEK"}, {**settled}),
    ]:
        got = match(rows(export), record(rec), to_ask=())
        assert got.ask == ("T1",), (export, rec)
        assert got.saved == 0


def test_a_disagreeing_row_about_an_id_already_asked_is_not_asked_twice() -> None:
    """An id the night asks about anyway is neither decided nor added to the ask."""
    got = match(rows({"state": 3}), record({"outcome": "settled", "answer_state": 6}))
    assert (got.ask, got.saved) == ((), 0)


def test_an_open_payout_the_row_moves_to_final_is_no_disagreement() -> None:
    """Pending when last answered, settled in the export: news, decided, not asked."""
    got = match(rows({}), record({"answer_state": 1}))
    assert (got.ask, got.saved) == ((), 1)


def test_a_disagreeing_row_older_than_the_last_answer_is_not_asked_about() -> None:
    """The answer that came after the file already decided."""
    old = rows({"state": 3, "seen_at": pd.Timestamp("2026-01-08T00:00:00Z")})
    assert match(old, record({"answer_state": 6}), to_ask=()).ask == ()


def _settled(tid: str, day: str) -> dict[str, Any]:
    return {
        "transaction_id": tid,
        "outcome": "settled",
        "answer_state": 6,
        "settled_at": pd.Timestamp(f"{day}T12:00:00Z"),
        "last_checked_at": pd.Timestamp(f"{day}T13:00:00Z"),
    }


def test_a_settled_payout_absent_from_the_covering_files_is_missing_after_the_lookback() -> None:
    """Settled on 5 January, a covered day, in no row: missing_from_export on 10 January with a
    lookback of 3 days; a payout the export lists is not."""
    got = match(
        rows({"transaction_id": "T1"}),
        record(_settled("T1", "2026-01-05"), _settled("T2", "2026-01-05")),
        to_ask=(),
        covered=(date(2026, 1, 5),),
    )
    missing = got.findings[got.findings["flag"] == MISSING_FROM_EXPORT.name]
    assert missing["item_id"].tolist() == ["T2"]
    assert missing["facts"].iloc[0] == {
        "settled_day": "2026-01-05",
        "amount_minor": 1000,
        "currency": "EUR",
        "lookback_days": 3,
    }


def test_a_settled_payout_within_the_lookback_is_not_yet_missing() -> None:
    """Settled on 7 January: its row may still come (a late file) until the lookback passes."""
    got = match(
        rows({"transaction_id": "OTHER"}),
        record(_settled("T2", "2026-01-07")),
        to_ask=(),
        covered=(date(2026, 1, 7),),
    )
    assert got.findings.empty


def test_a_settled_payout_on_a_day_no_file_covers_is_not_missing() -> None:
    """No complete file covers its day: the export says nothing about it."""
    got = match(
        rows({"transaction_id": "OTHER"}),
        record(_settled("T2", "2026-01-05")),
        to_ask=(),
        covered=(date(2026, 1, 4),),
    )
    assert got.findings.empty


def test_a_fee_row_apart_from_the_payouts_fee_is_a_finding() -> None:
    """The fee row F1 names T1 and charges 0.35 where T1's answer gave 0.30."""
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 35,
           "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    got = match(rows(fee), record({"fee_minor": 30, "outcome": "settled", "answer_state": 6}))
    found = got.findings[got.findings["flag"] == FEE_MISMATCH.name]
    assert found["item_id"].tolist() == ["T1"]
    assert found["facts"].iloc[0] == {
        "charged_minor": 30,
        "expected_minor": None,
        "entry": None,
        "fee_id": None,
        "export_fee_minor": 35,
        "fee_row_id": "F1",
        "currency": "EUR",
        "at_stake_minor": 5,
    }


def test_a_fee_row_equal_to_the_payouts_fee_is_no_finding() -> None:
    """Same fee in the row and in the answer: nothing found."""
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 30,
           "related_transaction_id": "T1"}  # fmt: skip
    got = match(rows(fee), record({"fee_minor": 30}))
    assert got.findings.empty


def test_a_fee_row_agreeing_with_its_payouts_newer_row_is_no_finding() -> None:
    """T1 was last answered pending (no fee yet); tonight's export has it settled with a fee of
    0.30 and a fee row of 0.30: the payout's fee is its newer row's, and nothing is found."""
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 30,
           "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    got = match(rows({}, fee), record({}))
    assert got.findings.empty


def test_a_fee_row_apart_from_its_payouts_newer_row_is_a_finding() -> None:
    """T1 was last answered pending; tonight's export settles it with a fee of 0.30 and charges a
    fee row of 0.35: found, against the payout row's 0.30."""
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 35,
           "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    got = match(rows({}, fee), record({}))
    found = got.findings[got.findings["flag"] == FEE_MISMATCH.name]
    assert found["item_id"].tolist() == ["T1"]
    assert found["facts"].iloc[0]["charged_minor"] == 30


def test_rows_of_other_kinds_decide_nothing() -> None:
    """Top-ups, withdrawals and returned funds are kept for the balance, never matched here."""
    for kind in ("top_up", "merchant_withdrawal", "returned_funds", "other"):
        got = match(rows({"kind": kind}), record({}))
        assert (got.saved, got.ask, len(got.unrecorded)) == (0, (), 0)
        assert got.findings.empty


def test_an_empty_export_matches_nothing() -> None:
    """No rows: nothing decided, named, asked or found."""
    got = match(rows({}).iloc[:0], record({}), covered=(date(2026, 1, 5),))
    assert (got.saved, got.ask, len(got.unrecorded)) == (0, (), 0)
    assert got.findings.empty


def test_decide_classifies_a_payout_on_the_exports_answer() -> None:
    """At decide's entry, the row's answer settles the payout with no finding, as a
    ``transaction.get`` answer saying the same would."""
    got = match(rows({"merchant_reference": "m-T1"}), record({}))
    run = inputs(payout("T1"), poll=["T1"])
    run = replace(run, answers=got.answers())
    decision = decide_at(run)
    assert decision_row(decision, "T1")["outcome"] == "settled"
    assert decision.exceptions.empty


def test_decide_reports_the_exports_findings_in_words() -> None:
    """missing_from_export and the export's fee_mismatch reach the report as new findings, their
    details rendered from their facts."""
    missed = match(
        rows({"transaction_id": "OTHER"}),
        record(_settled("T2", "2026-01-05")),
        to_ask=(),
        covered=(date(2026, 1, 5),),
    ).findings
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 35,
           "related_transaction_id": "T1"}  # fmt: skip
    charged = match(rows(fee), record({"fee_minor": 30})).findings
    run = replace(inputs(), export_findings=pd.concat([missed, charged], ignore_index=True))
    found = decide_findings(decide_at(run))
    assert found[("T2", MISSING_FROM_EXPORT.name)]["status"] == "new"
    assert found[("T2", MISSING_FROM_EXPORT.name)]["detail"] == (
        "settled 2026-01-05, 10.00 EUR; no export file covering that day lists it, "
        "3 day(s) after it"
    )
    assert found[("T1", FEE_MISMATCH.name)]["detail"] == (
        "the export's fee row F1 charges 0.35 EUR; the payout's answer gives a fee of 0.30 EUR"
    )


def test_the_match_reads_from_the_longer_watch_and_the_lookback_before_the_night() -> None:
    """The bound is the UTC midnight the longer watch window plus the lookback days before the
    night's UTC day, whatever the night's hour or zone."""
    night = datetime(2026, 1, 10, 23, 30, tzinfo=ZoneInfo("America/New_York"))  # 11th in UTC
    since = match_since(night, watch_days=90, lookback_days=3)
    assert since == datetime(2025, 10, 10, tzinfo=UTC)  # 93 days before 2026-01-11
    assert match_since(AS_OF, watch_days=0, lookback_days=0) == datetime(2026, 1, 10, tzinfo=UTC)


LAST_ANSWER = pd.Timestamp("2026-01-04T02:00:00Z")  # the last return-watch answer, six days ago
SINCE_LAST = tuple(date(2026, 1, d) for d in range(4, 10))  # 4th through the 9th, yesterday


def due(*given: dict[str, Any]) -> pd.DataFrame:
    """Payouts due for a return-watch check: settled 10.00 EUR, last answered settled six nights
    ago, with ``given``."""
    base = {
        "transaction_id": "T1", "status": "ok", "state": 6, "type": 1, "error_code": None,
        "amount_minor": 1000, "amount": "10.00", "currency": "EUR",
        "related_transaction_id": None, "original_transaction_id": None,
        "merchant_reference": "m-T1", "to_bank_account_id": "b-T1", "created": SETTLED, "eta": None,
        "state_raw": None, "fee_amount_minor": 30, "fee_id": "F1", "settled": SETTLED,
        "outcome": "settled", "last_checked_at": LAST_ANSWER,
    }  # fmt: skip
    frame = pd.DataFrame([{**base, **g} for g in given], columns=WatchDue.names())
    return frame.astype(WatchDue.dtypes())


def stood_in(
    watched: pd.DataFrame, export: pd.DataFrame, covered: tuple[date, ...] = SINCE_LAST
) -> list[str]:
    got = watch_from_export(watched, export, covered=covered, as_of=AS_OF)
    return sorted(got[Answers.TRANSACTION_ID].astype(str))


def test_covered_days_since_the_last_answer_stand_in_for_the_return_watch() -> None:
    """Every day from the last answer's through yesterday covered, no row about it: the latest
    answer stands again, unchanged, as an ok answer."""
    got = watch_from_export(due({}), rows({"transaction_id": "OTHER"}), covered=SINCE_LAST,
                            as_of=AS_OF)  # fmt: skip
    expected = due({})[Answers.names()].astype(Answers.dtypes())
    pd.testing.assert_frame_equal(got, expected)


def test_a_day_since_the_last_answer_not_covered_keeps_the_check() -> None:
    """The day of the last answer itself, or any later day through yesterday, uncovered: asked."""
    assert stood_in(due({}), rows(), covered=SINCE_LAST[1:]) == []
    assert stood_in(due({}), rows(), covered=SINCE_LAST[:-1]) == []
    assert stood_in(due({}), rows(), covered=()) == []


def test_an_uncovered_day_before_the_last_answer_does_not_matter() -> None:
    """A gap before one payout's last answer keeps only the payout answered before it."""
    later = {"transaction_id": "T2", "last_checked_at": pd.Timestamp("2026-01-06T02:00:00Z")}
    covered = tuple(d for d in SINCE_LAST if d != date(2026, 1, 5))
    assert stood_in(due({}, later), rows({"transaction_id": "OTHER"}), covered) == ["T2"]


def test_a_returned_funds_row_naming_the_payout_keeps_the_check() -> None:
    """A type-13 row whose related_transaction_id is the payout: asked (the return is news)."""
    returned = {"transaction_id": "R-9", "kind": "returned_funds", "related_transaction_id": "T1"}
    assert stood_in(due({}), rows(returned)) == []
    elsewhere = {**returned, "related_transaction_id": "T2"}
    assert stood_in(due({}), rows(elsewhere)) == ["T1"]


def test_a_payout_row_disagreeing_with_the_latest_answer_keeps_the_check() -> None:
    """A row about it in another state, amount or currency: asked; an agreeing row is none."""
    assert stood_in(due({}), rows({"state": 3})) == []
    assert stood_in(due({}), rows({"amount_minor": 999})) == []
    assert stood_in(due({}), rows({"currency": "SEK"})) == []
    assert stood_in(due({}), rows({"currency": "eur"})) == ["T1"]


def test_only_a_settled_payout_with_an_answer_is_stood_in_for() -> None:
    """A returned outcome, or no stored answer (and no last check): asked."""
    assert stood_in(due({"outcome": "returned"}), rows({"transaction_id": "OTHER"})) == []
    never = {"status": None, "state": None, "last_checked_at": None}
    assert stood_in(due(never), rows({"transaction_id": "OTHER"})) == []


def test_decide_moves_the_watch_on_as_if_the_payout_had_been_answered() -> None:
    """At decide's entry, the stood-in answer keeps the payout settled with no finding."""
    got = watch_from_export(due({}), rows({"transaction_id": "OTHER"}), covered=SINCE_LAST,
                            as_of=AS_OF)  # fmt: skip
    run = replace(inputs(payout("T1"), poll=["T1"]), answers=got)
    decision = decide_at(run)
    assert decision_row(decision, "T1")["outcome"] == "settled"
    assert decision.exceptions.empty


def test_the_price_and_the_export_on_one_payouts_fee_are_one_fee_mismatch() -> None:
    """p1 is charged 1.50 where the price agrees 0.75, and the export's fee row F9 charges 2.00:
    one fee_mismatch, its facts and its sentence holding both sides."""
    fee = {"transaction_id": "F9", "kind": "fee", "amount_minor": 200,
           "related_transaction_id": "p1"}  # fmt: skip
    exported = match(rows(fee), record({"transaction_id": "p1", "fee_minor": 150})).findings
    run = inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)])
    decision = decide_at(replace(run, export_findings=exported), params=PRICED)
    assert list(decision_statuses(decision)) == [("p1", FEE_MISMATCH.name)]
    found = decide_findings(decision)["p1", FEE_MISMATCH.name]
    wanted = {"charged_minor": 150, "expected_minor": 75, "export_fee_minor": 200,
              "fee_row_id": "F9", "fee_id": "F-p1"}  # fmt: skip
    assert {k: found["facts"][k] for k in wanted} == wanted
    assert found["detail"] == (
        "fee charged 1.50 EUR, agreed 0.75 EUR (price from 2024-03-01 EUR all accounts);"
        " overcharged by 0.75 EUR; the export's fee row F9 charges 2.00 EUR; the payout's answer"
        " gives a fee of 1.50 EUR"
    )


def test_a_fee_row_without_its_payouts_id_is_matched_by_the_payouts_fee_id() -> None:
    """The fee row F1 names no payout, but T1's own row gives fee_id F1: F1 is T1's fee, and its
    0.35 against T1's 0.30 is found."""
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 35,
           "related_transaction_id": None, "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    got = match(rows({}, fee), record({}))
    found = got.findings[got.findings["flag"] == FEE_MISMATCH.name]
    assert found["item_id"].tolist() == ["T1"]
    assert (found["facts"].iloc[0]["fee_row_id"], found["facts"].iloc[0]["charged_minor"]) == (
        "F1",
        30,
    )


def test_the_fee_rows_naming_one_payout_are_compared_together() -> None:
    """A fee of 0.20 and a second of 0.10 make T1's 0.30: nothing found; 0.20 and 0.15 make 0.35:
    one finding, both rows named, in words."""

    def fees(second: int) -> pd.DataFrame:
        return rows(
            {"transaction_id": "F2", "kind": "fee", "amount_minor": second,
             "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None},
            {"transaction_id": "F1", "kind": "fee", "amount_minor": 20,
             "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None},
        )  # fmt: skip

    assert match(fees(10), record({"fee_minor": 30})).findings.empty
    got = match(fees(15), record({"fee_minor": 30})).findings
    assert got["item_id"].tolist() == ["T1"]
    assert (got["facts"].iloc[0]["export_fee_minor"], got["facts"].iloc[0]["fee_row_id"]) == (
        35,
        "F1, F2",
    )
    run = replace(inputs(), export_findings=got)
    assert decide_findings(decide_at(run))[("T1", FEE_MISMATCH.name)]["detail"] == (
        "the export's fee rows F1, F2 charge 0.35 EUR; the payout's answer gives a fee of 0.30 EUR"
    )


def test_a_fee_row_naming_no_id_is_paired_by_a_reference_only_one_payout_row_has() -> None:
    """The fee row FX names no payout and is no payout row's fee_id, but carries T1's reference
    R1: FX is T1's fee, and its 0.35 against T1's 0.30 is found. Where a second payout row has R1
    too, the reference names neither, and nothing is paired."""
    fee = {"transaction_id": "FX", "kind": "fee", "amount_minor": 35, "merchant_reference": "R1",
           "related_transaction_id": None, "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    got = match(rows({"fee_id": None}, fee), record({}))
    assert got.findings["item_id"].tolist() == ["T1"]
    assert got.findings["facts"].iloc[0]["fee_row_id"] == "FX"
    twice = rows({"fee_id": None}, {"transaction_id": "T2", "fee_id": None}, fee)
    assert match(twice, record({}, {"transaction_id": "T2"})).findings.empty


def test_a_night_that_does_not_read_the_export_leaves_its_side_of_a_fee_mismatch_standing() -> None:
    """p1's fee_mismatch holds the price's side and the export's (F9 charges 2.00); a person
    acknowledged it. The next night the export is not read about p1 (not pulled, or switched
    off) and the price's side is found as before: the export's side stands as last read, so the
    finding is unchanged and the acknowledged case stays so, not reopened as new. A night that
    reads the export about p1 and finds F9 charging 1.50 changes the finding: it reopens."""
    fee = {"transaction_id": "F9", "kind": "fee", "amount_minor": 200,
           "related_transaction_id": "p1"}  # fmt: skip
    exported = match(rows(fee), record({"transaction_id": "p1", "fee_minor": 150}))
    run = inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)])
    first = decide_at(
        replace(run, export_findings=exported.findings, export_seen=exported.seen), params=PRICED
    )
    opened = first.cases.opened[0]
    live = cases(
        {"exception_id": "E2-1", "item_id": "p1", "flag": FEE_MISMATCH.name,
         "state": "acknowledged", "owner": "anna", "facts": opened["facts"],
         "last_facts": opened["last_facts"]}
    )  # fmt: skip
    tomorrow = DECIDED + DAY
    later = inputs(next_night(first, "p1"), answered=[settled("p1", 150)], live=live, run_id=3)
    unread = decide_at(later, as_of=tomorrow, params=PRICED)
    assert decision_statuses(unread) == {("p1", FEE_MISMATCH.name): "acknowledged"}
    found = decide_findings(unread)["p1", FEE_MISMATCH.name]
    assert (found["facts"]["export_fee_minor"], found["facts"]["fee_row_id"]) == (200, "F9")
    agreeing = match(
        rows({**fee, "amount_minor": 150}), record({"transaction_id": "p1", "fee_minor": 150})
    )
    read = decide_at(
        replace(later, export_findings=agreeing.findings, export_seen=agreeing.seen),
        as_of=tomorrow,
        params=PRICED,
    )
    assert decision_statuses(read) == {("p1", FEE_MISMATCH.name): "new"}


def test_a_payout_decided_by_a_row_that_gives_no_fee_keeps_the_fee_its_answer_gave() -> None:
    """p1's last answer (pending) charged 0.75; tonight an export row, whose file gives no fee
    column, decides it settled. The row says nothing about the fee: p1 keeps 0.75 (not "no
    fee"), and once the grace has passed no fee_missing is found for a fee it was charged."""
    pending = ok("p1", 1, amount_minor=10000, amount="100.00", fee_amount_minor=75, fee_id="F-p1")
    first = decide_at(inputs(payout("p1", **HUNDRED), answered=[pending]), params=PRICED)
    assert decision_row(first, "p1")["fee_minor"] == 75
    row = {"transaction_id": "p1", "merchant_reference": "m-p1", "amount_minor": 10000,
           "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    # p1 as the store keeps it after the first night: its answer's fee and the fee's id.
    stored = {"transaction_id": "p1", "amount_minor": 10000, "answer_amount_minor": 10000,
              "fee_minor": 75, "fee_id": "F-p1"}  # fmt: skip
    got = match(rows(row), record(stored), to_ask=("p1",))
    assert got.saved == 1
    later = replace(inputs(next_night(first, "p1"), poll=["p1"]), answers=got.answers())
    decided = decide_at(later, as_of=DECIDED + 5 * DAY, params=PRICED)
    assert decision_row(decided, "p1")["outcome"] == "settled"
    assert (decision_row(decided, "p1")["fee_minor"], decision_row(decided, "p1")["fee_id"]) == (
        75,
        "F-p1",
    )
    assert decision_statuses(decided) == {}


def test_fee_rows_are_compared_with_the_answers_fee_when_the_payout_row_gives_none() -> None:
    """T1's answer gave a fee of 0.30; a newer file lists T1's payout row with no fee column and
    its fee row F1 of 0.30: the fees agree (the payout row's blank says nothing), nothing found.
    A fee row of 0.35 is still found against the answer's 0.30."""
    payout_row = {"fee_amount_minor": None, "fee_id": None}
    fee = {"transaction_id": "F1", "kind": "fee", "amount_minor": 30,
           "related_transaction_id": "T1", "fee_amount_minor": None, "fee_id": None}  # fmt: skip
    assert match(rows(payout_row, fee), record({"fee_minor": 30})).findings.empty
    dearer = match(rows(payout_row, {**fee, "amount_minor": 35}), record({"fee_minor": 30}))
    assert dearer.findings["facts"].iloc[0]["charged_minor"] == 30
    assert dearer.findings["facts"].iloc[0]["export_fee_minor"] == 35


def test_a_decided_payouts_fee_id_stays_while_the_row_gives_the_same_fee_without_one() -> None:
    """The answers gave T1 a fee of 0.30 with id F-T1. A row giving 0.30 and no fee id keeps
    F-T1; a row giving 0.35 and no id is another fee, of no id known; a row's own id wins."""

    def decided(fee: int, fee_id: str | None) -> tuple[object, object]:
        row = {"fee_amount_minor": fee, "fee_id": fee_id}
        got = match(rows(row), record({"fee_minor": 30, "fee_id": "F-T1"})).decided
        return got["fee_amount_minor"].iloc[0], got["fee_id"].iloc[0]

    assert decided(30, None) == (30, "F-T1")
    dearer, unknown = decided(35, None)
    assert dearer == 35
    assert pd.isna(unknown)
    assert decided(30, "F9") == (30, "F9")


def test_a_returned_funds_row_naming_no_payout_keeps_the_checks_answered_before_it() -> None:
    """A type-13 row with no related_transaction_id (a file without the column, or a blank) may
    be any payout's return: every check last answered before it settled is asked, not stood in
    for as still settled; a check answered after it stands."""
    unnamed = {"transaction_id": "R-9", "kind": "returned_funds", "related_transaction_id": None}
    assert stood_in(due({}), rows(unnamed)) == []
    answered_since = due({"last_checked_at": pd.Timestamp("2026-01-06T02:00:00Z")})
    assert stood_in(answered_since, rows(unnamed)) == ["T1"]
