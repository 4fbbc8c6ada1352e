"""The provider's fee on each payout: what its answers charged, against the agreed price.

A fee is the provider's price for a payout, charged in the payout's currency and kept in minor
units; it is money out, added to the payout, never netted from it. The latest answer about a
payout says its fee (none: no fee yet); a payout not answered tonight keeps the fee its latest
answer said. Where the configuration states prices (:mod:`recon.reconcile.pricing`), three checks
run; without any, fees are reported and never checked:

- ``fee_mismatch``: the fee charged differs from the agreed one by more than the tolerance, over
  or under, on a payout that was not failed or aborted (the provider's export finds it too, where
  a fee row charges another fee than the payout's answer: :mod:`recon.reconcile.export_match`;
  one finding per payout holds both sides);
- ``fee_on_unpaid``: a fee charged on a failed or aborted payout: money out for nothing;
- ``fee_missing``: a settled payout an entry prices whose answers carry no fee, once the grace
  after settling has passed (the provider may add the fee later).

Each finding's facts are the fees and the entry; a later answer that corrects the fee ends it.
The money at stake is the fee's, never the payout's: the difference charged for a mismatch, the
fee charged for nothing, the agreed fee not charged.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

import numpy as np
import pandas as pd

from recon import frames as fr
from recon.constants import FAILED_OUTCOMES, SETTLED_OUTCOMES, Outcome
from recon.frames import ItemKind, Observations, PayoutsOut
from recon.money import minor_digits
from recon.reconcile.finding import Found, Kind, Mask
from recon.reconcile.outcomes import Tonight, settled_before
from recon.reconcile.pricing import FeeEntry, FeeRules, entry_for, fee_minor
from recon.reconcile.work import W, answer_col, codes, mask

_P = PayoutsOut
_PAYOUT = (ItemKind.PAYOUT,)
_FEE_FACTS = ("charged_minor", "expected_minor", "entry")
# The export's side of a fee_mismatch: the fee row naming the payout (recon.reconcile.export_match).
_EXPORT_FACTS = ("export_fee_minor", "fee_row_id")

FEE_MISMATCH = Kind(
    name="fee_mismatch",
    items=_PAYOUT,
    label="Fee differs from the price or the export",
    action=(
        "The provider charged another fee than the agreed price, or its export's fee row charges "
        "another than its answer gives: claim an overcharge back from the provider; check the "
        "price list with them for an undercharge, and ask which fee is charged."
    ),
    detail=(
        "{% if expected_minor is not none %}fee charged {{ charged_minor|money_q(currency) }}, "
        "agreed {{ expected_minor|money_q(currency) }} (price from {{ entry }}); "
        "{% if charged_minor > expected_minor %}overcharged{% else %}undercharged{% endif %} by "
        "{{ (charged_minor - expected_minor)|abs|money_q(currency) }}"
        "{% if export_fee_minor is not none %}; {% endif %}{% endif %}"
        "{% if export_fee_minor is not none %}the export's "
        "{% if ', ' in fee_row_id %}fee rows {{ fee_row_id }} charge{% else %}fee row "
        "{{ fee_row_id }} charges{% endif %} {{ export_fee_minor|money_q(currency) }}; the "
        "payout's answer gives a fee of "
        "{{ charged_minor|money_or(currency, 'none') }}{% endif %}"
    ),
    same_when=(*_FEE_FACTS, *_EXPORT_FACTS, "currency"),
    facts=(*_FEE_FACTS, "fee_id", *_EXPORT_FACTS, "currency", "at_stake_minor"),
    from_export=_EXPORT_FACTS,
)
FEE_ON_UNPAID = Kind(
    name="fee_on_unpaid",
    items=_PAYOUT,
    label="Fee on a payout that never paid",
    action=(
        "The provider charged a fee on a payout that failed or was aborted: money out for "
        "nothing; claim the fee back from the provider."
    ),
    detail=("fee {{ charged_minor|money_q(currency) }} charged on a payout now {{ state|state }}"),
    same_when=("charged_minor", "fee_id", "currency"),
    facts=("charged_minor", "fee_id", "currency", "state", "at_stake_minor"),
)
FEE_MISSING = Kind(
    name="fee_missing",
    items=_PAYOUT,
    label="No fee on a settled payout",
    action=(
        "Settled without a fee although a price applies: the provider may charge it later; ask "
        "them, and keep the agreed fee aside for the month's books."
    ),
    detail=(
        "settled {{ settled_at|time }} with no fee; agreed {{ expected_minor|money_q(currency) }}"
        " (price from {{ entry }})"
    ),
    same_when=("expected_minor", "entry", "currency"),
    facts=("expected_minor", "entry", "currency", "settled_at", "at_stake_minor"),
)


def with_fee(work: pd.DataFrame, rules: FeeRules) -> pd.DataFrame:
    """``fee_minor`` and ``fee_id``: this run's answer's where the payout was answered, else the
    fee kept from its latest answer; ``fee_expected_minor`` and ``fee_entry``: the agreed fee and
    the entry that priced it (nothing is due on a failed or aborted payout: 0)."""
    ok = work[W.OK].to_numpy(dtype=bool)
    charged = work[answer_col(Observations.FEE_AMOUNT_MINOR)].where(ok, work[_P.PREV_FEE_MINOR])
    fee_id = work[answer_col(Observations.FEE_ID)].where(ok, work[_P.PREV_FEE_ID])
    expected, entry = expected_fees(work, rules)
    unpaid = _outcome_in(work, FAILED_OUTCOMES) & expected.notna().to_numpy()
    expected = expected.mask(unpaid, 0)
    return work.assign(
        **fr.columns(
            {
                _P.FEE_MINOR: charged.astype(fr.MONEY),
                _P.FEE_ID: fee_id.astype(fr.TEXT),
                _P.FEE_EXPECTED_MINOR: expected.astype(fr.MONEY),
                _P.FEE_ENTRY: entry.astype(fr.TEXT),
            }
        )
    )


def expected_fees(frame: pd.DataFrame, rules: FeeRules) -> tuple[pd.Series, pd.Series]:
    """Per payout (``currency``, ``amount_minor``, ``created``): the agreed fee in minor units and
    the entry that prices it (its name), or <NA> where no entry does or ``created`` is unknown."""
    expected = pd.Series(pd.NA, index=frame.index, dtype=fr.MONEY)
    names = pd.Series(pd.NA, index=frame.index, dtype=fr.TEXT)
    if not rules.entries or frame.empty:
        return expected, names
    priced = {e.currency for e in rules.entries}
    rows = frame[frame[_P.CURRENCY].isin(priced).fillna(False) & frame[_P.CREATED].notna()]
    values: list[int | None] = []
    labels: list[str | None] = []
    # The creation days in the zone at once; an entry looked up once per currency and day.
    days = rows[_P.CREATED].dt.tz_convert(rules.zone).dt.date
    entries: dict[tuple[str, date], FeeEntry | None] = {}
    for currency, amount, day in zip(rows[_P.CURRENCY], rows[_P.AMOUNT_MINOR], days, strict=True):
        key = (str(currency), day)
        if key not in entries:
            entries[key] = entry_for(rules.entries, key[0], rules.account, day)
        entry = entries[key]
        if entry is None or pd.isna(amount):
            values.append(None)
            labels.append(None)
        else:
            values.append(fee_minor(entry, int(amount)))
            labels.append(entry.name())
    expected.loc[rows.index] = pd.Series(values, index=rows.index, dtype=fr.MONEY)
    names.loc[rows.index] = pd.Series(labels, index=rows.index, dtype=fr.TEXT)
    return expected, names


def _tolerance_minor(currency: pd.Series, rules: FeeRules) -> pd.Series:
    """The tolerance in minor units of each payout's currency (rounded down: exactness first)."""
    codes, currencies = pd.factorize(currency)
    # Once per currency; the appended one is where a missing currency's code (-1) lands: 2 digits.
    digits = [minor_digits(str(c)) for c in currencies] + [2]
    tolerance = np.array([int(rules.tolerance.scaleb(d)) for d in digits], dtype=np.int64)
    return pd.Series(tolerance[codes], index=currency.index, dtype=fr.MONEY)


