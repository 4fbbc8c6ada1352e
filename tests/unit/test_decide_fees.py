"""The provider's fee against the agreed price, at the run's entry: literal RunInputs in, literal
findings out. One test per finding (fee_mismatch, fee_on_unpaid, fee_missing), a correction that
ends one, the tolerance, the price that changes mid-month, and no checks without a price."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal

import pandas as pd

from recon.reconcile.classify import ClassifyParams
from recon.reconcile.pricing import FeeEntry, FeeRules
from tests.unit.decide_support import (
    AS_OF,
    DAY,
    cases,
    decide_at,
    findings,
    inputs,
    next_night,
    ok,
    payout,
    row,
    statuses,
)

# 0.25 + 0.50 %, from a day before the payouts to the day after AS_OF; 0.30 + 0.50 % after that.
FIRST = FeeEntry("EUR", date(2024, 3, 1), date(2024, 3, 10), fixed=Decimal("0.25"),
                 percent=Decimal("0.50"))  # fmt: skip
SECOND = FeeEntry("EUR", date(2024, 3, 11), fixed=Decimal("0.30"), percent=Decimal("0.50"))
PRICED = ClassifyParams(fees=FeeRules(entries=(FIRST, SECOND)))
HUNDRED = {"amount_minor": 10000}  # 100.00 EUR: agreed fee 0.75 (FIRST), 0.80 (SECOND)


def settled(tid: str, fee: int | None, **fields: object) -> dict[str, object]:
    """An answer: settled 100.00 EUR with ``fee`` minor units (None: no fee)."""
    return ok(tid, 6, amount_minor=10000, amount="100.00", fee_amount_minor=fee,
              fee_id=None if fee is None else f"F-{tid}", **fields)  # fmt: skip


def test_a_fee_above_the_agreed_price_is_fee_mismatch_with_both_fees_and_the_entry() -> None:
    """1.50 charged on 100.00 EUR where 0.25 + 0.50 % is 0.75: overcharged by 0.75."""
    decision = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)]),
                         params=PRICED)  # fmt: skip
    assert statuses(decision) == {("p1", "fee_mismatch"): "new"}
    found = findings(decision)["p1", "fee_mismatch"]
    wanted = {"charged_minor": 150, "expected_minor": 75,
              "entry": "2024-03-01 EUR all accounts", "fee_id": "F-p1"}  # fmt: skip
    assert {k: found["facts"][k] for k in wanted} == wanted
    assert found["detail"] == (
        "fee charged 1.50 EUR, agreed 0.75 EUR (price from 2024-03-01 EUR all accounts);"
        " overcharged by 0.75 EUR"
    )
    assert row(decision, "p1")["fee_minor"] == 150


def test_an_undercharge_is_fee_mismatch_too() -> None:
    """0.50 charged where 0.75 is agreed."""
    decision = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 50)]),
                         params=PRICED)  # fmt: skip
    assert findings(decision)["p1", "fee_mismatch"]["detail"].endswith("undercharged by 0.25 EUR")


def test_a_fee_within_the_tolerance_or_at_the_price_is_no_finding() -> None:
    """0.75 exactly, or 0.76 within a tolerance of 0.01."""
    tolerant = replace(PRICED, fees=replace(PRICED.fees, tolerance=Decimal("0.01")))
    at_price = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 75)]),
                         params=PRICED)  # fmt: skip
    a_cent_off = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 76)]),
                           params=tolerant)  # fmt: skip
    assert statuses(at_price) == {} == statuses(a_cent_off)


def test_the_entry_of_the_creation_day_prices_the_payout() -> None:
    """Created on 11 March, the day the price changed: 0.80 agreed, so 0.75 is an undercharge."""
    late = payout("p1", created=pd.Timestamp("2024-03-11 08:00", tz="UTC"), **HUNDRED)
    decision = decide_at(inputs(late, answered=[settled("p1", 75)]),
                         as_of=AS_OF + 2 * DAY, params=PRICED)  # fmt: skip
    facts = findings(decision)["p1", "fee_mismatch"]["facts"]
    assert (facts["expected_minor"], facts["entry"]) == (80, "2024-03-11 EUR all accounts")


def test_a_fee_on_an_aborted_payout_is_fee_on_unpaid() -> None:
    """Aborted, yet charged 0.75: money out for nothing."""
    aborted = ok("p1", 2, amount_minor=10000, fee_amount_minor=75, fee_id="F-1")
    decision = decide_at(inputs(payout("p1", **HUNDRED), answered=[aborted]), params=PRICED)
    assert statuses(decision) == {("p1", "fee_on_unpaid"): "new"}
    assert findings(decision)["p1", "fee_on_unpaid"]["detail"] == (
        "fee 0.75 EUR charged on a payout now aborted"
    )


def test_a_settled_payout_without_a_fee_is_fee_missing_once_the_grace_has_passed() -> None:
    """Settled tonight: within the grace. Settled three days before, still no fee: fee_missing."""
    tonight = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", None)]),
                        params=PRICED)  # fmt: skip
    assert statuses(tonight) == {}
    later = next_night(tonight, "p1")
    decision = decide_at(inputs(later, answered=[settled("p1", None)]),
                         as_of=AS_OF + 3 * DAY, params=PRICED)  # fmt: skip
    assert statuses(decision) == {("p1", "fee_missing"): "new"}
    assert findings(decision)["p1", "fee_missing"]["facts"]["expected_minor"] == 75


def test_a_later_answer_that_corrects_the_fee_clears_the_finding() -> None:
    """The provider's answer now says 0.75: the case is cleared by the facts."""
    first = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)]),
                      params=PRICED)  # fmt: skip
    live = cases({"exception_id": "E1-1", "item_id": "p1", "flag": "fee_mismatch"})
    corrected = decide_at(
        inputs(next_night(first, "p1"), answered=[settled("p1", 75)], live=live),
        as_of=AS_OF + DAY, params=PRICED,
    )  # fmt: skip
    assert statuses(corrected) == {("p1", "fee_mismatch"): "cleared"}
    assert row(corrected, "p1")["fee_minor"] == 75


