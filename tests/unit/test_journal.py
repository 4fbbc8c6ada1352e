"""The journal's core at its entry: literal payouts' money in, literal journal lines out.

Each event, each reversal, the closed period, the ids, and a property over random nights whose
output is fed back as what is booked.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.constants import SETTLED_OUTCOMES
from recon.errors import ConfigError, InputError
from recon.reconcile.journal import (
    Event,
    JournalLine,
    JournalParams,
    PayoutMoney,
    Role,
    booked_entries,
    journal_entries,
)

ZONE = ZoneInfo("Europe/Stockholm")
# The run of 20 November at 03:00 UTC: 04:00 in Stockholm, the run's day is the 20th.
RUN = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
TODAY = date(2026, 11, 20)
SETTLED_AT = datetime(2026, 11, 19, 10, 0, tzinfo=UTC)
CODES: Mapping[Role, str] = {
    Role.PAYOUTS_PAYABLE: "2890",
    Role.PROVIDER_BALANCE: "1940",
    Role.FEE_EXPENSE: "6570",
    Role.SUSPENSE: "2999",
}


def money(
    transaction_id: str = "tx-1",
    *,
    outcome: str | None = "settled",
    amount: int = 10_000,
    currency: str = "EUR",
    settled_at: datetime | None = SETTLED_AT,
    settled_since: datetime | None = None,
    fee: int | None = None,
    returned: int | None = None,
    recorded: bool = True,
) -> PayoutMoney:
    """One payout's money as the record says it (settled yesterday, no fee, no return)."""
    return PayoutMoney(
        transaction_id=transaction_id,
        merchant_reference=f"ref-{transaction_id}",
        currency=currency,
        amount_minor=amount,
        outcome=outcome,
        settled_at=settled_at,
        settled_since=settled_since,
        fee_minor=fee,
        returned_minor=returned,
        recorded=recorded,
    )


def night(
    facts: Iterable[PayoutMoney],
    booked: Sequence[JournalLine] = (),
    *,
    as_of: datetime = RUN,
    locked_through: date | None = None,
    codes: Mapping[Role, str] = CODES,
    account: str = "default",
) -> list[JournalLine]:
    """The lines one run adds, given every line booked before (fed back as the store would)."""
    params = JournalParams(
        provider_account=account,
        codes=codes,
        zone=ZONE,
        as_of=as_of,
        locked_through=locked_through,
    )
    number = len({line.journal_id for line in booked}) + 1
    return journal_entries(facts, booked_entries(booked), params, next_number=number)


@dataclass(frozen=True)
class Entry:
    """One entry of lines, as a test reads it: what it books, from and to which roles, when."""

    event: Event
    debit: Role
    credit: Role
    amount: int
    version: int
    event_date: date
    posting_date: date
    late: bool
    reverses: str | None
    journal_id: str


def entries(lines: Sequence[JournalLine]) -> list[Entry]:
    """The lines grouped by entry, in the order made; each entry has one debit and one credit."""
    groups: dict[str, list[JournalLine]] = {}
    for line in lines:
        groups.setdefault(line.journal_id, []).append(line)
    made = []
    for entry_id, group in groups.items():
        assert [line.line for line in group] == [1, 2]
        (debit,) = [line for line in group if line.debit_minor]
        (credit,) = [line for line in group if line.credit_minor]
        assert debit.debit_minor == credit.credit_minor
        assert debit.credit_minor == credit.debit_minor == 0
        assert len({(ln.event, ln.version, ln.event_date, ln.posting_date) for ln in group}) == 1
        made.append(
            Entry(
                event=debit.event,
                debit=debit.role,
                credit=credit.role,
                amount=debit.debit_minor,
                version=debit.version,
                event_date=debit.event_date,
                posting_date=debit.posting_date,
                late=debit.late,
                reverses=debit.reverses,
                journal_id=entry_id,
            )
        )
    return made


