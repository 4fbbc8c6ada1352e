"""The sandbox's fees over HTTP: charged when a payout settles, rounded half-even to the
currency's minor unit, and the two sandbox amounts that charge wrongly (11.03, 15.01)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from recon.sandbox.config import FeeSchedule, SandboxConfig
from tests.integration.sandbox_support import sandbox_api

pytestmark = pytest.mark.anyio


async def test_a_payout_carries_no_fee_until_it_settles_then_the_schedules_price() -> None:
    """10.00 EUR: fee_amount and fee_id are null while completed (4); once settled (6) the
    default price, 0.25 + 0.50 % = 0.30, with an id of its own."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        before = await api.tx(payout["id"])
        assert (before["state"], before["fee_amount"], before["fee_id"]) == (4, None, None)
        await api.advance(60)
        after = await api.tx(payout["id"])
        assert (after["state"], after["fee_amount"]) == (6, Decimal("0.30"))
        assert isinstance(after["fee_id"], str)
        assert after["fee_id"] not in (payout["id"], "")


async def test_a_fee_on_an_aborted_payout_is_charged_at_creation_by_11_03() -> None:
    """11.03 is aborted (2) like 11.01, with bank_rejected_transaction, and charged its fee all
    the same: 0.25 + 0.05515 = 0.30515, rounded to 0.31."""
    async with sandbox_api() as api:
        payout = await api.payout("11.03")
        record = await api.tx(payout["id"])
        assert (record["state"], record["error_code"]) == (2, "bank_rejected_transaction")
        assert record["fee_amount"] == Decimal("0.31")
        assert record["fee_id"] is not None


async def test_the_ordinary_aborted_and_failed_amounts_carry_no_fee() -> None:
    """11.01 (aborted) and 12.01 (failed) never settle and are charged nothing, even a day on."""
    async with sandbox_api() as api:
        ids = [(await api.payout(amount))["id"] for amount in ("11.01", "11.02", "12.01")]
        await api.advance(86400)
        await api.authorize()  # the token lived 6 h
        for tx_id in ids:
            record = await api.tx(tx_id)
            assert (record["fee_amount"], record["fee_id"]) == (None, None)


async def test_15_01_settles_overcharged_with_the_fee_doubled() -> None:
    """15.01 settles like any payout; its fee is twice the rounded price: 2 x 0.33 = 0.66."""
    async with sandbox_api() as api:
        payout = await api.payout("15.01")
        await api.advance(60)
        record = await api.tx(payout["id"])
        assert (record["state"], record["fee_amount"]) == (6, Decimal("0.66"))


@pytest.mark.parametrize(
    ("currency", "amount", "fee"),
    [
        ("EUR", "1.00", "0.00"),  # 0.005: half to the even 0.00
        ("EUR", "3.00", "0.02"),  # 0.015: half to the even 0.02
        ("EUR", "5.00", "0.02"),  # 0.025: half to the even 0.02
        ("JPY", "100", "0"),  # 0.5: half to the even 0
        ("JPY", "300", "2"),  # 1.5: half to the even 2
        ("KWD", "0.100", "0.000"),  # 0.0005, three decimals: half to the even 0.000
        ("KWD", "0.300", "0.002"),  # 0.0015: half to the even 0.002
        ("KWD", "1.234", "0.006"),  # 0.00617: not a half, rounds to nearest
    ],
)
async def test_a_fee_is_rounded_half_even_to_the_currencys_minor_unit(
    currency: str, amount: str, fee: str
) -> None:
    """With --fee 0,0.50 (no fixed part) the price lands exactly on halves of the minor unit in
    a two-, a zero- and a three-decimal currency; each rounds to the even digit, written with the
    currency's decimals."""
    config = SandboxConfig(fee=FeeSchedule(fixed=Decimal(0), percent=Decimal("0.50")))
    async with sandbox_api(config) as api:
        payout = await api.payout(amount, currency_id=currency)
        await api.advance(60)
        charged = (await api.tx(payout["id"]))["fee_amount"]
        assert str(charged) == fee


async def test_the_fixed_part_is_in_the_payouts_currency_and_rounded_with_the_rest() -> None:
    """--fee 1.5,0: a JPY payout (no decimals) is charged 1.5 rounded half-even: 2 yen."""
    config = SandboxConfig(fee=FeeSchedule(fixed=Decimal("1.5"), percent=Decimal(0)))
    async with sandbox_api(config) as api:
        payout = await api.payout("1000", currency_id="JPY")
        await api.advance(60)
        assert str((await api.tx(payout["id"]))["fee_amount"]) == "2"


async def test_a_returned_payout_keeps_its_fee_and_the_return_carries_none() -> None:
    """14.01: the payout's fee (0.32) stays charged after the bank returns it; the type-13
    transaction has no fee of its own."""
    async with sandbox_api() as api:
        payout = await api.payout("14.01")
        await api.advance(120)
        record = await api.tx(payout["id"])
        returned = await api.tx(record["related_transaction_id"])
        assert (record["fee_amount"], returned["type"]) == (Decimal("0.32"), 13)
        assert (returned["fee_amount"], returned["fee_id"]) == (None, None)


async def test_a_payout_the_bank_confirms_later_is_charged_when_it_settles() -> None:
    """12.01 is failed and free; confirmed by the bank (5) it is still free; settled (6) it is
    charged 0.25 + 0.06005 = 0.31."""
    async with sandbox_api() as api:
        payout = await api.payout("12.01")
        await api.client.post(f"/sandbox/transactions/{payout['id']}/confirm")
        assert (await api.tx(payout["id"]))["fee_amount"] is None
        await api.advance(60)
        record = await api.tx(payout["id"])
        assert (record["state"], record["fee_amount"]) == (6, Decimal("0.31"))


async def test_a_reversed_payout_keeps_the_fee_it_was_charged() -> None:
    """A settled payout that the bank reverses (6 -> 3) keeps its fee and fee_id: money out for
    a payout that did not pay."""
    async with sandbox_api() as api:
        payout = await api.payout("10.00")
        await api.advance(60)
        settled = await api.tx(payout["id"])
        await api.client.post(f"/sandbox/transactions/{payout['id']}/reverse", json={"state": 3})
        reversed_ = await api.tx(payout["id"])
        assert reversed_["state"] == 3
        assert (reversed_["fee_amount"], reversed_["fee_id"]) == (
            settled["fee_amount"],
            settled["fee_id"],
        )