def test_a_payout_not_answered_tonight_keeps_its_fee_and_its_finding() -> None:
    """Not asked tonight: the fee kept from the latest answer still differs."""
    first = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)]),
                      params=PRICED)  # fmt: skip
    quiet = next_night(first, "p1", polled=False)
    decision = decide_at(inputs(quiet, answered=[]), as_of=AS_OF + DAY, params=PRICED)
    assert row(decision, "p1")["fee_minor"] == 150
    assert "fee_mismatch" in row(decision, "p1")["exceptions"]


def test_without_a_price_fees_are_kept_but_never_checked() -> None:
    """No [[fees]]: an overcharge and a fee on an aborted payout are stored, not findings."""
    aborted = ok("p2", 2, amount_minor=10000, fee_amount_minor=75, fee_id="F-2")
    decision = decide_at(
        inputs(payout("p1", **HUNDRED), payout("p2", **HUNDRED),
               answered=[settled("p1", 150), aborted])
    )  # fmt: skip
    assert statuses(decision) == {}
    assert (row(decision, "p1")["fee_minor"], row(decision, "p2")["fee_id"]) == (150, "F-2")


def test_an_entry_of_one_account_prices_that_accounts_night_only() -> None:
    """An entry naming brand_b: brand_b's night finds the 1.50 overcharge, default's prices none."""
    theirs = replace(FIRST, account="brand_b")
    night = inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)])
    for_b = replace(PRICED, fees=FeeRules(entries=(theirs,), account="brand_b"))
    for_default = replace(PRICED, fees=FeeRules(entries=(theirs,)))
    assert statuses(decide_at(night, params=for_b)) == {("p1", "fee_mismatch"): "new"}
    unpriced = decide_at(night, params=for_default)
    assert statuses(unpriced) == {}
    assert pd.isna(row(unpriced, "p1")["fee_expected_minor"])


def test_the_money_at_stake_of_a_fee_finding_is_the_fees_never_the_payouts() -> None:
    """On payouts of 100.00 EUR: overcharged 1.50 against 0.75 puts 0.75 at stake; 0.40 on an
    aborted payout, 0.40; settled without the agreed 0.75 after the grace, 0.75."""
    mismatch = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", 150)]),
                         params=PRICED)  # fmt: skip
    assert findings(mismatch)["p1", "fee_mismatch"]["facts"]["at_stake_minor"] == 75
    unpaid = decide_at(
        inputs(payout("p1", **HUNDRED), answered=[ok("p1", 2, amount_minor=10000,
               amount="100.00", fee_amount_minor=40, fee_id="F-p1")]),
        params=PRICED,
    )  # fmt: skip
    assert findings(unpaid)["p1", "fee_on_unpaid"]["facts"]["at_stake_minor"] == 40
    tonight = decide_at(inputs(payout("p1", **HUNDRED), answered=[settled("p1", None)]),
                        params=PRICED)  # fmt: skip
    later = decide_at(inputs(next_night(tonight, "p1"), answered=[settled("p1", None)]),
                      as_of=AS_OF + 3 * DAY, params=PRICED)  # fmt: skip
    assert findings(later)["p1", "fee_missing"]["facts"]["at_stake_minor"] == 75