def by_event(lines: Sequence[JournalLine]) -> dict[Event, Entry]:
    made = entries(lines)
    assert len({entry.event for entry in made}) == len(made)
    return {entry.event: entry for entry in made}


# --- each event ---------------------------------------------------------------------------------


def test_a_settled_payout_books_its_settlement_on_the_providers_day_in_the_zone() -> None:
    """23:30 UTC on the 18th is 00:30 on the 19th in Stockholm: the entry is the 19th's."""
    lines = night([money(settled_at=datetime(2026, 11, 18, 23, 30, tzinfo=UTC))])
    assert [(ln.line, ln.role, ln.account, ln.debit_minor, ln.credit_minor) for ln in lines] == [
        (1, Role.PAYOUTS_PAYABLE, "2890", 10_000, 0),
        (2, Role.PROVIDER_BALANCE, "1940", 0, 10_000),
    ]
    (entry,) = entries(lines)
    assert entry.event == Event.PAYOUT_SETTLED
    assert (entry.event_date, entry.posting_date, entry.late) == (date(2026, 11, 19),) * 2 + (
        False,
    )
    assert (entry.version, entry.reverses) == (1, None)
    line = lines[0]
    assert (line.provider_account, line.transaction_id, line.merchant_reference) == (
        "default",
        "tx-1",
        "ref-tx-1",
    )
    assert (line.currency, line.number) == ("EUR", 1)


def test_a_fee_debits_fee_expense_and_credits_the_provider_balance_on_the_settled_day() -> None:
    """The fee is its own entry, beside the settlement, dated the day the payout settled."""
    made = by_event(night([money(fee=250)]))
    assert set(made) == {Event.PAYOUT_SETTLED, Event.PAYOUT_FEE}
    fee = made[Event.PAYOUT_FEE]
    assert (fee.debit, fee.credit, fee.amount) == (Role.FEE_EXPENSE, Role.PROVIDER_BALANCE, 250)
    assert fee.event_date == fee.posting_date == date(2026, 11, 19)
    assert made[Event.PAYOUT_SETTLED].amount == 10_000


def test_a_returned_payout_books_its_return_on_the_runs_day() -> None:
    """The return moves money back to the provider balance, the day the run saw it."""
    made = by_event(night([money(outcome="returned", fee=250, returned=10_000)]))
    assert set(made) == {Event.PAYOUT_SETTLED, Event.PAYOUT_FEE, Event.PAYOUT_RETURNED}
    back = made[Event.PAYOUT_RETURNED]
    assert (back.debit, back.credit, back.amount) == (
        Role.PROVIDER_BALANCE,
        Role.PAYOUTS_PAYABLE,
        10_000,
    )
    assert back.event_date == back.posting_date == TODAY
    assert made[Event.PAYOUT_SETTLED].event_date == date(2026, 11, 19)


@pytest.mark.parametrize("outcome", ["failed", "aborted", "pending", "delayed", None])
def test_a_payout_that_moved_no_money_books_nothing(outcome: str | None) -> None:
    """Failed, aborted and open payouts: no entry, even with a settled time on the record."""
    assert night([money(outcome=outcome)]) == []


def test_a_fee_on_a_failed_payout_books_nothing() -> None:
    """A fee (or a return) the record holds for a payout that failed is not booked."""
    assert night([money(outcome="failed", fee=250, returned=10_000)]) == []


def test_a_late_settlement_books_on_the_day_it_settled() -> None:
    """Settled five days before the run: the entry is dated then, not the run's day."""
    settled = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
    made = by_event(night([money(settled_at=settled, fee=100)]))
    assert {entry.event_date for entry in made.values()} == {date(2026, 11, 15)}
    assert {entry.posting_date for entry in made.values()} == {date(2026, 11, 15)}