def _checked(tonight: Tonight) -> bool:
    return bool(tonight.params.fees.entries)


def _outcome_in(work: pd.DataFrame, outcomes: tuple[Outcome, ...]) -> Mask:
    return np.isin(work[_P.OUTCOME].cat.codes.to_numpy(), codes(outcomes))


def fee_mismatch(work: pd.DataFrame, tonight: Tonight, _: Mapping[Kind, Found]) -> Found:
    """Charged and agreed both known, apart by more than the tolerance, on a payout that was not
    failed or aborted (that is ``fee_on_unpaid``)."""
    rules = tonight.params.fees
    expected, entry = work[_P.FEE_EXPECTED_MINOR], work[_P.FEE_ENTRY]
    charged = work[_P.FEE_MINOR]
    found = np.zeros(len(work), dtype=bool)
    if _checked(tonight):  # no fee agreed: no tolerance to work out per payout
        apart = (charged - expected).abs() > _tolerance_minor(work[_P.CURRENCY], rules)
        found = mask(apart) & ~_outcome_in(work, FAILED_OUTCOMES)
    return Found(
        found,
        pd.DataFrame(
            {
                "charged_minor": charged,
                "expected_minor": expected,
                "entry": entry,
                "fee_id": work[_P.FEE_ID],
                "export_fee_minor": None,
                "fee_row_id": None,
                "currency": work[_P.CURRENCY],
                "at_stake_minor": (charged - expected).abs(),
            },
            index=work.index,
        ),
    )


