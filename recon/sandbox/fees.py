"""The sandbox's fee on a payout: its schedule's price, rounded half-even to the minor unit.

``fixed + amount * percent / 100``, computed exactly (a context whose precision holds any
amount's digits), then rounded once to the currency's minor unit (``ROUND_HALF_EVEN``): 0.25 +
0.50 % of 100.00 EUR is 0.75; of 1001 JPY (no decimals) 5.255 rounds to 5. ``fixed`` is in the
payout's own currency, whatever it is. An overcharge (the sandbox amount 15.01) is the rounded fee
doubled, so it is exactly twice the agreed price.
"""

from __future__ import annotations

from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal

from recon.money import minor_digits
from recon.sandbox.config import FeeSchedule

_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
_HUNDRED = Decimal(100)


def fee_for(schedule: FeeSchedule, amount: Decimal, currency: str, *, factor: int = 1) -> Decimal:
    """The fee charged on a payout of ``amount`` in ``currency`` (``factor`` 2: overcharged)."""
    price = _EXACT.add(
        schedule.fixed, _EXACT.divide(_EXACT.multiply(amount, schedule.percent), _HUNDRED)
    )
    unit = Decimal(1).scaleb(-minor_digits(currency))
    rounded = price.quantize(unit, rounding=ROUND_HALF_EVEN, context=_EXACT)
    return _EXACT.multiply(rounded, Decimal(factor))