def test_without_the_providers_time_the_day_a_run_first_saw_it_settled() -> None:
    """``settled_since`` stands in for ``settled_at``; with neither, the run's day."""
    since = datetime(2026, 11, 17, 22, 30, tzinfo=UTC)  # 23:30 in Stockholm: the 17th
    (seen,) = entries(night([money(settled_at=None, settled_since=since)]))
    assert seen.event_date == date(2026, 11, 17)
    (unknown,) = entries(night([money(settled_at=None)]))
    assert unknown.event_date == TODAY


def test_a_naive_time_is_utc_whatever_the_machines_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A time without an offset (as some drivers return UTC) is read as UTC, not local time."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        naive = datetime(2026, 11, 18, 20, 0, tzinfo=UTC).replace(tzinfo=None)  # 21:00 there
        (entry,) = entries(night([money(settled_at=naive)], as_of=RUN.replace(tzinfo=None)))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert entry.event_date == date(2026, 11, 18)  # read as local time: the 19th


def test_payouts_are_booked_in_id_order_with_consecutive_numbers() -> None:
    """Entries come by payout id, then event; each takes the next number."""
    lines = night([money("tx-b", fee=5), money("tx-a")])
    numbered = [(ln.transaction_id, ln.event, ln.number) for ln in lines if ln.line == 1]
    assert numbered == [
        ("tx-a", Event.PAYOUT_SETTLED, 1),
        ("tx-b", Event.PAYOUT_SETTLED, 2),
        ("tx-b", Event.PAYOUT_FEE, 3),
    ]


# --- each reversal ------------------------------------------------------------------------------

NEXT_RUN = RUN + timedelta(days=2)
NEXT_DAY = date(2026, 11, 22)


def test_settled_then_failed_reverses_the_settlement_and_the_fee_and_books_nothing_new() -> None:
    """Each reversal names its original, swaps its lines and is dated the run's day."""
    first = night([money(fee=250)])
    second = night([money(outcome="failed", fee=250)], first, as_of=NEXT_RUN)
    originals = by_event(first)
    reversals = by_event(second)
    assert set(reversals) == {Event.PAYOUT_SETTLED, Event.PAYOUT_FEE}
    for event, reversal in reversals.items():
        original = originals[event]
        assert reversal.reverses == original.journal_id
        assert reversal.journal_id != original.journal_id
        assert (reversal.debit, reversal.credit) == (original.credit, original.debit)
        assert reversal.amount == original.amount
        assert reversal.event_date == reversal.posting_date == NEXT_DAY
    old = {(ln.journal_id, ln.line): ln for ln in first}
    for line in second:
        before = old[(line.reverses or "", line.line)]
        assert (line.role, line.account, line.debit_minor, line.credit_minor) == (
            before.role,
            before.account,
            before.credit_minor,
            before.debit_minor,
        )
    assert [ln.number for ln in second if ln.line == 1] == [3, 4]
    assert night([money(outcome="failed", fee=250)], first + second, as_of=NEXT_RUN) == []


def test_an_amount_changed_is_reversed_then_booked_again_as_version_2() -> None:
    """The old amount reversed, the new one booked under a new id; the fee stands."""
    first = night([money(fee=250)])
    second = entries(night([money(amount=12_000, fee=250)], first, as_of=NEXT_RUN))
    original = by_event(first)[Event.PAYOUT_SETTLED]
    assert [(e.event, e.amount, e.version, e.reverses) for e in second] == [
        (Event.PAYOUT_SETTLED, 10_000, 1, original.journal_id),
        (Event.PAYOUT_SETTLED, 12_000, 2, None),
    ]
    assert second[1].journal_id not in {original.journal_id, second[0].journal_id}
    assert second[1].event_date == date(2026, 11, 19)  # still the day it settled