def fee_on_unpaid(work: pd.DataFrame, tonight: Tonight, _: Mapping[Kind, Found]) -> Found:
    """A fee above zero on a payout that is failed or aborted."""
    charged = work[_P.FEE_MINOR]
    found = _checked(tonight) & mask(charged > 0) & _outcome_in(work, FAILED_OUTCOMES)
    return Found(
        found,
        pd.DataFrame(
            {
                "charged_minor": charged,
                "fee_id": work[_P.FEE_ID],
                "currency": work[_P.CURRENCY],
                "state": work[_P.STATE],
                "at_stake_minor": charged,
            },
            index=work.index,
        ),
    )


def fee_missing(work: pd.DataFrame, tonight: Tonight, _: Mapping[Kind, Found]) -> Found:
    """Settled (or returned) with no fee, an entry prices it above zero, and the grace since it
    settled has passed."""
    rules = tonight.params.fees
    settled = _outcome_in(work, SETTLED_OUTCOMES)
    # As the store will keep it: this run's time when it turns settled now, else since before.
    was_settled = work[_P.PREV_OUTCOME].isin([o.value for o in SETTLED_OUTCOMES]).to_numpy()
    since = settled_before(work).where(~(settled & ~was_settled), tonight.as_of).where(settled)
    expected, entry = work[_P.FEE_EXPECTED_MINOR], work[_P.FEE_ENTRY]
    due = mask(since + pd.Timedelta(rules.grace) <= tonight.as_of)
    found = settled & due & work[_P.FEE_MINOR].isna().to_numpy() & mask(expected > 0)
    return Found(
        found,
        pd.DataFrame(
            {
                "expected_minor": expected,
                "entry": entry,
                "currency": work[_P.CURRENCY],
                "settled_at": since,
                "at_stake_minor": expected,
            },
            index=work.index,
        ),
    )