def test_a_payout_the_record_lacks_takes_its_money_out_to_suspense() -> None:
    """The provider settled a payout the record lacks: suspense debited, the provider balance
    credited, on its settled day; one still open, or failed, books nothing."""
    made = entries(night([money("item-1", recorded=False)]))
    assert [(e.event, e.debit, e.credit, e.amount, e.event_date) for e in made] == [
        (Event.UNRECORDED_PAYOUT, Role.SUSPENSE, Role.PROVIDER_BALANCE, 10_000, date(2026, 11, 19))
    ]
    for outcome in ("pending", "failed"):
        assert night([money("item-1", outcome=outcome, recorded=False)]) == []


def test_a_payout_recorded_later_leaves_suspense_for_its_settlement() -> None:
    """Once the merchant records it, the suspense entry is reversed and the payout's settlement
    (and fee) booked as for any recorded payout."""
    first = night([money("tx-9", recorded=False)])
    second = entries(night([money("tx-9", fee=250)], first, as_of=NEXT_RUN))
    original = entries(first)[0]
    assert [(e.event, e.debit, e.reverses) for e in second] == [
        (Event.PAYOUT_SETTLED, Role.PAYOUTS_PAYABLE, None),
        (Event.PAYOUT_FEE, Role.FEE_EXPENSE, None),
        (Event.UNRECORDED_PAYOUT, Role.PROVIDER_BALANCE, original.journal_id),
    ]


def test_a_payout_the_record_lacks_needs_the_suspense_code() -> None:
    """Without ``suspense`` configured, the unrecorded payout is refused naming the event."""
    codes = {role: code for role, code in CODES.items() if role != Role.SUSPENSE}
    with pytest.raises(ConfigError, match=r"unrecorded_payout.*suspense"):
        night([money("item-1", recorded=False)], codes=codes)


def test_a_fee_changed_is_reversed_then_booked_again() -> None:
    """Only the fee's entry is touched; a fee gone is reversed and nothing replaces it."""
    first = night([money(fee=250)])
    second = night([money(fee=300)], first, as_of=NEXT_RUN)
    fee = by_event(first)[Event.PAYOUT_FEE]
    assert [(e.event, e.amount, e.version, e.reverses) for e in entries(second)] == [
        (Event.PAYOUT_FEE, 250, 1, fee.journal_id),
        (Event.PAYOUT_FEE, 300, 2, None),
    ]
    third = night([money(fee=None)], first + second, as_of=NEXT_RUN)
    fee_2 = entries(second)[1]
    assert [(e.event, e.amount, e.reverses) for e in entries(third)] == [
        (Event.PAYOUT_FEE, 300, fee_2.journal_id)
    ]


def test_a_return_the_provider_takes_back_is_reversed() -> None:
    """``returned_minor`` back to none and the payout settled: the return's entry reversed."""
    first = night([money(outcome="returned", returned=10_000)])
    second = night([money(returned=None)], first, as_of=NEXT_RUN)
    back = by_event(first)[Event.PAYOUT_RETURNED]
    (reversal,) = entries(second)
    assert (reversal.event, reversal.reverses, reversal.debit, reversal.credit) == (
        Event.PAYOUT_RETURNED,
        back.journal_id,
        Role.PAYOUTS_PAYABLE,
        Role.PROVIDER_BALANCE,
    )
    assert reversal.event_date == NEXT_DAY


def test_a_payout_settled_again_after_its_reversal_is_version_2() -> None:
    """Settled, failed (reversed), settled again: a new entry, version 2, a new id."""
    first = night([money(fee=250)])
    second = night([money(outcome="failed")], first, as_of=NEXT_RUN)
    third = night([money(fee=250)], first + second, as_of=NEXT_RUN + timedelta(days=1))
    made = by_event(third)
    assert {(e.event, e.version, e.reverses) for e in made.values()} == {
        (Event.PAYOUT_SETTLED, 2, None),
        (Event.PAYOUT_FEE, 2, None),
    }
    ids = {ln.journal_id for ln in first + second}
    assert not ids & {e.journal_id for e in made.values()}
    assert night([money(fee=250)], first + second + third, as_of=NEXT_RUN) == []


def test_nothing_is_booked_twice_when_the_facts_are_unchanged() -> None:
    """The same facts on the next night, with the first night's lines booked: nothing."""
    facts = [
        money("tx-1", fee=250),
        money("tx-2", outcome="returned", returned=4_000),
        money("tx-3", outcome="failed"),
    ]
    first = night(facts)
    assert first
    assert night(facts, first) == []
    assert night(facts, first, as_of=NEXT_RUN) == []


def test_a_currency_changed_is_reversed_and_booked_in_the_new_currency() -> None:
    """Same amount, another currency: the old entry reversed, version 2 in the new one."""
    first = night([money()])
    second = night([money(currency="SEK")], first, as_of=NEXT_RUN)
    assert [(ln.currency, ln.version, ln.reverses is None) for ln in second if ln.line == 1] == [
        ("EUR", 1, False),
        ("SEK", 2, True),
    ]


def test_a_payout_gone_from_the_facts_is_reversed() -> None:
    """An entry whose payout the record no longer holds is no longer proved: reversed."""
    first = night([money(fee=250)])
    second = entries(night([], first, as_of=NEXT_RUN))
    assert {e.reverses for e in second} == {e.journal_id for e in entries(first)}


# --- the closed period --------------------------------------------------------------------------


def test_an_event_in_a_closed_period_posts_on_the_first_open_day_marked_late() -> None:
    """Settled on the 15th, the books closed through the 17th: posted on the 18th, late; the
    event date stays the 15th. The return, on the run's day, is not late."""
    settled = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
    facts = [money(outcome="returned", settled_at=settled, returned=500)]
    made = by_event(night(facts, locked_through=date(2026, 11, 17)))
    settlement = made[Event.PAYOUT_SETTLED]
    assert (settlement.event_date, settlement.posting_date, settlement.late) == (
        date(2026, 11, 15),
        date(2026, 11, 18),
        True,
    )
    back = made[Event.PAYOUT_RETURNED]
    assert (back.event_date, back.posting_date, back.late) == (TODAY, TODAY, False)


def test_an_event_on_the_last_closed_day_is_late_and_one_after_it_is_not() -> None:
    """The closed period includes its last day."""
    on = money("tx-on", settled_at=datetime(2026, 11, 17, 12, 0, tzinfo=UTC))
    after = money("tx-after", settled_at=datetime(2026, 11, 18, 12, 0, tzinfo=UTC))
    lines = night([on, after], locked_through=date(2026, 11, 17))
    dates = {ln.transaction_id: (ln.posting_date, ln.late) for ln in lines}
    assert dates == {
        "tx-on": (date(2026, 11, 18), True),
        "tx-after": (date(2026, 11, 18), False),
    }


def test_a_period_closed_through_the_runs_own_day_posts_tomorrow() -> None:
    """Closing the run's own day is allowed: its entries and reversals post the day after."""
    first = night([money(fee=250)])
    second = night([money(outcome="failed")], first, as_of=NEXT_RUN, locked_through=NEXT_DAY)
    assert second
    assert {(ln.event_date, ln.posting_date, ln.late) for ln in second} == {
        (NEXT_DAY, NEXT_DAY + timedelta(days=1), True)
    }


def test_a_period_closed_after_the_runs_day_is_refused() -> None:
    """A closed period cannot end in the future: InputError naming the setting and both days."""
    with pytest.raises(InputError) as caught:
        night([money()], locked_through=TODAY + timedelta(days=1))
    message = str(caught.value)
    assert "RECON_JOURNAL_LOCKED_THROUGH" in message
    assert "2026-11-21" in message
    assert "2026-11-20" in message


def test_the_runs_day_is_its_day_in_the_zone() -> None:
    """At 23:30 UTC on the 20th it is the 21st in Stockholm: closing the 21st is allowed."""
    late_run = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)
    (entry,) = entries(night([money()], as_of=late_run, locked_through=date(2026, 11, 21)))
    assert (entry.posting_date, entry.late) == (date(2026, 11, 22), True)


def test_a_code_missing_for_an_event_is_refused_naming_the_event_and_the_setting() -> None:
    """No fee_expense: a settlement alone books, a fee is ConfigError naming both."""
    codes = {role: code for role, code in CODES.items() if role != Role.FEE_EXPENSE}
    assert entries(night([money()], codes=codes))
    with pytest.raises(ConfigError) as caught:
        night([money(fee=250)], codes=codes)
    message = str(caught.value)
    assert "payout_fee" in message
    assert "fee_expense" in message
    assert "[journal.accounts]" in message


def test_the_missing_code_error_names_the_accounts_own_setting() -> None:
    """The setting named is the one the caller says the codes came from."""
    params = JournalParams(
        provider_account="nordlys",
        codes={Role.PROVIDER_BALANCE: "1941"},
        zone=ZONE,
        as_of=RUN,
        setting="[accounts.nordlys.journal.accounts] or [journal.accounts]",
    )
    with pytest.raises(ConfigError, match=r"payout_settled .*payouts_payable.*nordlys"):
        journal_entries([money()], [], params)


# --- journal ids --------------------------------------------------------------------------------


def test_the_same_facts_give_the_same_ids() -> None:
    """Two runs of the same facts, even on other days, give the same ids, lines and numbers."""
    facts = [money("tx-1", fee=250), money("tx-2", outcome="returned", returned=100)]
    assert night(facts) == night(list(reversed(facts)))
    assert [ln.journal_id for ln in night(facts)] == [
        ln.journal_id for ln in night(facts, as_of=NEXT_RUN)
    ]


def test_ids_differ_by_account_event_payout_and_version() -> None:
    """Each of the account, the event, the payout and the version makes another id."""
    ids = {e.event: e.journal_id for e in entries(night([money(fee=250)]))}
    other_account = {e.event: e.journal_id for e in entries(night([money(fee=250)], account="b"))}
    other_payout = {e.journal_id for e in entries(night([money("tx-2", fee=250)]))}
    first = night([money()])
    second = entries(night([money(amount=1)], first))
    assert ids[Event.PAYOUT_SETTLED] != ids[Event.PAYOUT_FEE]
    assert not set(ids.values()) & set(other_account.values())
    assert not set(ids.values()) & other_payout
    assert second[1].version == 2
    assert second[1].journal_id != ids[Event.PAYOUT_SETTLED] == first[0].journal_id
    assert {ln.provider_account for ln in night([money()], account="b")} == {"b"}


# --- random nights ------------------------------------------------------------------------------

ACTIONS = ["settle", "fail", "fee", "return", "take_back", "amount", "currency", "nothing"]
START = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


def step(payout: PayoutMoney | None, action: str, value: int, as_of: datetime) -> PayoutMoney:
    """The payout's facts after one action the provider or the bank took."""
    if payout is None:
        payout = money(outcome="pending", amount=1_000, settled_at=None)
    if action == "settle":
        back = payout.outcome == "returned"
        return replace(payout, outcome="returned" if back else "settled", settled_at=as_of)
    if action == "fail":
        return replace(payout, outcome="failed")
    if action == "fee":
        return replace(payout, fee_minor=[None, 0, 25, 40][value % 4])
    if action == "return" and payout.outcome in SETTLED_OUTCOMES:
        return replace(payout, outcome="returned", returned_minor=payout.amount_minor - value)
    if action == "take_back" and payout.outcome in SETTLED_OUTCOMES:
        return replace(payout, outcome="settled", returned_minor=None)
    if action == "amount":
        return replace(payout, amount_minor=1_000 + 500 * (value % 3))
    if action == "currency":
        return replace(payout, currency=["EUR", "SEK"][value % 2])
    return payout


Night = list[tuple[int, str, int]]  # (payout, action, value)
nights_strategy = st.lists(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),
            st.sampled_from(ACTIONS),
            st.integers(min_value=0, max_value=5),
        ),
        max_size=6,
    ),
    min_size=1,
    max_size=7,
)


def balances(lines: Iterable[JournalLine]) -> dict[tuple[Role, str], int]:
    """Per role and currency: debits minus credits."""
    total: dict[tuple[Role, str], int] = defaultdict(int)
    for line in lines:
        total[(line.role, line.currency)] += line.debit_minor - line.credit_minor
    return total


def expected(facts: Iterable[PayoutMoney]) -> dict[tuple[Role, str], int]:
    """What the facts say each role holds, per currency, over the payouts now settled."""
    total: dict[tuple[Role, str], int] = defaultdict(int)
    for payout in facts:
        if payout.outcome not in SETTLED_OUTCOMES:
            continue
        fee, back = payout.fee_minor or 0, payout.returned_minor or 0
        total[(Role.PAYOUTS_PAYABLE, payout.currency)] += payout.amount_minor - back
        total[(Role.PROVIDER_BALANCE, payout.currency)] -= payout.amount_minor + fee - back
        total[(Role.FEE_EXPENSE, payout.currency)] += fee
    return total


def check_journal(journal: Sequence[JournalLine]) -> None:
    """Every entry balances per currency; every reversal names one original that is no
    reversal; no original is reversed twice; no line appears twice."""
    assert len({(ln.journal_id, ln.line) for ln in journal}) == len(journal)
    sums: dict[tuple[str, str], int] = defaultdict(int)
    for line in journal:
        sums[(line.journal_id, line.currency)] += line.debit_minor - line.credit_minor
    assert all(total == 0 for total in sums.values()), sums
    originals = {ln.journal_id for ln in journal if ln.reverses is None}
    reversal_of = {ln.journal_id: ln.reverses for ln in journal if ln.reverses is not None}
    assert set(reversal_of.values()) <= originals
    assert max(Counter(reversal_of.values()).values(), default=1) == 1
    assert len({ln.journal_id: ln.number for ln in journal}) == len(
        {ln.number for ln in journal}
    ), "two entries share a number"


@settings(max_examples=150, deadline=None)
@given(nights_strategy, st.sampled_from([None, 0, 2]))
def test_random_nights_keep_the_journal_equal_to_the_facts(
    nights: list[Night], closed_days_ago: int | None
) -> None:
    """After each night, with the nights before booked: each entry balances, each reversal names
    an original once, each role holds what the facts say, nothing posts into the closed period,
    and the same facts again add nothing."""
    facts: dict[str, PayoutMoney] = {}
    journal: list[JournalLine] = []
    for day, actions in enumerate(nights):
        as_of = START + timedelta(days=day)
        locked: Any = None
        if closed_days_ago is not None:
            locked = as_of.astimezone(ZONE).date() - timedelta(days=closed_days_ago)
        for index, action, value in actions:
            tid = f"tx-{index}"
            facts[tid] = replace(step(facts.get(tid), action, value, as_of), transaction_id=tid)
        made = night(facts.values(), journal, as_of=as_of, locked_through=locked)
        numbers = sorted({ln.number for ln in made})
        first = len({ln.journal_id for ln in journal}) + 1
        assert numbers == list(range(first, first + len(numbers)))
        journal += made
        check_journal(journal)
        held = {key: total for key, total in balances(journal).items() if total}
        assert held == {key: total for key, total in expected(facts.values()).items() if total}
        if locked is not None:
            assert all(ln.posting_date > locked for ln in made)
        assert all(ln.posting_date >= ln.event_date for ln in made)
        assert night(facts.values(), journal, as_of=as_of, locked_through=locked) == []
